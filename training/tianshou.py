"""Tianshou 2.x on cardzoo (``pip install cardzoo[tianshou]``): ``make_env("rope_team")`` is Tianshou's
``PettingZooEnv`` of a cardzoo game, with infos Tianshou's replay buffer can hold.

Tianshou stores every step's info in its buffer and stops training on a missing value (``MalformedBufferError:
Encountered NaNs``). A cardzoo game's info is empty during play and, at the end, holds strings (``outcome``),
``None`` (e.g. Rope Team's ``win_deal`` in a lost game) and nested lists (Rook's ``history``). The wrapper hands
Tianshou flat numbers instead (see :func:`numeric_info`); the env itself keeps PettingZoo's plain infos.

The observation Tianshou's policies see is ``{"agent_id", "obs", "mask"}``: DQN and the multi-agent
dispatcher (``MultiAgentOffPolicyAlgorithm``) read the mask, so no illegal action is ever chosen.
"""

from __future__ import annotations

from numbers import Number

from tianshou.env.pettingzoo_env import PettingZooEnv


def numeric_info(info: dict) -> dict[str, float]:
    """Numbers as floats, a string value as a one-hot key (``outcome: "win"`` -> ``outcome_win: 1.0``; the buffer
    fills keys absent from a step with 0), a flat list of numbers as one key per entry (``totals_0``,
    ``totals_1``); ``None`` and nested values are dropped."""
    flat = {}
    for key, value in info.items():
        if isinstance(value, Number):
            flat[key] = float(value)
        elif isinstance(value, str):
            flat[f"{key}_{value}"] = 1.0
        elif isinstance(value, (list, tuple)) and all(isinstance(v, Number) for v in value):
            flat.update({f"{key}_{i}": float(v) for i, v in enumerate(value)})
    return flat


class TianshouEnv(PettingZooEnv):
    """Tianshou's ``PettingZooEnv`` whose infos are :func:`numeric_info`."""

    def reset(self, *args, **kwargs):
        obs, info = super().reset(*args, **kwargs)
        return obs, numeric_info(info)

    def step(self, action):
        obs, rewards, terminated, truncated, info = super().step(action)
        return obs, rewards, terminated, truncated, numeric_info(info)


def make_env(game: str, **options) -> TianshouEnv:
    """The AEC env of ``game`` ("rope_team", "rook" or "summit_rush") with ``options``, for Tianshou."""
    from cardzoo.envs.common.record import make_env

    return TianshouEnv(make_env(f"{game}_v0", **options))
