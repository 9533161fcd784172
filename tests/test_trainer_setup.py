"""One trainer setup (``cardzoo.training.common``): PPO's settings have one set of names across the trainers, the old
names still parse to the same config with a warning, the shared held-out loop and bookkeeping do what each trainer
did, tiny fixed-seed runs give what they gave before the trainers shared them, and no trainer imports the command
line module."""

from __future__ import annotations

import ast
import csv
import subprocess
import sys
import warnings
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from cardzoo.evaluation.cli import build_parser  # noqa: E402
from cardzoo.training import common, distil, ppo_batched, train  # noqa: E402

ROOT = Path(__file__).parents[1]
RENAMED = [(module, cls, old) for module, cls in ((train, train.TrainConfig), (distil, distil.DistilConfig))
           for old in common.renames(cls)]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _value(cls, name: str) -> str:
    default = next(f.default for f in fields(cls) if f.name == name)
    return "3" if isinstance(default, int) else "0.125"


def test_ppo_settings_have_one_name_in_every_trainer():
    """The settings a trainer shares with CleanRL carry CleanRL's names, and each old name maps to one of them."""
    canonical = {"num_envs", "num_steps", "steps_per_iteration", "minibatch_size", "update_epochs", "clip_coef",
                 "ent_coef", "vf_coef", "max_grad_norm"}
    assert common.renames(train.TrainConfig) == {"n_envs": "num_envs", "n_steps": "num_steps",
                                                 "batch_size": "minibatch_size", "n_epochs": "update_epochs",
                                                 "clip_range": "clip_coef"}
    assert common.renames(distil.DistilConfig) == {"epochs": "update_epochs", "batch_size": "minibatch_size"}
    assert common.renames(ppo_batched.BatchedConfig) == {}
    for cls in (train.TrainConfig, distil.DistilConfig, ppo_batched.BatchedConfig):
        names = {f.name for f in fields(cls)}
        assert not names & {"n_envs", "n_steps", "batch_size", "n_epochs", "clip_range", "batch", "minibatch",
                            "epochs", "clip", "entropy"}, cls
        assert set(common.renames(cls).values()) <= canonical & names


