"""The batched features (cardzoo.agents.batched_features) equal the scalar ones (cardzoo.agents.features) on every
decision: thousands of decisions per setting, from games played by the batched engines with the feature's own
strategy mixed with random moves (so both the strategy's tables and odd ones are met)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.agents.batched_features import BATCHED
from cardzoo.agents.features import FEATURES
from cardzoo.agents.rook_heuristic import RookHeuristic
from cardzoo.envs import rook_v0
from cardzoo.envs.batched import make_batched
from cardzoo.envs.rook.observer import LAYOUT as ROOK_LAYOUT
from cardzoo.envs.summit_rush.rules import N_MESSAGES

ROPE = "rope_team_v0"
SUMMIT = "summit_rush_v0"
ROOK = "rook_v0"  # played in the single env: every phase of whole games (rounds to the target score)
# feature -> (engine, options) of the settings its decisions come from
CASES = [
    *[("rope_team_scores", ROPE, {"level": level}) for level in ("easy", "normal", "hard", "expert")],
    ("rope_team_scores", ROPE, {"level": "hard", "open_hands": True, "max_deals": 1}),
    *[("summit_rush_simple", SUMMIT, {"level": level, "talk": False}) for level in ("normal", "hard", "expert")],
    ("summit_rush_simple", SUMMIT, {"level": "normal", "talk": False, "players": 3}),
    ("summit_rush_simple", SUMMIT, {"level": "hard", "talk": False, "wrap": False}),
    *[("summit_rush_simple_exact", SUMMIT, {"level": level, "talk": False}) for level in ("normal", "hard", "expert")],
    ("summit_rush_simple_exact", SUMMIT, {"level": "hard", "talk": False, "players": 3}),
    ("summit_rush_simple_exact", SUMMIT, {"level": "normal", "talk": False, "time_limit": None}),
    *[("summit_rush_simple_talk", SUMMIT, {"level": level, "talk": True}) for level in ("normal", "hard", "expert")],
    ("summit_rush_simple_talk", SUMMIT, {"level": "normal", "talk": True, "players": 3}),
    ("rook_heuristic", ROOK, {}),
    ("rook_heuristic", ROOK, {"rounds": 1}),
]


def strategy_action(feature: str, features: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The action of the strategy a feature describes, read from the feature's own one-hot part."""
    extra = features[:, obs.shape[1]:]
    if feature == "rope_team_scores":
        return extra[:, 52:].argmax(axis=1)
    if feature == "summit_rush_simple_talk":
        n_moves = mask.shape[1] // N_MESSAGES
        return extra[:, n_moves:].argmax(axis=1) * n_moves + extra[:, :n_moves].argmax(axis=1)
    return extra.argmax(axis=1)


