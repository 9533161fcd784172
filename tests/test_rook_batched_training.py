"""``cardzoo train rook --backend batched``: the learner against the opponent pool on the batched Rook engine
(cardzoo.training.versus_batched), doing real work."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch

from cardzoo.agents.registry import make_agent
from cardzoo.envs import rook_v0
from cardzoo.envs.common.errors import IllegalActionWarning
from cardzoo.evaluation.cli import main as cli
from cardzoo.training import ppo_batched
from cardzoo.training.cleanrl_ppo import Agent
from cardzoo.training.versus_batched import KINDS, VersusEngines, versus_advantages


def _reference_advantages(rewards, values, dones, learner, next_value, next_done, gamma, lam):
    """GAE written the plain way: each slot's learner decisions in order, a decision's reward the sum of the rewards
    from its step up to the next decision of the same game, a decision whose game ends next not bootstrapped."""
    t_len, n = rewards.shape
    out = np.zeros((t_len, n))
    for i in range(n):
        decisions, current = [], None  # [step, reward, value, its game ends before the next decision]
        for t in range(t_len):
            if dones[t, i] and current is not None:  # a game ended before step t
                current[3], current = True, None
            if learner[t, i]:
                current = [t, 0.0, values[t, i], False]
                decisions.append(current)
            if current is not None:
                current[1] += rewards[t, i]
        if current is not None and next_done[i]:
            current[3] = True
        last = 0.0
        for k in reversed(range(len(decisions))):
            t, r, v, ends = decisions[k]
            following = 0.0 if ends else decisions[k + 1][2] if k + 1 < len(decisions) else next_value[i]
            last = r + gamma * following - v + (0.0 if ends else gamma * lam * last)
            out[t, i] = last
    return out


@pytest.mark.parametrize("seed", range(5))
def test_versus_advantages_follow_each_games_learner_decisions(seed):
    rng = np.random.default_rng(seed)
    t_len, n = 40, 12
    rewards = rng.normal(size=(t_len, n)) * (rng.random((t_len, n)) < 0.3)
    values = rng.normal(size=(t_len, n))
    dones = (rng.random((t_len, n)) < 0.1).astype(float)
    dones[0] = 0
    learner = rng.random((t_len, n)) < 0.5
    next_value, next_done = rng.normal(size=n), (rng.random(n) < 0.2).astype(float)
    got = versus_advantages(*(torch.tensor(a, dtype=torch.float32) for a in (rewards, values, dones)),
                            torch.tensor(learner), torch.tensor(next_value, dtype=torch.float32),
                            torch.tensor(next_done, dtype=torch.float32), 0.99, 0.9)
    want = _reference_advantages(rewards, values, dones, learner, next_value, next_done, 0.99, 0.9)
    assert np.allclose(got.numpy(), want, atol=1e-4)
    assert not got.numpy()[~learner].any()  # the opponent's steps are learned from nowhere


@pytest.fixture
def one_torch_thread():
    """As the trainers run (--threads 1): torch's default threads spin against other jobs on a shared machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_versus_engines_play_the_pool_legally_and_credit_the_learner(tmp_path, one_torch_thread):
    """Every opponent kind plays legal moves on its own observations; the learner's rewards over a game add up to
    its share of the round (its score change less the opponent's, scaled as the SB3 path scales them)."""
    snapshot = ppo_batched.export(Agent(662, 79, (16,)), tmp_path / "snap.npz", {"env": "rook_v0", "features": None})
    cfg = ppo_batched.BatchedConfig(game="rook", num_envs=96, out=str(tmp_path))
    engines = VersusEngines(ppo_batched.Engines(cfg, 96, 0), 3, 0.01, ppo_batched.greedy)
    engines.pool.append(snapshot)
    obs, mask, seat = engines.reset()
    rng = np.random.default_rng(0)
    credited, kinds, games = np.zeros(96), set(), 0
    heuristic = make_agent("heuristic", "rook_v0")
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)  # an opponent's illegal move would end its game
        for _ in range(400):
            kinds |= {KINDS[k] for k in engines.kind.tolist()}
            me = engines.me.copy()
            assert (engines.learner == (seat == me)).all()
            learner_moves = np.argmax(rng.random(mask.shape) * mask, axis=1)
            theirs = np.flatnonzero(~engines.learner & (engines.kind == KINDS.index("heuristic")))
            expected = [heuristic.act(obs[i], mask[i]) for i in theirs]  # what the heuristic plays on its view
            obs, mask, seat, rewards, done = engines.step(learner_moves)
            for i, action in zip(theirs.tolist(), expected, strict=True):
                played = engines.eng.finished_record(i) if done[i] else engines.eng.record(i)
                assert played["actions"][-1] == action
            assert (rewards[:, 0] == rewards[:, 1]).all()
            credited += rewards[:, 0]
            for i in np.flatnonzero(done):
                score = engines.eng.finished_info(i)["history"][0]["score"]
                assert credited[i] == pytest.approx(0.01 * (score[me[i]] - score[1 - me[i]]))
                assert engines.wins(done)[i] == (score[me[i]] > score[1 - me[i]])
                credited[i], games = 0.0, games + 1
    assert kinds == set(KINDS) and games >= 300


def test_batched_rook_training_end_to_end(tmp_path):
    """A short real run: whole PPO updates on the learner's decisions, checkpoints joining the pool, evaluation
    against the heuristic; the policy file loads as an agent and plays a game."""
    out = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        cli(["train", "rook", "--backend", "batched", "--steps", "6000", "--num-envs", "128", "--num-steps", "24",
             "--minibatch-size", "512", "--eval-games", "20", "--eval-every", "3000", "--hidden", "32",
             "--threads", "1", "--out", str(out)])
    for name in ("policy.npz", "final.npz", "curve.csv", "run.json", "train.log"):
        assert (out / name).is_file(), name
    run = json.loads((out / "run.json").read_text())
    assert run["steps"] >= 6000 and run["env"] == "rook_v0" and run["profile"]["update backward"]["cpu_seconds"] > 0
    curve = (out / "curve.csv").read_text().split()
    assert curve[0].split(",")[:2] == ["steps", "seconds"] and len(curve) >= 4  # step 0, two checkpoints, the end
    agent = make_agent(str(out / "policy.npz"), "rook_v0")
    env = rook_v0.env(rounds=1)
    env.reset(seed=1)
    for _ in env.agent_iter():
        o, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(o["observation"], o["action_mask"]))
    assert env.unwrapped.game.outcome == "rounds_done"
