"""Trained policies run with numpy alone: no torch needed to evaluate or play with them.

A policy file (``.npz``) holds the actor of an sb3-contrib ``MaskablePPO`` MLP policy -- the hidden layers'
weights and biases, the action layer, the activation -- and a JSON ``meta`` entry that records the env, how it was
trained (command, seed, steps, wall time) and its observation size. ``cardzoo.training.export`` writes them;
the shipped ones are in ``cardzoo/agents/policies``. A policy file is untrusted input: ``cardzoo.agents.policy_file``
checks it whole (sizes, array names, dtypes, shapes, the action width, finite values) before any array is used, and
refuses it with a ``PolicyError`` naming the file and the first problem.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cardzoo.envs.common.errors import OptionError

from .policy_file import ACTIVATIONS, read_policy


def shipped_policy(name: str) -> Path:
    """The path of a policy shipped with the package, e.g. ``shipped_policy("rope_team")``."""
    path = Path(str(resources.files("cardzoo.agents") / "policies" / f"{name}.npz"))
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.npz"))
        raise OptionError(f"no shipped policy {name!r}; shipped: {', '.join(known) or 'none'}")
    return path


class NumpyPolicy:
    """The actor network of a policy file."""

    def __init__(self, path: str | Path):
        policy = read_policy(path)  # every check first: a policy file is untrusted input
        self.meta: dict[str, Any] = policy.meta
        self.digest = policy.digest  # which weights, for result caches
        self.weights, self.action = policy.weights, policy.action
        self.observation_size = self.meta["observation_size"]  # of the env's observation vector
        self.activation = ACTIVATIONS[self.meta["activation"]]
        self.features = None
        if self.meta.get("features"):
            from .features import FEATURES

            self.features, extra = FEATURES[self.meta["features"]]
            self.observation_size -= extra

    def inputs(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """What the network reads: the observation, or the features the policy was trained on."""
        return observation if self.features is None else self.features(observation, action_mask)

    def logits(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        x = self.inputs(observation, action_mask).astype(np.float32)
        for w, b in self.weights:
            x = self.activation(x @ w + b)
        w, b = self.action
        return x @ w + b

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked action distribution (as MaskablePPO computes it: illegal logits set to -1e8)."""
        logits = np.where(action_mask.astype(bool), self.logits(observation, action_mask), np.float32(-1e8))
        z = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)


class LearnedAgent:
    """Plays a trained policy: the most probable legal action, or a sample with ``sample=True``.

    Given several policy files, it plays the one made for the setting it is in (Summit Rush's levels have
    observations of different lengths, so each level has its own policy); a setting with no policy of its own is
    mapped to the nearest one that can read it, or played by ``fallback`` (an agent) -- see
    :mod:`cardzoo.agents.policy_choice`. Without a fallback such a setting raises ``OptionError``. ``description``
    says which policy plays which setting; ``chosen`` holds the label of every choice made so far.
    """

    name = "learned"

    def __init__(self, path: str | Path | list[str | Path], sample: bool = False, seed: int | None = None,
                 fallback=None, fallback_name: str = ""):
        from cardzoo.envs.registry import by_env_id

        from .policy_choice import ExactChoice

        paths = path if isinstance(path, list) else [path]
        self.policies = {}
        names = {}
        for p in paths:
            policy = NumpyPolicy(p)
            self.policies[policy.observation_size] = policy
            names[policy.observation_size] = Path(p).stem
        self.policy = next(iter(self.policies.values()))
        game = by_env_id().get(self.policy.meta.get("env"))
        chooser = ExactChoice if game is None else game.load("policy_choice")
        self.chooser = chooser(self.policies, names)
        self.fallback = fallback
        fallback_name = fallback_name or getattr(fallback, "name", "fallback")
        self.fallback_label = f"{fallback_name} agent (fallback, not a trained policy)"
        self.chosen: set[str] = set()
        self.sample = sample
        self.rng = np.random.default_rng(seed)

    @property
    def description(self) -> str:
        played, rest = self.chooser.describe()
        if not rest:
            return played
        if self.fallback is None:
            return f"{played}; nothing else (OptionError): {rest}"
        return f"{played}; the {self.fallback_label} in every other setting: {rest}"

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if self.fallback is not None:
            self.fallback.reset(seed)

    def _policy_for(self, observation: np.ndarray, action_mask: np.ndarray):
        choice = self.chooser.choose(observation, action_mask)
        if choice is None and self.fallback is None:
            raise OptionError(f"no policy for observations of length {observation.shape[0]} with "
                              f"{action_mask.shape[0]} actions; this agent has policies for lengths "
                              f"{sorted(self.policies)} (another level or variant of the game?)")
        return choice

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if not action_mask.any():
            raise ValueError("the action mask has no legal action: this agent is not to move")
        choice = self._policy_for(observation, action_mask)
        if choice is None:
            self.chosen.add(self.fallback_label)
            return self.fallback.act(observation, action_mask)
        self.chosen.add(choice.label)
        policy, obs, mask = choice.policy, choice.observation(observation), choice.mask(action_mask)
        if self.sample:
            p = policy.probabilities(obs, mask)
            return choice.action(int(self.rng.choice(len(p), p=p)))
        logits = policy.logits(obs, mask)
        return choice.action(int(np.argmax(np.where(mask.astype(bool), logits, -np.inf))))
