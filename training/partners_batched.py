"""Partner play for the batched trainer (Rope Team): some games pair the learner with the simple strategy.

Self-play alone lets one network agree with itself on when to pull, brake or trump -- conventions a stranger does
not share (issue 28: ``learned`` loses 3-6 points with an independently written greedy partner, and its gap from
self-play in the benchmark is several times the simple strategy's). Here a share of the game slots
(``--partner-share``) seat the learner in one seat, drawn per game, and the simple strategy in the other; the other
slots stay self-play. The partner is the simple strategy's choice as the ``rope_team_scores`` features read it (their
one-hot of its card, the memory-less form the features compute from the observation), so it costs no extra work.
It is the benchmark's dev-pool member ``simple``, never a test-pool member.

The partner's steps are transparent to the learner's trajectory as an opponent's are in two-sided training
(``cardzoo.training.versus_batched``: its rewards are carried back to the learner's previous decision,
``versus_advantages``), and the PPO update reads the learner's rows only.
"""

from __future__ import annotations

import numpy as np

from cardzoo.agents.features import FEATURES

FEATURE = "rope_team_scores"


class PartnerEngines:
    """``engines`` (ppo_batched's ``Engines``, with the ``rope_team_scores`` features) with the simple strategy as
    the partner in a ``share`` of the slots."""

    def __init__(self, engines, share: float, seed: int):
        self.engines = engines
        self.n = sum(e.num_envs for e in engines.engines)
        self.slots = np.arange(self.n)
        self.rng = np.random.default_rng([seed, 0x9A27])
        self.share = share
        self.partnered = np.zeros(self.n, bool)  # the current game of each slot has the simple partner
        self.me = np.zeros(self.n, np.int64)  # the learner's seat in partnered games
        self.learner = np.ones(self.n, bool)
        self._inputs = self._obs = self.mask = None
        self.seat = None
        size = engines.engines[0].observation_size
        self._choice = slice(size + 52, size + 104)  # the features' one-hot of the simple strategy's card
        if FEATURES[FEATURE][1] != 104:
            raise ValueError(f"the partner reads {FEATURE}'s last 52 entries; their layout changed")

    def _draw(self, slots: np.ndarray) -> None:
        self.partnered[slots] = self.rng.random(len(slots)) < self.share
        self.me[slots] = self.rng.integers(2, size=len(slots))

    def _mark(self, obs, mask, seat) -> None:
        self._obs, self.mask, self.seat = obs, mask, seat
        self.learner = ~self.partnered | (seat == self.me)

    def reset(self):
        obs, mask, seat = self.engines.reset()
        self._draw(self.slots)
        self._mark(obs, mask, seat)
        return obs, mask, seat

    def inputs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = self.engines.inputs(obs, mask)
        if obs is self._obs:  # kept for the partner's choice in the next step
            self._inputs = x
        return x

    def step(self, actions: np.ndarray):
        theirs = np.flatnonzero(~self.learner)
        actions = np.array(actions, copy=True)
        if len(theirs):
            x = self._inputs if self._inputs is not None else self.engines.inputs(self._obs, self.mask)
            actions[theirs] = x[theirs, self._choice].argmax(axis=1)
        self._inputs = None
        obs, mask, seat, rewards, done = self.engines.step(actions)
        self._draw(np.flatnonzero(done))
        self._mark(obs, mask, seat)
        return obs, mask, seat, rewards, done

    def wins(self, done: np.ndarray) -> np.ndarray:
        return self.engines.wins(done)

    def learner_inputs(self) -> np.ndarray:
        """What the network reads of every slot's game from the learner's seat now (with no legal action where the
        partner is to move): the bootstrap at the end of a rollout."""
        views = []
        for k, engine in enumerate(self.engines.engines):
            first = sum(e.num_envs for e in self.engines.engines[:k])
            rows = slice(first, first + engine.num_envs)
            seat = np.where(self.learner[rows], self.seat[rows], self.me[rows])
            views.append(engine._observe(np.arange(engine.num_envs), seat))
        obs = np.concatenate(views)
        return self.engines.inputs(obs, np.where(self.learner[:, None], self.mask, 0).astype(np.int8))
