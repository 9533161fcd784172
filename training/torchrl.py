"""TorchRL on cardzoo (``pip install cardzoo[torchrl]``): ``make_env("rope_team")`` is TorchRL's
``PettingZooWrapper`` of a cardzoo game with the action masks in the data and every seat in one group.

The seats form one group, ``"agents"`` (a shared policy, the usual choice for the cooperative games; in Rook it is
self-play). The data then holds, per step and seat: ``("agents", "observation", "observation")`` (int8; cast to
float for a network), ``("agents", "action_mask")`` for ``MaskedCategorical``, ``("agents", "action")``,
``("agents", "reward")`` and ``("agents", "mask")``, the seats that moved (in a turn-based game, the one whose turn
it was: the others' actions are not applied).
"""

from __future__ import annotations

from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType


def make_env(game: str, seed: int = 0, **options) -> PettingZooWrapper:
    """``game`` ("rope_team", "rook" or "summit_rush") with the env ``options``; Summit Rush in its Parallel form."""
    from cardzoo.envs.registry import spec

    env = spec(game).make(**options)  # a Parallel game in its Parallel form, the others as AEC
    return PettingZooWrapper(env, use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
                             categorical_actions=True, seed=seed)
