"""Ray RLlib (new API stack) on every cardzoo game, and evaluation on Ray: real training on a real Ray started here.

One Ray session (2 CPUs, in-process) serves the whole module. Marked ``rllib``: a run without the rllib extra
(e.g. the newest gymnasium, which ray does not allow) deselects these with ``-m "not rllib and not agilerl"`` (the
default selection already leaves AgileRL out; a ``-m`` of one's own replaces it).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.rllib

GAMES = ["rope_team", "rook", "summit_rush"]


@pytest.fixture(scope="module")
def ray_session():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _masked_random_episode(env, rng) -> tuple[list[dict], dict]:
    """One episode of an adapted env with random legal actions: every observation dict, and the last step's
    rewards."""
    obs, _ = env.reset(seed=int(rng.integers(1000)))
    seen = [obs]
    while True:
        actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}
        obs, rewards, terminated, truncated, _ = env.step(actions)
        seen.append(obs)
        if terminated["__all__"] or truncated["__all__"]:
            return seen, rewards


@pytest.mark.parametrize(("game", "options"), [*((g, {}) for g in GAMES), ("summit_rush", {"talk": True})])
def test_adapter_passes_rllibs_env_check_and_speaks_the_masking_modules_language(game, options):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    from cardzoo.envs.common.errors import IllegalActionWarning
    from cardzoo.training.rllib import make_env

    env = make_env(game, **options)
    with warnings.catch_warnings():  # it steps an unmasked sample: most are illegal, and end that game
        warnings.simplefilter("ignore", IllegalActionWarning)
        check_multiagent_environments(env)
    rng = np.random.default_rng(0)
    for _ in range(3):
        seen, final = _masked_random_episode(env, rng)
        for obs in seen:
            for agent, o in obs.items():
                assert o["observations"].dtype == np.float32 and o["action_mask"].dtype == np.float32
                assert env.get_observation_space(agent).contains(o)
        if game == "rook":  # zero-sum single rounds, scaled from points to about -3..3
            assert final["player_0"] == -final["player_1"] and abs(final["player_0"]) <= 3.0
        else:  # the team's outcome, to every seat
            assert set(final) == set(env.possible_agents) and len(set(final.values())) == 1
            assert final["player_0"] in (1.0, -1.0)


def test_an_illegal_action_ends_the_game_with_the_teams_penalty():
    """What lets RLlib's env check (an unmasked sample) pass: the envs' default penalty, through the adapter."""
    from cardzoo.envs.common.errors import IllegalActionWarning
    from cardzoo.training.rllib import make_env

    env = make_env("rope_team")
    obs, _ = env.reset(seed=3)
    (agent, o), = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with pytest.warns(IllegalActionWarning):
        obs, rewards, terminated, _, infos = env.step({agent: illegal})
    assert terminated["__all__"] and set(rewards.values()) == {-1.0}
    assert all(info["outcome"] == "illegal" for info in infos.values())


def _module_probabilities(module, batch: dict) -> np.ndarray:
    import torch
    from ray.rllib.core.columns import Columns

    obs = {k: torch.as_tensor(np.stack([o[k] for o in batch])) for k in ("observations", "action_mask")}
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    return torch.softmax(logits, dim=-1).numpy()


@pytest.mark.parametrize("game", GAMES)
def test_ppo_trains_and_exports_to_the_numpy_policy(game, ray_session, tmp_path):
    """A real PPO iteration with a finite loss; the exported numpy actor gives the RLModule's action probabilities
    on real observations and plays a whole game through LearnedAgent under the strict illegal-action mode."""
    from cardzoo.agents.learned import LearnedAgent, NumpyPolicy
    from cardzoo.envs.common.record import make_env as make_cardzoo_env
    from cardzoo.training.rllib import GAMES as RLLIB_GAMES
    from cardzoo.training.rllib import export_module, make_env, policy_ids, ppo_config

    seat_policies = game == "rook"  # Rook: one policy per seat here; the cooperative games share one
    algo = ppo_config(game, seat_policies=seat_policies, env_runners=0, envs_per_runner=2, hidden=(32, 32),
                      train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1).build_algo()
    try:
        result = algo.train()
        policies = policy_ids(game, seat_policies)
        assert sorted(result["learners"]) == sorted([*policies, "__all_modules__"])
        for p in policies:
            assert math.isfinite(result["learners"][p]["total_loss"])
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 200
        module = algo.get_module(policies[-1])
        path = export_module(module, tmp_path / "policy.npz", {"env": RLLIB_GAMES[game][0]})
    finally:
        algo.stop()
    numpy_policy = NumpyPolicy(path)
    env, rng = make_env(game), np.random.default_rng(1)
    observations = [o for _ in range(2) for obs in _masked_random_episode(env, rng)[0] for o in obs.values()
                    if o["action_mask"].any()]
    expected = _module_probabilities(module, observations)
    for o, want in zip(observations, expected, strict=True):
        got = numpy_policy.probabilities(o["observations"], o["action_mask"])
        np.testing.assert_allclose(got, want, atol=1e-6)
        assert want[o["action_mask"] == 0].max(initial=0.0) < 1e-12  # the module masks
    strict = make_cardzoo_env(RLLIB_GAMES[game][0], illegal_action="raise",
                              **{k: v for k, v in RLLIB_GAMES[game][2].items() if k != "reward_scale"})
    agent = LearnedAgent(path)
    strict.reset(seed=5)
    for _ in strict.agent_iter():
        obs, _, term, trunc, info = strict.last()
        strict.step(None if term or trunc else agent.act(obs["observation"], obs["action_mask"]))
    assert info["outcome"] != "illegal"


def test_cli_trains_with_two_env_runners_on_a_running_cluster(ray_session, tmp_path):
    """``cardzoo train ... --backend rllib --env-runners 2 --address ADDR`` from another process joins this test's
    Ray, samples on two env runner actors and writes its run with a finite loss and its throughput."""
    address = ray_session.get_runtime_context().gcs_address
    out = tmp_path / "run"
    command = [str(Path(sys.executable).parent / "cardzoo"), "train", "rope_team", "--backend", "rllib",
               "--env-runners", "2", "--envs-per-runner", "2", "--address", address, "--iterations", "1",
               "--steps-per-iteration", "200", "--minibatch-size", "100", "--update-epochs", "1", "--hidden", "32",
               "--eval-games", "10",
               "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads((out / "run.json").read_text())
    assert run["ray_address"] == address and run["env_runners"] == 2
    assert run["env_steps"] >= 200 and run["env_steps_per_second"] > 0
    assert math.isfinite(run["final_loss"]["shared"])
    assert run["config"]["env_runners"] == 2 and run["command"].startswith("cardzoo train rope_team --backend rllib")
    curve = (out / "curve.csv").read_text().splitlines()
    assert curve[0] == "iteration,env_steps,seconds,episode_return_mean,normal,mean" and len(curve) == 3
    assert (out / "policy.npz").is_file() and (out / "algorithm").is_dir()


@pytest.mark.parametrize(("args", "message"), [(["--level", "nightmare"], "is not one of"),
                                               (["--seat-policies"], "its seats share one policy"),
                                               (["--iterations", "0"], "expected a whole number >= 1")])
def test_cli_rejects_bad_training_options_with_a_clear_error(args, message, capsys):
    from cardzoo.evaluation.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["train", "rope_team", "--backend", "rllib", *args])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_evaluation_shards_on_ray_and_matches_the_local_run(ray_session):
    from cardzoo.evaluation.matches.ray_backend import RayExecutor
    from cardzoo.evaluation.matches.runner import Matchup, run

    for matchup in (Matchup.of("rope_team_v0", ["simple", "random"], level="hard"),
                    Matchup.of("summit_rush_v0", ["learned"], level="normal", talk=False)):
        local = run(matchup, 40, workers=1, chunk=10, progress=False)
        on_ray = run(matchup, 40, chunk=10, progress=False, executor=RayExecutor())
        assert on_ray == local and [r["seed"] for r in on_ray] == list(range(40))


def test_the_benchmark_on_ray_gives_the_local_result(ray_session):
    from cardzoo.agents.pools import Pool
    from cardzoo.evaluation.matches.ray_backend import RayExecutor
    from cardzoo.evaluation.protocol import benchmark

    pools = {"rook": Pool("tiny", ("heuristic",), ("random",))}
    local, on_ray = (benchmark("random", games=["rook"], games_per_cell=16, pools=pools, executor=executor,
                               deal_key=bytes(range(32)))  # one key: the same deals and agent seeds
                     for executor in (None, RayExecutor()))
    assert local["compute"]["backend"] == "local" and on_ray["compute"]["backend"] == "RayExecutor"
    for result in (local, on_ray):  # the CPU and wall times, where it ran: measurements, not results
        result.pop("compute")
        result["games"]["rook"]["headline"].pop("cpu_ms_per_decision")
        for cell in result["games"]["rook"]["cells"]:
            cell.pop("agent_cpu_s")
    assert on_ray == local and len(local["games"]["rook"]["cells"]) == 4


def test_cli_evaluate_on_ray_gives_the_local_report(ray_session, tmp_path):
    from cardzoo.evaluation.cli import main

    main(["evaluate", "--only", "rope_team", "--games", "40", "--workers", "1", "--out", str(tmp_path / "local")])
    main(["evaluate", "--only", "rope_team", "--games", "40", "--backend", "ray", "--out", str(tmp_path / "ray")])
    local, on_ray = (json.loads((tmp_path / k / "results.json").read_text()) for k in ("local", "ray"))
    assert on_ray["rows"] == local["rows"] and len(local["rows"]) > 20
    assert (tmp_path / "ray" / "results.csv").read_bytes() == (tmp_path / "local" / "results.csv").read_bytes()


def test_rllib_old_option_names_parse_to_the_same_config_with_a_warning():
    """``cardzoo train GAME --backend rllib`` takes PPO's settings under the names every trainer uses; the RLlib
    path's old names (--batch, --minibatch, --epochs, --clip, --entropy) give the same config, each with a warning."""
    from cardzoo.evaluation.cli import build_parser
    from cardzoo.training.common import renames
    from cardzoo.training.rllib import train as rllib_train

    table = renames(rllib_train.RllibTrainConfig)
    assert table == {"batch": "steps_per_iteration", "minibatch": "minibatch_size", "epochs": "update_epochs",
                     "clip": "clip_coef", "entropy": "ent_coef"}
    values = {"steps_per_iteration": "200", "minibatch_size": "100", "update_epochs": "2", "clip_coef": "0.3",
              "ent_coef": "0.02"}
    new = [a for name, value in values.items() for a in ("--" + name.replace("_", "-"), value)]
    old = [a for name, new_name in table.items() for a in ("--" + name, values[new_name])]
    expected = rllib_train.parse_args(["rope_team", *new])
    assert expected.steps_per_iteration == 200 and expected.clip_coef == 0.3
    with pytest.warns(FutureWarning) as warned:
        assert rllib_train.parse_args(["rope_team", *old]) == expected
    assert len(warned) == 5 and "--entropy is now --ent-coef" in str(warned[-1].message)
    parser = build_parser("rllib")
    with pytest.warns(FutureWarning) as warned:
        assert rllib_train.config(parser.parse_args(["train", "rope_team", "--backend", "rllib", *old])) == expected
    assert "--batch is now --steps-per-iteration" in str(warned[0].message) and len(warned) == 5
    import argparse

    from cardzoo.training import commands

    train_parser = argparse.ArgumentParser(prog="cardzoo")
    commands.add_parser(train_parser.add_subparsers(dest="command"), "rllib")
    args = train_parser.parse_args(["train", "rope_team", "--backend", "rllib", *new])
    assert commands.trainer("rllib") is rllib_train and rllib_train.config(args) == expected
