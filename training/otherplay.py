"""Other-play (Hu et al. 2020, "Other-Play for Zero-Shot Coordination") for the batched trainer.

Self-play with one shared network lets the two seats agree on arbitrary conventions -- in Rope Team, which suit
means what -- that a stranger does not share. Other-play trains against the partner seen through a random
symmetry of the game: at the start of every game each seat of each slot draws one of the game's relabellings
(``GameSpec.symmetries``; Rope Team: the 24 permutations of the suits, ``cardzoo.envs.rope_team.symmetry``), and
sees that whole game through it -- its observations and legal moves relabelled, its chosen action mapped back to
the real card before the engine plays it. A convention that names a suit then means a different suit to the
partner in 23 games of 24, so only suit-free conventions pay; the game itself is unchanged by the relabelling, so
nothing else is lost. Two independent draws per game (rather than one seat fixed to the identity) keep the seats
alike: what a seat sees does not tell which seat it is.

:class:`OtherPlay` wraps the trainer's ``Engines`` with the same interface (``reset``, ``step``, ``inputs``,
``wins``): the PPO loop stores what the network saw and chose, both in the seat's relabelled frame, so the update
needs no change. Evaluation plays the real game (no relabelling), as every agent does.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.registry import spec as game_spec


class OtherPlay:
    """``engines`` (the batched trainer's ``Engines`` of ``game``) with each seat's view relabelled per game."""

    def __init__(self, engines, game: str, seed: int):
        spec = game_spec(game)
        if spec.symmetries is None:
            raise ValueError(f"other-play needs the game's symmetries; {game} declares none")
        self.engines = engines
        self.obs_index, self.card_map = spec.load("symmetries")()  # [K, O] gathers, [K, A] action -> relabelled
        self.inverse = np.argsort(self.card_map, axis=1)  # relabelled action -> real action
        self.rng = np.random.default_rng([seed, 0x07E4])
        self.draws: np.ndarray | None = None  # int[N, 2]: each slot's relabelling per seat, this game
        self.seat: np.ndarray | None = None

    def __getattr__(self, name):  # features, engines, ... of the wrapped Engines
        return getattr(self.engines, name)

    def _draw(self, slots: np.ndarray) -> None:
        self.draws[slots] = self.rng.integers(len(self.card_map), size=(len(slots), 2))

    def relabel(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's observation and mask as the seat to move sees them this game."""
        k = self.draws[np.arange(len(seat)), seat]
        obs = np.take_along_axis(obs, self.obs_index[k], axis=1)
        # new[card_map[a]] = mask[a]: the relabelled mask reads mask[inverse[b]] at b
        mask = np.take_along_axis(mask, self.inverse[k], axis=1)
        return obs, mask

    def reset(self):
        obs, mask, seat = self.engines.reset()
        self.draws = np.zeros((len(seat), 2), np.int64)
        self._draw(np.arange(len(seat)))
        self.seat = seat
        return (*self.relabel(obs, mask, seat), seat)

    def real_actions(self, actions: np.ndarray) -> np.ndarray:
        """The cards the seats to move chose, from their relabelled choices ``actions``."""
        k = self.draws[np.arange(len(actions)), self.seat]
        return self.inverse[k, actions]

    def step(self, actions: np.ndarray):
        obs, mask, seat, rewards, done = self.engines.step(self.real_actions(np.asarray(actions)))
        self._draw(np.flatnonzero(done))  # the slots whose next game began
        self.seat = seat
        return (*self.relabel(obs, mask, seat), seat, rewards, done)

    def inputs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.engines.inputs(obs, mask)

    def wins(self, done: np.ndarray) -> np.ndarray:
        return self.engines.wins(done)

