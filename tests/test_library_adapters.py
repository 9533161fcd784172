"""The adapters for Tianshou and AgileRL hand the library what it documents it reads, on every game's real data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cardzoo.agents import RandomAgent

GAMES = ("rope_team", "summit_rush", "rook")


def end_info(game: str, seed: int) -> dict:
    """A random game's final info, as the env hands it out."""
    from cardzoo.envs.common.record import make_env

    env = make_env(f"{game}_v0", **({"rounds": 2} if game == "rook" else {}))
    env.reset(seed=seed)
    agent = RandomAgent(seed)
    for _ in env.agent_iter():
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            return info
        env.step(agent.act(obs["observation"], obs["action_mask"]))


@pytest.mark.parametrize("game", GAMES)
def test_numeric_info_is_flat_finite_numbers(game):
    """Tianshou's buffer takes numbers only: the raw end infos hold strings, None and nested lists."""
    from cardzoo.training.tianshou import numeric_info

    for seed in range(3):
        raw = end_info(game, seed)
        flat = numeric_info(raw)
        assert all(type(v) is float and math.isfinite(v) for v in flat.values()), flat
        assert flat[f"outcome_{raw['outcome']}"] == 1.0
        for key, value in raw.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert flat[key] == value
    rook = numeric_info(end_info("rook", 0))
    assert "history" not in rook and {"totals_0", "totals_1"} <= set(rook)


def test_numeric_info_drops_what_cannot_be_a_number():
    from cardzoo.training.tianshou import numeric_info

    info = {"outcome": "win", "win_deal": None, "totals": [10, -5], "history": [{"round": 1}], "bids": [[0, None]],
            "ticks": 7, "made": True}
    assert numeric_info(info) == {"outcome_win": 1.0, "totals_0": 10.0, "totals_1": -5.0, "ticks": 7.0, "made": 1.0}


@pytest.mark.parametrize("game", GAMES)
def test_tianshou_env_infos_carry_no_missing_values(game):
    """Tianshou's own buffer check (``hasnull``, the one that raises ``Encountered NaNs``) passes on games played
    to the end through the adapter, with several games ending in one buffer."""
    from tianshou.data import Batch, ReplayBuffer

    from cardzoo.training.tianshou import make_env

    env = make_env(game, **({"rounds": 1} if game == "rook" else {}))
    buffer = ReplayBuffer(5000)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    ended = 0
    while ended < 3:
        action = int(rng.choice(np.flatnonzero(obs["mask"])))
        next_obs, rewards, terminated, truncated, info = env.step(action)
        buffer.add(Batch(obs=obs, act=action, rew=np.array(rewards, dtype=float), terminated=terminated,
                         truncated=truncated, obs_next=next_obs, info=info))
        obs = next_obs
        if terminated or truncated:
            ended += 1
            obs, info = env.reset()
    assert not buffer.hasnull()


@pytest.mark.parametrize("game", GAMES)
def test_agilerl_env_puts_the_mask_in_infos(game):
    """AgileRL's documented interface: ``info[agent]["action_mask"]`` (1 = legal) shaped like the action space,
    and the observation a plain array of the observation space. Played to the end with masked random actions
    under illegal_action="raise": the mask in infos is the env's own."""
    from cardzoo.training.agilerl import make_env

    env = make_env(game, illegal_action="raise", **({"rounds": 1} if game == "rook" else {}))
    obs, infos = env.reset(seed=1)
    rng = np.random.default_rng(1)
    steps = 0
    while env.agents:
        actions = {}
        for agent in env.agents:
            mask = infos[agent]["action_mask"]
            assert obs[agent] in env.observation_space(agent)
            assert mask.shape == (env.action_space(agent).n,) and set(np.unique(mask)) <= {0, 1}
            legal = np.flatnonzero(mask)
            actions[agent] = int(rng.choice(legal)) if len(legal) else 0
        movers = [a for a in env.agents if infos[a]["action_mask"].any()]
        assert movers == (env.agents if game == "summit_rush" else [env.unwrapped.agent_selection])
        obs, rewards, terminations, truncations, infos = env.step(actions)
        steps += 1
    assert steps > 5 and any(rewards.values())
