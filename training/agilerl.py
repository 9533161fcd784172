"""AgileRL on cardzoo (``pip install cardzoo[agilerl]``): ``make_env("rope_team")`` is a PettingZoo ParallelEnv
whose observations are the plain vectors and whose infos carry each agent's mask under ``"action_mask"``, where
AgileRL's multi-agent algorithms (IPPO, MADDPG, MATD3: ``agent.get_action(obs, infos=info)``) read it.

A cardzoo observation is PettingZoo's ``{"observation", "action_mask"}`` dict; AgileRL wants the mask beside it,
in the info dict, so :class:`ActionMaskInInfos` moves it there. The env itself is unchanged.

Summit Rush is Parallel already. The turn-based games (Rope Team, Rook) go through PettingZoo's
``turn_based_aec_to_parallel``: at each step every seat submits an action and only the seat to move has its action
played; the other seats' masks are all zero (nothing they choose is applied), and ``info["active_agent"]`` names
the seat to move.
"""

from __future__ import annotations

from pettingzoo.utils.conversions import turn_based_aec_to_parallel
from pettingzoo.utils.wrappers import BaseParallelWrapper


class ActionMaskInInfos(BaseParallelWrapper):
    """See the module docstring: observations are the ``observation`` part, infos gain ``action_mask``."""

    def observation_space(self, agent):
        return self.env.observation_space(agent)["observation"]

    def reset(self, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._split(obs, infos)

    def step(self, actions):
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        obs, infos = self._split(obs, infos)
        return obs, rewards, terminations, truncations, infos

    @staticmethod
    def _split(obs: dict, infos: dict) -> tuple[dict, dict]:
        return ({agent: o["observation"] for agent, o in obs.items()},
                {agent: {**infos.get(agent, {}), "action_mask": o["action_mask"]} for agent, o in obs.items()})


def make_env(game: str, **options) -> ActionMaskInInfos:
    """``game`` ("rope_team", "rook" or "summit_rush") with the env ``options``, as a ParallelEnv for AgileRL."""
    from cardzoo.envs.registry import spec

    game = spec(game)
    if game.parallel:
        return ActionMaskInInfos(game.make(**options))
    return ActionMaskInInfos(turn_based_aec_to_parallel(game.make(**options)))
