"""The single-file PPO example: a tiny run on every game ends with a finite loss, never picks a masked action,
reports its throughput; the command line lists every option with its one-line doc."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import fields

import pytest
import torch

from cardzoo.training.cleanrl_ppo import Agent, Args, parse_args, train


@pytest.mark.filterwarnings("error::cardzoo.envs.common.errors.IllegalActionWarning")
@pytest.mark.parametrize("game", ["rope_team", "summit_rush", "rook"])
def test_tiny_run_trains_with_a_finite_loss(game, capsys):
    threads = torch.get_num_threads()
    summary = train(Args(game=game, total_timesteps=256, num_envs=2, num_steps=64, hidden=32, update_epochs=2))
    torch.set_num_threads(threads)
    assert summary["steps"] == 256 and math.isfinite(summary["loss"]) and summary["sps"] > 0
    out = capsys.readouterr().out
    assert "iteration 2/2" in out and "SPS" in out and "summary:" in out


def test_masked_logits_give_illegal_actions_no_probability():
    torch.manual_seed(0)
    agent = Agent(10, 6, 16)
    mask = torch.tensor([[True, False, False, True, False, False]] * 500)
    action, logprob, entropy, _ = agent.get_action_and_value(torch.randn(500, 10), mask)
    assert set(action.tolist()) == {0, 3} and torch.isfinite(entropy).all()
    _, illegal_logprob, _, _ = agent.get_action_and_value(torch.randn(1, 10), mask[:1], torch.tensor([1]))
    assert illegal_logprob.item() < -1e6


def test_command_line_has_every_option_with_its_doc():
    out = subprocess.run([sys.executable, "-m", "cardzoo.training.cleanrl_ppo", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for f in fields(Args):
        assert "--" + f.name.replace("_", "-") in out
    assert "environments stepped together" in out
    args = parse_args(["--game", "rook", "--total-timesteps", "512", "--learning-rate", "0.001"])
    assert (args.game, args.total_timesteps, args.learning_rate) == ("rook", 512, 0.001)
