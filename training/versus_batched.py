"""Two-sided games (Rook for Two) on a batched engine: the learner against an opponent pool, for ``ppo_batched``.

The SB3 path trains Rook with ``VersusEnv``: each game the learner takes a random seat and meets an opponent drawn
from the pool (``train.rook_opponent_kind``: its own earlier snapshots, the heuristic, random play); it sees only
its own decisions, and a decision's reward is what the learner's score gained from it and the opponent's replies.
Here the same games run N at a time on the batched engine, whose every step is one decision in every game, the
learner's or the opponent's. So the rollout keeps every step and marks the learner's (``learner`` rows): the
opponent's steps are transparent to the learner's trajectory (their rewards are added to the learner's previous
decision, and the value of the learner's next decision bootstraps it: :func:`versus_advantages`), and the PPO
update reads the learner's rows only.

Opponents act on their own observations and masks, as agents do: the heuristic on all its rows at once (its array
form, ``cardzoo.agents.rook_heuristic_arrays``, equal to the agent row for row), each snapshot on all its rows at
once (greedy, as ``LearnedAgent`` plays), random play uniformly over the legal actions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from cardzoo.agents.learned import NumpyPolicy
from cardzoo.agents.rook_heuristic_arrays import choices as rook_choices

from .train import rook_opponent_kind

KINDS = ("snapshot", "heuristic", "random")


class VersusEngines:
    """``engines`` (ppo_batched's ``Engines``: one engine of the game's training options) with a learner seat and
    an opponent for every game slot; ``step`` takes the learner's actions for every row and plays the opponent's
    own in the rows where it is to move."""

    def __init__(self, engines, seed: int, reward_scale: float, greedy):
        self.engines = engines
        (self.eng,) = engines.engines  # a two-sided game trains on one setting (Rook: single rounds)
        n = self.eng.num_envs
        self.slots = np.arange(n)
        self.rng = np.random.default_rng([seed, 0x7E5])
        self.reward_scale = reward_scale
        self.greedy = greedy
        self.pool: list[Path] = []  # snapshots, added at each checkpoint
        self._policies: dict[int, NumpyPolicy] = {}
        self.me = np.zeros(n, np.int64)  # the learner's seat in each slot's game
        self.kind = np.zeros(n, np.int64)  # index into KINDS
        self.snapshot = np.zeros(n, np.int64)  # index into pool, for snapshot opponents
        self.learner = np.ones(n, bool)  # whether the learner decides the current step of each slot
        self.won = np.zeros(n, bool)

    # ------------------------------------------------------------------ games
    def _draw(self, slots: np.ndarray) -> None:
        """A learner seat and an opponent for the games starting in ``slots``."""
        for i in slots.tolist():
            self.me[i] = self.rng.integers(2)
            self.kind[i] = KINDS.index(rook_opponent_kind(self.rng, len(self.pool)))
            if self.pool:
                self.snapshot[i] = self.rng.integers(len(self.pool))

    def reset(self):
        obs, mask, seat = self.engines.reset()
        self._draw(self.slots)
        self.obs, self.mask = obs, mask
        self.learner = seat == self.me
        return obs, mask, seat

    def step(self, actions: np.ndarray):
        """Play the learner's ``actions`` where it is to move and the opponents' elsewhere. Returns the engine's
        ``obs, mask, seat, done`` and ``rewards`` float64[N, 2] whose every column is the learner's (scaled) reward
        for this step, the reward of the decision it last made."""
        actions = np.where(self.learner, actions, self._opponents())
        me = self.me.copy()
        obs, mask, seat, rewards, done = self.engines.step(actions)
        mine = self.reward_scale * rewards[self.slots, me]
        self.won = done & (rewards[self.slots, me] > rewards[self.slots, 1 - me])
        ended = np.flatnonzero(done)
        if len(ended):
            self._draw(ended)
        self.obs, self.mask = obs, mask
        self.learner = seat == self.me
        return obs, mask, seat, np.stack([mine, mine], axis=1), done

    def _opponents(self) -> np.ndarray:
        """The opponents' actions in the rows where they are to move (0 elsewhere)."""
        out = np.zeros(len(self.slots), np.int64)
        theirs = ~self.learner
        obs, mask = self.obs, self.mask
        rows = np.flatnonzero(theirs & (self.kind == KINDS.index("heuristic")))
        if len(rows):  # the heuristic's choices in array operations, equal to RookHeuristic.act row for row
            out[rows] = rook_choices(obs[rows], mask[rows])
        rows = np.flatnonzero(theirs & (self.kind == KINDS.index("random")))
        if len(rows):
            weights = self.rng.random(mask[rows].shape) * mask[rows]
            out[rows] = np.argmax(weights, axis=1)
        snap = theirs & (self.kind == KINDS.index("snapshot"))
        for k in np.unique(self.snapshot[snap]).tolist():
            rows = np.flatnonzero(snap & (self.snapshot == k))
            policy = self._policies.get(k) or self._policies.setdefault(k, NumpyPolicy(self.pool[k]))
            out[rows] = self.greedy(policy, self.engines.inputs(obs[rows], mask[rows]), mask[rows])
        return out

    def wins(self, done: np.ndarray) -> np.ndarray:
        """bool[N]: the games that just ended with the learner ahead."""
        return self.won & done

    def inputs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.engines.inputs(obs, mask)

    def learner_inputs(self) -> np.ndarray:
        """What the network reads of every slot's game as the learner sees it now (its own observation, and no
        legal action when the opponent is to move): the bootstrap at the end of a rollout."""
        obs = self.eng._observe(self.slots, self.me)
        return self.engines.inputs(obs, np.where(self.learner[:, None], self.mask, 0).astype(np.int8))


def versus_advantages(rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, learner: torch.Tensor,
                      next_value: torch.Tensor, next_done: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """GAE over each slot's learner decisions only. ``rewards[t]`` is the learner's reward from step ``t`` (whoever
    moved), ``dones[t]`` whether a game ended just before step ``t``, ``learner[t]`` whether step ``t`` was the
    learner's decision. An opponent's step passes its reward back to the learner's previous decision, whose
    successor value is the learner's next decision's (``next_value`` after the rollout); a game's end cuts it.
    Entries of opponent steps are 0."""
    t_len, n = rewards.shape
    advantages = torch.zeros_like(rewards)
    carried = torch.zeros(n)  # rewards of steps after the decision being credited, up to the next decision
    following, nonterminal, last = next_value.clone(), 1.0 - next_done, torch.zeros(n)
    for t in reversed(range(t_len)):
        carried = carried + rewards[t]
        mine = learner[t]
        delta = carried + gamma * following * nonterminal - values[t]
        adv = delta + gamma * lam * nonterminal * last
        advantages[t] = torch.where(mine, adv, torch.zeros(n))
        last = torch.where(mine, adv, last)
        following = torch.where(mine, values[t], following)
        nonterminal = torch.where(mine, torch.ones(n), nonterminal)
        carried = torch.where(mine, torch.zeros(n), carried)
        ended = dones[t] > 0  # a game ended before step t: nothing after it is credited to earlier decisions
        carried, last = torch.where(ended, 0.0, carried), torch.where(ended, 0.0, last)
        nonterminal = torch.where(ended, torch.zeros(n), nonterminal)
    return advantages
