"""Blueprints of the Rope Team search: the policy it searches on, read as rollouts and as a partner model.

A blueprint gives the search (:mod:`cardzoo.agents.rope_team_search`) three things:

- ``act_bits(bits, legal)``: its own card at the searching seat's decision (the card the search keeps unless another
  beats it by the threshold);
- ``rollout_policy``: the batched policy ``obs[N, 464], mask[N, 52] -> cards[N]`` that plays both seats of every
  rollout (None: the simple strategy on the rollouts' own arrays, the fast path);
- ``probabilities(games, cards)``: the probability that the blueprint, in the seat to move of each row of a
  :class:`~cardzoo.agents.rope_team_rollouts.Games` batch, plays ``cards[row]`` -- the partner model, evaluated in
  every sampled world at once (the search builds each row at one of the partner's earlier plays this deal, from that
  play's public table and the world's hands).

:class:`SimpleBlueprint` is the simple strategy: probability 1 for its card, 0 for the others. Its best card on a
follow depends on the table alone, so the search can leave out of the partner's hand the cards it would have
preferred (``exact_exclusion``) and need not build the rows for follows; this is the behaviour of the ``search``
agent.

:class:`LearnedBlueprint` is a trained numpy policy (a ``.npz`` file, a shipped policy's name, or the policy of a
registry name: :func:`cardzoo.agents.registry.rope_team_policy` ``("learned")``): it plays its most probable legal
card (as :class:`~cardzoo.agents.learned.LearnedAgent`), its rollouts are that argmax over the rows' observations
(:meth:`Games.observe`, the env's observation bit for bit) and its partner model is the softmax of its logits over
the legal cards of the partner's observation in each world. Nothing about a trained policy's preferences is exact
without its observation, so the search draws the partner's hand from
all the cards it may hold and lets the likelihood weight them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rope_team.observer import LAYOUT

from .batched_features import batched
from .learned import NumpyPolicy, shipped_policy
from .rope_team_rollouts import Games, Policy
from .rope_team_simple import RopeTeamSimple


class BatchedPolicy:
    """A :class:`NumpyPolicy` over rows: its features in their array form (:mod:`.batched_features`), equal row for
    row to the one-row features the policy reads in :class:`LearnedAgent`."""

    def __init__(self, policy: NumpyPolicy):
        self.policy = policy
        self.features = None if policy.meta.get("features") is None else batched(policy.meta["features"])

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = (obs if self.features is None else self.features(obs, mask)).astype(np.float32)
        for w, b in self.policy.weights:
            x = self.policy.activation(x @ w + b)
        w, b = self.policy.action
        return x @ w + b

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float[N, 52]: the masked action distribution of each row (as :meth:`NumpyPolicy.probabilities`)."""
        logits = np.where(mask.astype(bool), self.logits(obs, mask), np.float32(-1e8))
        z = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """int64[N]: each row's most probable legal card."""
        return np.argmax(np.where(mask.astype(bool), self.logits(obs, mask), -np.inf), axis=1).astype(np.int64)


class SimpleBlueprint:
    """The simple strategy as the search's blueprint (see the module docstring)."""

    name = "simple"
    exact_exclusion = True  # its follows' preferences depend on the table alone

    def __init__(self, rollout_policy: Policy | None = None):
        self.strategy = RopeTeamSimple()
        self.rollout_policy = rollout_policy

    def reset(self) -> None:
        self.strategy.reset()

    def act_bits(self, bits: int, legal: int) -> int:
        return self.strategy.act_bits(bits, legal)

    def probabilities(self, games: Games, cards: np.ndarray) -> np.ndarray:
        return (games.choose() == cards).astype(float)


class LearnedBlueprint:
    """A trained numpy policy as the search's blueprint (see the module docstring)."""

    exact_exclusion = False

    def __init__(self, spec: str | Path | NumpyPolicy):
        self.policy = _policy(spec)
        self.name = f"policy {self.policy.digest}"
        self.batched = BatchedPolicy(self.policy)
        self.rollout_policy = self.batched

    def reset(self) -> None:
        pass

    def act_bits(self, bits: int, legal: int) -> int:
        obs = LAYOUT.to_array(bits)
        mask = np.array([legal >> c & 1 for c in range(52)], np.int8)
        logits = self.policy.logits(obs, mask)
        return int(np.argmax(np.where(mask.astype(bool), logits, -np.inf)))

    def probabilities(self, games: Games, cards: np.ndarray) -> np.ndarray:
        obs, mask = games.observe()
        return self.batched.probabilities(obs, mask)[np.arange(len(cards)), cards].astype(float)


def _policy(spec) -> NumpyPolicy:
    """The numpy policy of a ``.npz`` path or a shipped policy's name (``"rope_team_v2"``), or the policy itself."""
    if isinstance(spec, NumpyPolicy):
        policy = spec
    elif str(spec).endswith(".npz"):
        policy = NumpyPolicy(spec)
    else:
        try:
            policy = NumpyPolicy(shipped_policy(str(spec)))
        except OptionError as e:
            raise OptionError(f"blueprint={spec!r}: not 'simple', a .npz policy file or a shipped policy ({e}); a "
                              "registry name: cardzoo.agents.registry.rope_team_policy(name)") from None
    if policy.meta.get("env") != "rope_team_v0":
        raise OptionError(f"blueprint={str(spec)!r} was trained on {policy.meta.get('env')}, not rope_team_v0")
    return policy


def make_blueprint(blueprint, rollout_policy: Policy | None = None):
    """The blueprint a search option names: None or ``"simple"`` (the simple strategy, rolled out by
    ``rollout_policy`` if given); a :class:`NumpyPolicy`, a ``.npz`` file or a shipped policy's name (a learned
    blueprint); or a blueprint object."""
    if blueprint is None or (isinstance(blueprint, str) and blueprint == "simple"):
        return SimpleBlueprint(rollout_policy)
    if isinstance(blueprint, (str, Path, NumpyPolicy)):
        if rollout_policy is not None:
            raise OptionError("rollout_policy goes with the simple blueprint; a learned blueprint rolls out itself")
        return LearnedBlueprint(blueprint)
    if all(hasattr(blueprint, a) for a in ("act_bits", "probabilities", "rollout_policy", "exact_exclusion", "reset")):
        return blueprint
    raise OptionError(f"blueprint must be 'simple', a numpy policy, a .npz policy file or a shipped policy's name, "
                      f"got {blueprint!r}")
