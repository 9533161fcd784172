"""The batched engines' adapters (Gymnasium VectorEnv, SB3 VecEnv) and the batched PPO trainer, doing real work."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from cardzoo.agents.learned import LearnedAgent
from cardzoo.envs import rope_team_v0
from cardzoo.envs.batched import make_batched
from cardzoo.envs.common.errors import IllegalActionWarning
from cardzoo.envs.vector import BatchedVectorEnv
from cardzoo.evaluation.cli import main as cli
from cardzoo.training import ppo_batched
from cardzoo.training.train import TrainConfig
from cardzoo.training.train import evaluate as runner_evaluate


def test_gymnasium_vector_view_is_the_shared_policy_view_of_each_game():
    n = 6
    envs = BatchedVectorEnv(make_batched("rope_team_v0", n, level="easy", shaping=0.5))
    obs, infos = envs.reset(seed=40)
    singles = [rope_team_v0.raw_env(level="easy", shaping=0.5) for _ in range(n)]
    for i, env in enumerate(singles):
        env.reset(seed=40 + i)  # Gymnasium's convention: env i of reset(seed=s) plays seed s + i
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        for i, env in enumerate(singles):
            view = env.observe(env.agent_selection)
            assert np.array_equal(obs[i], view["observation"]) and infos["seat"][i] == env.game.to_move
        assert np.array_equal(envs.action_masks(), infos["action_mask"].astype(bool))
        actions = np.argmax(rng.random((n, 52)) * envs.action_masks(), axis=1)
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        assert not truncated.any()
        for i, env in enumerate(singles):
            agent = env.agent_selection
            env.step(int(actions[i]))
            assert rewards[i] == env.rewards[agent]  # the reward of the seat that decided, as SharedPolicyEnv
            assert terminated[i] == env.terminations[agent]
            if terminated[i]:
                ended += 1
                assert np.array_equal(infos["final_obs"][i], env.observe(agent)["observation"])
                assert infos["final_info"]["outcome"][i] == env.infos[agent]["outcome"]
                env.reset(seed=int(envs.engine.seeds[i]))
    assert ended >= 10


def test_maskable_ppo_trains_on_the_sb3_view():
    """MaskablePPO, unchanged, learns on the VecEnv view; the engine raises on any illegal action, so every action
    it took respected the masks."""
    from sb3_contrib import MaskablePPO

    from cardzoo.training.batched_vec import BatchedVecEnv

    vec = BatchedVecEnv(make_batched("rope_team_v0", 16, level="easy", illegal_action="raise"))
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=256, n_epochs=1, seed=3,
                        policy_kwargs={"net_arch": [32]})
    model.learn(2048)
    assert model.num_timesteps == 2048
    assert vec.engine.next_seed > 3 + 16  # games ended and were replaced from the stream (reset at seed 3)
    vec.reset()
    vec.step_async(np.argmax(vec.action_masks(), axis=1))
    for _ in range(80):
        obs, rewards, done, infos = vec.step_wait()
        if done.any():
            break
        vec.step_async(np.argmax(vec.action_masks(), axis=1))
    i = int(np.flatnonzero(done)[0])
    assert infos[i]["terminal_observation"].shape == (464,) and infos[i]["outcome"] in ("win", "fall", "out_of_deals")
    assert rewards.dtype == np.float32 and obs.shape == (16, 464)


def test_features_in_the_sb3_view():
    from cardzoo.agents.features import rope_team_scores
    from cardzoo.training.batched_vec import BatchedVecEnv

    vec = BatchedVecEnv(make_batched("rope_team_v0", 3), features="rope_team_scores")
    vec.seed(5)
    obs = vec.reset()
    engine_obs = make_batched("rope_team_v0", 3)
    raw, mask, _ = engine_obs.reset(5)
    assert obs.shape == (3, 464 + 104) and vec.observation_space.shape == (568,)
    assert np.array_equal(obs[1], rope_team_scores(raw[1], mask[1]))


def test_batched_trainer_end_to_end(tmp_path):
    """A short run through the command line: the files of a run, a policy LearnedAgent plays, masks respected, and
    the batched evaluation equal to train.py's evaluation through the runner."""
    out = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)  # a masking bug would play illegal cards
        cli(["train", "rope_team", "--backend", "batched", "--steps", "4096", "--num-envs", "128", "--num-steps", "16",
             "--minibatch-size", "512", "--eval-games", "30", "--eval-every", "2048", "--hidden", "32",
             "--imitate", "simple", "--imitate-games", "8", "--imitate-epochs", "1", "--threads", "1",
             "--out", str(out)])
    for name in ("policy.npz", "final.npz", "curve.csv", "curve.png", "run.json", "train.log"):
        assert (out / name).is_file(), name
    run = json.loads((out / "run.json").read_text())
    assert run["steps"] == 4096 and run["command"].startswith("cardzoo train rope_team --backend batched")
    phases = run["profile"]
    assert {"engine step", "rollout forward", "update forward", "update backward", "optimizer"} <= set(phases)
    assert all(p["us_per_decision"] >= 0 for p in phases.values()) and phases["update backward"]["cpu_seconds"] > 0
    assert [line.split(",")[0] for line in (out / "curve.csv").read_text().split()[1:]] == ["0", "2048", "4096"]
    agent = LearnedAgent(out / "policy.npz")
    env = rope_team_v0.env(level="hard")
    env.reset(seed=1)
    for _ in env.agent_iter():
        o, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(o["observation"], o["action_mask"]))
    cfg = ppo_batched.BatchedConfig(out=str(tmp_path))
    assert ppo_batched.evaluate(out / "final.npz", cfg, 60) == runner_evaluate(out / "final.npz",
                                                                             TrainConfig(imitate=None), 60)