@pytest.mark.parametrize(("module", "cls", "old"), RENAMED, ids=[f"{c.__name__}-{o}" for _, c, o in RENAMED])
def test_an_old_flag_parses_to_the_same_config_with_a_warning(module, cls, old):
    new = common.renames(cls)[old]
    value = _value(cls, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name: no warning
        expected = module.parse_args(["rope_team", _flag(new), value])
    with pytest.warns(FutureWarning, match=f"{_flag(old)} is now {_flag(new)}"):
        got = module.parse_args(["rope_team", _flag(old), value])
    assert got == expected and getattr(got, new) == type(getattr(expected, new))(value)
    assert getattr(got, new) != getattr(module.parse_args(["rope_team"]), new)  # the flag did change something


def test_cardzoo_train_takes_old_and_new_names_and_lists_only_the_new():
    """``cardzoo train GAME`` (the sb3 backend) parses an old flag into the same config; ``--help`` shows new names."""
    parser = build_parser("sb3")
    new = train.config(parser.parse_args(["train", "rope_team", "--num-steps", "64", "--clip-coef", "0.2"]))
    with pytest.warns(FutureWarning) as warned:
        args = parser.parse_args(["train", "rope_team", "--n-steps", "64", "--clip-range", "0.2"])
    assert [str(w.message).split(";")[0] for w in warned] == ["--n-steps is now --num-steps",
                                                              "--clip-range is now --clip-coef"]
    assert train.config(args) == new and new.num_steps == 64 and new.clip_coef == 0.2
    shown = subprocess.run([sys.executable, "-m", "cardzoo.evaluation.cli", "train", "rope_team", "--n-epochs", "2",
                            "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "--n-epochs is now --update-epochs" in shown.stderr  # a user sees it
    assert "--update-epochs" in shown.stdout and "--clip-coef" in shown.stdout
    assert not {"--n-epochs", "--clip-range", "--n-steps", "--batch-size", "--n-envs"} & set(shown.stdout.split())


def test_old_keywords_and_attributes_still_work_with_a_warning():
    with pytest.warns(FutureWarning) as warned:
        old = train.TrainConfig(n_steps=64, clip_range=0.2)
    assert [str(w.message).split(";")[0] for w in warned] == ["n_steps is now num_steps", "clip_range is now clip_coef"]
    assert warned[0].filename == __file__  # the warning points at the caller's line, not at cardzoo's
    assert old == train.TrainConfig(num_steps=64, clip_coef=0.2)
    with pytest.warns(FutureWarning, match="clip_range is now clip_coef"):
        assert old.clip_range == 0.2
    with pytest.warns(FutureWarning, match="epochs is now update_epochs"):
        assert distil.DistilConfig(epochs=2).update_epochs == 2
    with pytest.raises(TypeError, match="both 'n_steps' and its new name 'num_steps'"):
        train.TrainConfig(n_steps=64, num_steps=32)


def test_held_out_plays_the_evaluation_deals_level_by_level():
    calls = []
    rates = common.held_out(("easy", "hard"), 3, lambda level, seeds: calls.append((level, seeds)) or len(level))
    assert rates == {"easy": 4, "hard": 4}
    base = common.EVAL_BASE_SEED
    assert calls == [("easy", [base, base + 1, base + 2]), ("hard", [base, base + 1, base + 2])]
    assert base == 10_000_000  # the deals every shipped run was evaluated on: disjoint from the report's 0..N-1


def test_evaluations_keep_the_best_and_copy_its_files(tmp_path):
    lines = []
    evaluations = common.Evaluations(tmp_path, lines.append)
    for step, rates in ((0, {"easy": 0.5, "hard": 0.1}), (10, {"easy": 0.7, "hard": 0.3}), (20, {"easy": 0.6,
                                                                                                   "hard": 0.2})):
        policy = tmp_path / f"step_{step}.npz"
        policy.write_text(str(step))
        evaluations.add(rates, row={"steps": step, "seconds": 0}, where={"steps": step}, heading=f"step {step}",
                        copies={policy: "policy.npz"})
    assert evaluations.best == {"mean": pytest.approx(0.5), "steps": 10, "rates": {"easy": 0.7, "hard": 0.3}}
    assert (tmp_path / "policy.npz").read_text() == "10"
    assert lines[1] == "step 10: easy 70.0%, hard 30.0% (mean 50.0%)"
    with open(tmp_path / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["steps"] for r in rows] == ["0", "10", "20"] and list(rows[0]) == ["steps", "seconds", "easy", "hard",
                                                                               "mean"]


def _abs_sums(path: Path) -> dict[str, float]:
    with np.load(path) as f:
        return {k: float(np.abs(f[k]).sum()) for k in ("b0", "action_w", "action_b")}


def _rates(out: Path) -> list[dict]:
    with open(out / "curve.csv") as f:
        return [{k: float(v) for k, v in r.items() if k != "seconds"} for r in csv.DictReader(f)]


def test_a_tiny_sb3_run_gives_what_it_gave_before_the_shared_setup(tmp_path):
    """Fixed seed, one thread: the held-out curve and the final weights (absolute sums) that main at 1cc2d08, before
    the trainers shared their setup, gives with the same options under their old names. A large learning rate and a
    small clip, so that the clip binds and a setting read from the wrong option changes the weights."""
    cfg = train.parse_args(["rope_team", "--steps", "256", "--num-envs", "2", "--num-steps", "64", "--minibatch-size",
                            "32", "--update-epochs", "2", "--hidden", "16", "--imitate-games", "8",
                            "--imitate-epochs", "1", "--eval-games", "10", "--eval-every", "128", "--clip-coef", "0.05",
                            "--learning-rate", "0.01", "--levels", "easy", "--threads", "1", "--out", str(tmp_path)])
    train.train(cfg)
    assert _rates(tmp_path) == [{"steps": 0, "easy": 0.1, "mean": 0.1}, {"steps": 128, "easy": 0.1, "mean": 0.1},
                                {"steps": 256, "easy": 0.0, "mean": 0.0}]
    assert _abs_sums(tmp_path / "final.npz") == pytest.approx(
        {"b0": 0.3786652982234955, "action_w": 31.656206130981445, "action_b": 1.8127307891845703}, rel=1e-4)


def test_a_tiny_batched_run_gives_what_it_gave_before_the_shared_setup(tmp_path):
    cfg = ppo_batched.parse_args(["rope_team", "--steps", "2048", "--num-envs", "64", "--num-steps", "16",
                                  "--minibatch-size", "256", "--update-epochs", "2", "--hidden", "16", "--eval-games",
                                  "20", "--eval-every", "1024", "--clip-coef", "0.05", "--learning-rate", "0.01",
                                  "--threads", "1",
                                  "--out", str(tmp_path)])
    ppo_batched.train(cfg)
    rates = _rates(tmp_path)
    assert [[r[k] for k in ("steps", "easy", "normal", "hard", "expert")] for r in rates] == [
        [0, 0.05, 0.0, 0.1, 0.0], [1024, 0.0, 0.0, 0.0, 0.0], [2048, 0.05, 0.0, 0.0, 0.0]]
    assert _abs_sums(tmp_path / "final.npz") == pytest.approx(
        {"b0": 0.22252540290355682, "action_w": 34.155296325683594, "action_b": 1.7031224966049194}, rel=1e-4)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function, relative imports resolved."""
    package = ["cardzoo", *path.relative_to(ROOT).parent.parts]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module) if p)
            names |= {module} | {f"{module}.{a.name}" for a in node.names}
    return names


def test_no_trainer_imports_the_command_line_module():
    """The command line assembles the trainers; a trainer importing it back made an import cycle."""
    importers = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "training").rglob("*.py"))
                 if "cardzoo.evaluation.cli" in _imports(p)]
    assert importers == []


@pytest.mark.parametrize("module", [train, ppo_batched, distil], ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_every_trainer_offers_the_same_command_line_interface(module):
    """``add_options(parser)`` then ``config(args)`` is ``parse_args(argv)``: what a command module needs to give
    each backend its own parser."""
    import argparse

    argv = ["summit_rush", "--seed", "7", "--levels", "hard"]
    parsed = module.config(module.add_options(argparse.ArgumentParser()).parse_args(argv))
    assert parsed == module.parse_args(argv) and parsed.seed == 7 and parsed.levels == ("hard",)


def test_the_command_line_re_exports_the_argument_types():
    """``cardzoo.evaluation.cli`` keeps the names tests and scripts import, as the very objects of
    ``cardzoo.envs.common.argtypes`` (an ``except CommandError`` must catch what a trainer or a study raises)."""
    from cardzoo.envs.common import argtypes
    from cardzoo.evaluation import cli

    for name in ("GAMES", "CommandError", "game", "number", "writable_file", "writable_folder"):
        assert getattr(cli, name) is getattr(argtypes, name), name
    assert cli._options is argtypes.env_options
    assert argtypes.env_options(["level=hard", "ropes=2"]) == {"level": "hard", "ropes": 2}


@pytest.mark.parametrize("name", ["sb3", "batched", "distil"])
def test_the_train_command_builds_each_backend_its_own_parser(name):
    """``training.commands``: ``cardzoo train GAME --backend NAME`` parses into that trainer's config, old names
    included, and a conflict between options is the command's one-line error."""
    import argparse

    from cardzoo.envs.common.argtypes import CommandError
    from cardzoo.training import commands

    argv = ["summit_rush", f"--backend={name}", "--seed", "3", "--levels", "hard"]
    assert commands.backend(argv) == name and commands.backend(["rope_team"]) == "sb3"
    parser = argparse.ArgumentParser(prog="cardzoo")
    commands.add_parser(parser.add_subparsers(dest="command"), commands.backend(argv))
    module = commands.trainer(name)
    args = parser.parse_args(["train", *argv])
    assert args.func is commands.run and module.config(args) == module.parse_args(["summit_rush", "--seed", "3",
                                                                                   "--levels", "hard"])
    old, new = next(iter(common.renames(type(module.config(args))).items()), ("seed", "seed"))
    if old != new:
        with pytest.warns(FutureWarning, match=f"{_flag(old)} is now {_flag(new)}"):
            parser.parse_args(["train", *argv, _flag(old), "3"])
    with pytest.raises(SystemExit):  # the backend is one of the four
        parser.parse_args(["train", "rope_team", "--backend", "tensorflow"])
    conflicts = {"sb3": (["summit_rush", "--levels", "normal", "hard"], "one policy per level"),
                 "batched": (["rope_team", "--num-envs", "1", "--levels", "easy", "hard"], "fewer than the 2 levels"),
                 "distil": (["rope_team", "--levels", "hard", "nightmare"], "nightmare")}
    words, message = conflicts[name]
    bad = parser.parse_args(["train", *words, f"--backend={name}"])
    bad.argv = ["train", *words]
    with pytest.raises(CommandError, match=message):
        commands.run(bad)


def test_the_train_command_runs_the_trainer_and_records_the_command_line(tmp_path):
    import argparse

    from cardzoo.training import commands

    words = ["rope_team", "--backend", "batched", "--steps", "64", "--num-envs", "4", "--num-steps", "16",
             "--levels", "easy", "--hidden", "8", "--eval-games", "2", "--threads", "1", "--out", str(tmp_path)]
    parser = argparse.ArgumentParser(prog="cardzoo")
    commands.add_parser(parser.add_subparsers(dest="command"), commands.backend(words))
    args = parser.parse_args(["train", *words])
    args.argv = ["train", *words]
    args.func(args)
    run = (tmp_path / "run.json").read_text()
    assert '"command": "cardzoo train rope_team --backend batched --steps 64' in run and '"steps": 64' in run
