"""The gym views pass Gymnasium's and SB3's env checkers, and SuperSuit's vector env trains with MaskablePPO."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from cardzoo.envs.common.errors import IllegalActionWarning
from cardzoo.training.gym_envs import make_view

GAMES = ("rope_team", "summit_rush", "rook")


@pytest.mark.parametrize("game", GAMES)
def test_views_pass_gymnasium_and_sb3_check_env(game):
    """Both checkers reset with seeds and step unmasked random actions: an illegal one ends the game with the
    penalty (the env's default), which the checkers accept."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        gymnasium_check_env(make_view(game), skip_render_check=True)
        sb3_check_env(make_view(game))


@pytest.mark.parametrize("game", GAMES)
def test_view_games_follow_the_seeds(game):
    """reset(seed=s) replays the same deals (and, in Rook, the same seat) whatever the view played before;
    the constructor's seed fixes the stream of unseeded resets."""
    def first_observations(view, seeds):
        return [view.reset(seed=s)[0].copy() for s in seeds] + [view.reset()[0].copy() for _ in range(3)]

    a = first_observations(make_view(game, seed=1), [5, 6])
    view = make_view(game, seed=2)
    view.reset(seed=99)
    view.step(int(np.flatnonzero(view.action_masks())[0]))
    b = first_observations(view, [5, 6])
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], a[1])
    unseeded = [make_view(game, seed=s).reset()[0] for s in (3, 3, 4)]
    assert np.array_equal(unseeded[0], unseeded[1]) and not np.array_equal(unseeded[0], unseeded[2])


def test_a_finished_view_returns_a_fresh_observation():
    """Gymnasium's checker: the observation at the end is a new array, not the one handed out a step before."""
    view = make_view("rope_team", illegal_action="raise")
    obs, _ = view.reset(seed=0)
    done = False
    while not done:
        previous = obs
        obs, _, done, _, info = view.step(int(np.flatnonzero(view.action_masks())[0]))
    assert obs is not previous and info["outcome"] in ("win", "fall", "out_of_deals")


def test_make_vec_env_rejects_an_unknown_game():
    from cardzoo.envs.common.errors import OptionError
    from cardzoo.training.sb3 import make_vec_env

    with pytest.raises(OptionError, match="unknown game 'tic_tac_toe'"):
        make_vec_env("tic_tac_toe", n_envs=1)


def test_supersuit_masks_hands_maskable_ppo_the_masks():
    """What MaskablePPO asks of a VecEnv: has_attr/env_method("action_masks") (SuperSuit's ConcatVecEnv has
    neither), the observation part of the dict, and masks that are those of the current observations."""
    import supersuit as ss
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from cardzoo.envs import summit_rush_v0
    from cardzoo.training.sb3 import SuperSuitMasks

    env = summit_rush_v0.parallel_env(illegal_action="raise")
    n_obs, n_actions = env.observation_space("player_0")["observation"].shape[0], env.action_space("player_0").n
    masked = SuperSuitMasks(ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), 2,
                                                  base_class="stable_baselines3"))
    obs = masked.reset()
    assert is_masking_supported(masked) and obs.shape == (4, n_obs) and masked.observation_space.shape == (n_obs,)
    rng, ended = np.random.default_rng(0), 0
    for _ in range(80):  # past the end of several games: the masks follow the auto-reset
        masks = get_action_masks(masked)
        assert masks.shape == (4, n_actions) and masks.any(axis=1).all() and not masks.all(axis=1).any()
        obs, _, dones, infos = masked.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        for done, info in zip(dones, infos, strict=True):
            if done:
                assert info["terminal_observation"].shape == (n_obs,)
                ended += 1
    assert ended >= 4