def test_masked_distribution_is_the_agents():
    """The trainer's masked log-softmax, entropy and their gradients equal the Categorical over masked logits that
    cleanrl_ppo.Agent uses (illegal logits at -1e9), and its sampler draws only legal actions, in proportion."""
    import torch
    from torch.distributions import Categorical

    gen = torch.Generator().manual_seed(0)
    logits = (3 * torch.randn(256, 52, generator=gen)).requires_grad_()
    legal = (torch.rand(256, 52, generator=gen) < 0.2).float()
    legal[torch.arange(256), torch.randint(0, 52, (256,), generator=gen)] = 1.0
    legal[0], legal[1] = 0.0, 1.0  # a row with one legal action and a row with all of them
    legal[0, 7] = 1.0
    actions = torch.multinomial(legal, 1, generator=gen).squeeze(1)

    logp = ppo_batched.masked_log_softmax(logits, legal)
    ent = ppo_batched.entropy(logp, legal)
    fast = logp.gather(1, actions[:, None]).squeeze(1).sum() + ent.sum()
    (fast_grad,) = torch.autograd.grad(fast, logits)
    dist = Categorical(logits=logits.masked_fill(legal == 0, -1e9))
    reference = dist.log_prob(actions).sum() + dist.entropy().sum()
    (reference_grad,) = torch.autograd.grad(reference, logits)
    on = legal.bool()
    assert torch.allclose(logp[on], dist.logits[on], atol=1e-5)
    assert torch.allclose(ent, dist.entropy(), atol=1e-5) and ent[0] == 0
    assert torch.allclose(fast_grad, reference_grad, atol=1e-5) and not fast_grad[~on].any()

    probs = torch.tensor([[0.0, 0.5, 0.0, 0.3, 0.2, 0.0]])
    draws = ppo_batched.sample(probs.log().clamp(min=-1e9).expand(20_000, -1).contiguous(), gen)
    counts = torch.bincount(draws, minlength=6) / 20_000
    assert counts[probs[0] == 0].sum() == 0
    assert torch.allclose(counts, probs[0], atol=0.015)  # 3 standard errors of a share of 0.5 in 20,000 draws
    wide = ppo_batched.sample(ppo_batched.masked_log_softmax(torch.zeros(4096, 52), legal.repeat(16, 1)), gen)
    assert legal.repeat(16, 1)[torch.arange(4096), wide].all()


def test_bad_batched_options():
    with pytest.raises(SystemExit):
        ppo_batched.parse_args(["hanabi"])
    with pytest.raises(SystemExit):
        ppo_batched.parse_args(["rope_team", "--num-envs", "2"])  # fewer games than levels
    with pytest.raises(SystemExit):
        ppo_batched.parse_args(["rope_team", "--steps", "0"])


def test_payoff_compares_a_policy_on_the_same_deals(tmp_path):
    """The shipped observation-only policy measured as the "new" policy: on the same deals it ties itself exactly,
    and its rate against the simple strategy is the paired difference of the two rates."""
    from cardzoo.agents.learned import shipped_policy
    from cardzoo.evaluation.benchmarks.batched import payoff

    result = payoff(shipped_policy("rope_team_plain"), 40, tmp_path, workers=1)
    assert json.loads((tmp_path / "report_deals.json").read_text())["levels"] == result["levels"]
    for level, row in result["levels"].items():
        itself = row["learned_plain"]
        assert itself["rate"] == row["policy"]["rate"], level
        assert itself["policy_minus_this"]["difference"] == 0 and itself["policy_minus_this"]["p_value"] == 1.0
        simple = row["simple"]
        assert simple["policy_minus_this"]["difference"] == pytest.approx(row["policy"]["rate"] - simple["rate"])
    assert result["levels"]["easy"]["simple"]["rate"] > result["levels"]["expert"]["simple"]["rate"]


def test_batched_trainer_plays_summit_rush_silent(tmp_path):
    """Summit Rush through the batched trainer: a short run writes a policy for the silent game, and the batched
    evaluation of the shipped Normal policy equals train.py's evaluation through the single env, game for game."""
    out = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        cli(["train", "summit_rush", "--backend", "batched", "--steps", "2048", "--num-envs", "64", "--num-steps",
             "32", "--minibatch-size", "512", "--eval-games", "10", "--eval-every", "2048", "--hidden", "16",
             "--features", "summit_rush_simple", "--imitate", "simple", "--imitate-games", "4",
             "--imitate-epochs", "1", "--threads", "1", "--out", str(out)])
    run = json.loads((out / "run.json").read_text())
    assert run["env"] == "summit_rush_v0" and run["config"]["levels"] == ["normal"] and run["steps"] == 2048
    policy = LearnedAgent(out / "policy.npz").policy
    assert policy.weights[0][0].shape[0] == 732 + 58  # the silent observation and the simple choice's 58 moves
    shipped = "agents/policies/summit_rush_normal.npz"
    cfg = ppo_batched.BatchedConfig(game="summit_rush", features="summit_rush_simple", out=str(tmp_path))
    rates = ppo_batched.evaluate(shipped, cfg, 40)
    assert 0 < rates["normal"] < 1
    assert rates == runner_evaluate(shipped, TrainConfig(game="summit_rush", levels=("normal",), imitate=None,
                                                         features="summit_rush_simple"), 40)
    with pytest.raises(SystemExit):
        ppo_batched.parse_args(["summit_rush", "--shaping", "0.1"])  # a Rope Team option
