"""A trained Summit Rush policy as the search's blueprint: the numpy policy batched over rollout rows.

:class:`LearnedBlueprint` is a blueprint factory for :func:`cardzoo.agents.summit_rush_rollouts.rollout_values`
(``blueprint(config) -> policy(obs[N, O], mask[N, A]) -> actions[N]``). Given policy files (the registry's
``learned`` ones by default, or any ``.npz``), it plays, for the rows of a world config, the policy a
:class:`~cardzoo.agents.learned.LearnedAgent` with those files would play in that setting (the same choice, the same
mapping of the observation -- Expert's clock read on Hard's thermometer, say), computed for all rows at once: the
policy's input features in their array form (:mod:`cardzoo.agents.batched_features`), then the layers on the whole
batch, then the most probable legal action, as ``LearnedAgent.act`` takes it. Row ``i``'s action is the one the
agent takes on that row alone (the tests compare them on the env's own observations).

The policy is per seat: each row is one seat's observation, and that seat's action is the policy's on it. A
rollout's joint move is therefore what two ``learned`` players would do at that table -- including their collisions
(both reaching for one card) and their turns, which the rules then settle. A world's rows are silent games with a
1 s tick (the search's worlds); their observation has the length of the level's own (the clock counts ticks, not
seconds), so the policy reads them as it reads the real game's silent observation.

A setting no policy can read (untimed, three players, ``wrap=False``, custom stock or clock) is rolled out by the
simple strategy's one-step form (:class:`~cardzoo.agents.summit_rush_rollouts.SimpleBlueprint`), as the registry's
``learned`` agent falls back to the simple strategy; ``fallback_used`` says when that happened.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.observer import Observer

from .batched_features import batched
from .learned import LearnedAgent, shipped_policy
from .summit_rush_rollouts import Policy, SimpleBlueprint

SHIPPED = ("summit_rush_normal_v2", "summit_rush_hard_v2")  # the registry's `learned` for summit_rush_v0


class BatchedPolicy:
    """One policy file's actor on rows of one setting's observations (``mapping``: the observation entries it reads,
    -1 for an entry it gets as 0; None: the observation as it is)."""

    def __init__(self, policy, mapping: np.ndarray | None, label: str):
        self.policy, self.label = policy, label
        self.mapping = mapping
        self.features = batched(policy.meta["features"]) if policy.meta.get("features") else None

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.mapping is not None:
            obs = np.where(self.mapping >= 0, obs[:, np.maximum(self.mapping, 0)], 0).astype(obs.dtype)
        x = (obs if self.features is None else self.features(obs, mask)).astype(np.float32)
        p = self.policy
        for w, b in p.weights:
            x = p.activation(x @ w + b)
        w, b = p.action
        return x @ w + b

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs, mask = np.asarray(obs), np.asarray(mask)
        if obs.ndim != 2 or mask.ndim != 2 or len(obs) != len(mask):
            raise ValueError(f"the learned blueprint takes obs [N, O] and masks [N, A], got {obs.shape} and "
                             f"{mask.shape}")
        if not len(obs):
            return np.zeros(0, np.int64)
        logits = self.logits(obs, mask)
        return np.argmax(np.where(mask.astype(bool), logits, -np.inf), axis=1).astype(np.int64)


class LearnedBlueprint:
    """A blueprint factory playing the policy files ``paths`` (default: the shipped ``learned`` of Summit Rush).

    Factories with the same weights are equal (the rollouts keep one policy per factory and config)."""

    def __init__(self, paths: tuple[str | Path, ...] | None = None):
        if paths is None:
            paths = tuple(shipped_policy(n) for n in SHIPPED)
        if isinstance(paths, str | Path):
            paths = (paths,)
        if not paths:
            raise OptionError("a learned blueprint needs at least one policy file")
        self.agent = _agent(tuple(str(p) for p in paths))
        if self.agent.policy.meta.get("env") != "summit_rush_v0":
            raise OptionError(f"the policy {str(paths[0])!r} was trained on {self.agent.policy.meta.get('env')}, "
                              "not summit_rush_v0")
        self.digest = "+".join(sorted(p.digest for p in self.agent.policies.values()))
        self.fallback_used = False

    def __eq__(self, other) -> bool:
        return isinstance(other, LearnedBlueprint) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(("learned_blueprint", self.digest))

    def __call__(self, config: rules.Config) -> Policy:
        observer = Observer(config)
        if config.talk:
            raise OptionError("the search's rollouts are silent games; a learned blueprint reads silent observations")
        n_actions = config.n_actions
        probe = np.zeros(observer.size, np.int8)
        probe[observer.layout["wrap"]] = 1 if config.wrap else 0
        choice = self.agent.chooser.choose(probe, np.ones(n_actions, np.int8))
        if choice is None:
            self.fallback_used = True
            return SimpleBlueprint(config)
        # The choice's observation map, read off by mapping entry numbers (1-based: 0 stays "not read").
        index = np.asarray(choice.observation(np.arange(1, observer.size + 1, dtype=np.int64))) - 1
        identity = len(index) == observer.size and (index == np.arange(observer.size)).all()
        return BatchedPolicy(choice.policy, None if identity else index, choice.label)


@cache
def _agent(paths: tuple[str, ...]) -> LearnedAgent:
    return LearnedAgent(list(paths))