def decisions(feature: str, env: str, options: dict, games: int, steps: int, seed: int, p_random: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """Every (observation, mask) met in ``games`` games over ``steps`` decisions each, the strategy playing and a
    random legal move instead with probability ``p_random``."""
    if env == ROOK:
        return rook_decisions(options, games, steps, seed, p_random)
    engine = make_batched(env, games, **options)
    obs, mask, _ = engine.reset(seeds=seed)
    rng = np.random.default_rng(seed)
    seen_obs, seen_mask = [], []
    for _ in range(steps):
        seen_obs.append(obs)
        seen_mask.append(mask)
        chosen = strategy_action(feature, BATCHED[feature](obs, mask), obs, mask)
        random = (mask * rng.random(mask.shape)).argmax(axis=1)
        obs, mask, *_ = engine.step(np.where(rng.random(games) < p_random, random, chosen))
    return np.concatenate(seen_obs), np.concatenate(seen_mask)


def rook_decisions(options: dict, games: int, steps: int, seed: int, p_random: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The same from Rook games in the single env, the heuristic playing (a Rook game runs to its end, so the
    decisions of ``games`` games are drawn a few per game along ``steps * games`` decisions)."""
    rng = np.random.default_rng(seed)
    heuristic = RookHeuristic()
    seen_obs, seen_mask = [], []
    game = 0
    while len(seen_obs) < games * steps:
        env = rook_v0.env(**options)
        env.reset(seed=seed + game)
        game += 1
        for _ in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if len(seen_obs) == games * steps:
                break
            seen_obs.append(o["observation"])
            seen_mask.append(o["action_mask"])
            legal = np.flatnonzero(o["action_mask"])
            move = rng.choice(legal) if rng.random() < p_random else heuristic.act(o["observation"], o["action_mask"])
            env.step(int(move))
    return np.array(seen_obs), np.array(seen_mask)


def scalar(feature: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.stack([FEATURES[feature][0](o, m) for o, m in zip(obs, mask, strict=True)])


def assert_rows_equal(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = np.flatnonzero((got != want).any(axis=1))
    assert not len(bad), f"{len(bad)} of {len(want)} rows differ, first row {bad[0]}: entries " \
                         f"{np.flatnonzero(got[bad[0]] != want[bad[0]]).tolist()}"


@pytest.mark.parametrize(("feature", "env", "options"), CASES, ids=[f"{f}-{o}" for f, _, o in CASES])
def test_equal_to_the_scalar_features(feature, env, options):
    obs, mask = decisions(feature, env, options, games=48, steps=50, seed=11, p_random=0.3)
    assert len(obs) == 2400
    if env == ROOK:  # every phase met: bid, trumps, discards, play, draw
        assert set(obs[:, ROOK_LAYOUT["phase"]].argmax(axis=1)) == set(range(5))
    assert_rows_equal(BATCHED[feature](obs, mask), scalar(feature, obs, mask))


def test_every_shipped_feature_has_an_array_form():
    from cardzoo.agents.learned import NumpyPolicy, shipped_policy

    shipped = {NumpyPolicy(shipped_policy(p.stem)).meta.get("features")
               for p in shipped_policy("rope_team").parent.glob("*.npz")} - {None}
    assert shipped == set(BATCHED) == set(FEATURES)


@settings(max_examples=12, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32), p_random=st.floats(0, 1),
       order_seed=st.integers(0, 2**32))
def test_rows_are_independent_and_equal(case, seed, p_random, order_seed):
    """Any games, any mix of moves, rows in any order and any mix of settings' phases: row i of the batched
    features depends on row i alone and equals the scalar feature."""
    feature, env, options = case
    obs, mask = decisions(feature, env, options, games=6, steps=12, seed=seed, p_random=p_random)
    order = np.random.default_rng(order_seed).permutation(len(obs))
    want = scalar(feature, obs, mask)
    assert_rows_equal(BATCHED[feature](obs[order], mask[order]), want[order])
    assert_rows_equal(BATCHED[feature](obs[order[:1]], mask[order[:1]]), want[order[:1]])


@pytest.mark.parametrize(("feature", "env", "options"), [CASES[0], CASES[5], CASES[10], CASES[15], CASES[19]])
def test_rows_without_a_legal_action_get_no_choice(feature, env, options):
    obs, mask = decisions(feature, env, options, games=4, steps=3, seed=0, p_random=0.5)
    mask = mask.copy()
    mask[::2] = 0
    got = BATCHED[feature](obs, mask)
    assert_rows_equal(got, scalar(feature, obs, mask))
    assert not got[::2, obs.shape[1]:].any()


def test_bad_input_is_refused_with_its_reason():
    from cardzoo.agents.batched_features import batched

    with pytest.raises(ValueError, match="no feature 'nope'; features: rope_team_scores"):
        batched("nope")
    obs, mask = decisions("rope_team_scores", ROPE, {}, games=2, steps=1, seed=0, p_random=0)
    with pytest.raises(ValueError, match="same N"):
        BATCHED["rope_team_scores"](obs, mask[:1])
    with pytest.raises(ValueError, match="464 entries"):
        BATCHED["rope_team_scores"](obs[:, :-1], mask)
    with pytest.raises(ValueError, match=r"\[N, O\]"):
        BATCHED["rope_team_scores"](obs[0], mask[0])
    obs, mask = decisions("summit_rush_simple", SUMMIT, {"talk": False}, games=2, steps=1, seed=0, p_random=0)
    with pytest.raises(ValueError, match="talking games"):
        BATCHED["summit_rush_simple_talk"](obs, mask)
    with pytest.raises(ValueError, match="summit_rush_simple_exact reads silent observations"):
        BATCHED["summit_rush_simple_exact"](obs[:, :-3], mask)


def test_the_batched_trainer_reads_the_array_form_and_plays_the_shipped_policy_as_the_single_env():
    """The trainer's inputs are the batched features (equal to the row loop it replaced), and its evaluation of
    the shipped Rope Team policy, which reads them, equals train.py's evaluation through the single env, game for
    game."""
    from cardzoo.training import ppo_batched
    from cardzoo.training.train import TrainConfig
    from cardzoo.training.train import evaluate as runner_evaluate

    cfg = ppo_batched.BatchedConfig(features="rope_team_scores", num_envs=8)
    engines = ppo_batched.Engines(cfg, 8, 3)
    assert engines.features is BATCHED["rope_team_scores"]
    obs, mask, _ = engines.reset()
    for _ in range(30):
        assert_rows_equal(engines.inputs(obs, mask), scalar("rope_team_scores", obs, mask))
        obs, mask, *_ = engines.step((mask * np.random.default_rng(0).random(mask.shape)).argmax(axis=1))
    shipped = "agents/policies/rope_team_v2.npz"
    assert ppo_batched.evaluate(shipped, cfg, 30) == runner_evaluate(
        shipped, TrainConfig(imitate=None, features="rope_team_scores"), 30)


@pytest.mark.parametrize("stem", ["rope_team_v2", "rope_team", "summit_rush_normal_v2", "summit_rush_hard_v2",
                                  "summit_rush_normal", "summit_rush_hard", "summit_rush_normal_talk", "rook_v2"])
def test_shipped_policies_logits_are_the_same_from_the_batched_features(stem):
    """What a shipped policy computes (its logits) is identical whether its inputs come from the batched features
    (the trainer's evaluation) or the scalar ones (LearnedAgent), on decisions of its own setting."""
    from cardzoo.agents.learned import NumpyPolicy, shipped_policy

    policy = NumpyPolicy(shipped_policy(stem))
    feature = policy.meta["features"]
    env = {"rope_team_v0": ROPE, "summit_rush_v0": SUMMIT, "rook_v0": ROOK}[policy.meta["env"]]
    options = {} if env == ROOK else {"level": policy.meta["config"]["levels"][0]} if env == SUMMIT else {}
    if env == SUMMIT:
        options["talk"] = feature == "summit_rush_simple_talk"
    obs, mask = decisions(feature, env, options, games=8, steps=25, seed=5, p_random=0.2)
    batched_inputs = BATCHED[feature](obs, mask)
    for i in range(len(obs)):
        x = batched_inputs[i]
        for w, b in policy.weights:
            x = policy.activation(x @ w + b)
        w, b = policy.action
        assert np.array_equal(x @ w + b, policy.logits(obs[i], mask[i])), f"decision {i}"
