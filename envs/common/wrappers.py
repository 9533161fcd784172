"""PettingZoo's order-enforcing wrapper, with cardzoo's errors and a direct ``last()``."""

from __future__ import annotations

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .errors import GameOverError, NotResetError
from .render import RenderBeforeResetError


class OrderEnforcing(OrderEnforcingWrapper):
    """Raises :class:`GameOverError` for a step before ``reset()`` or after every agent has left, and
    :class:`NotResetError` (also the ``AssertionError`` PettingZoo's wrapper raises) for ``observe``, ``last``,
    ``state``, ``render`` or ``agent_iter`` before ``reset()``.

    PettingZoo's wrapper only warns on a step after the end, which lets a broken training loop run on silently.
    ``last()`` goes straight to the wrapped env: the inherited one reads seven attributes through
    ``__getattr__``, which costs more than the game's own step.
    """

    def _check_reset(self, method: str, error: type[NotResetError] = NotResetError) -> None:
        if not self._has_reset:
            raise error(f"{method}() before reset(): call reset() first to start a game")

    def observe(self, agent):
        self._check_reset("observe")
        return self.env.observe(agent)

    def state(self):
        self._check_reset("state")
        return self.env.state()

    def render(self):
        self._check_reset("render", RenderBeforeResetError)
        return self.env.render()

    def agent_iter(self, max_iter: int = 2**63):
        self._check_reset("agent_iter")
        return super().agent_iter(max_iter)

    def step(self, action) -> None:
        self._check_reset("step")
        if not self.env.agents:
            raise GameOverError("the game is over and every agent has left; call reset() to play again")
        self._has_updated = True
        self.env.step(action)

    def last(self, observe: bool = True):
        self._check_reset("last")
        return self.env.last(observe)
