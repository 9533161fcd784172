"""PettingZoo's order-enforcing wrapper, with cardzoo's errors and a direct ``last()``."""

from __future__ import annotations

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .errors import GameOverError


class OrderEnforcing(OrderEnforcingWrapper):
    """Raises :class:`GameOverError` for a step before ``reset()`` or after every agent has left.

    PettingZoo's wrapper only warns on a step after the end, which lets a broken training loop run on silently.
    ``last()`` goes straight to the wrapped env: the inherited one reads seven attributes through
    ``__getattr__``, which costs more than the game's own step.
    """

    def step(self, action) -> None:
        if not self._has_reset:
            raise GameOverError("step() before reset(): call reset() to start a game")
        if not self.env.agents:
            raise GameOverError("the game is over and every agent has left; call reset() to play again")
        self._has_updated = True
        self.env.step(action)

    def last(self, observe: bool = True):
        if not self._has_reset:
            raise GameOverError("last() before reset(): call reset() to start a game")
        return self.env.last(observe)
