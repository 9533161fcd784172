"""``cardzoo train GAME [--backend sb3|rllib|batched|distil] ...``: the trainers' command, one parser per backend.

The options a ``train`` command line takes depend on its backend, so the backend is read first (:func:`backend`)
and the ``train`` parser is built from that trainer's config (:func:`add_parser`); the command line module only
assembles it. Every backend's module offers the same interface: ``add_options(parser)``, ``config(args)`` and
``train(cfg, command)``.
"""

from __future__ import annotations

import argparse
import importlib
import shlex

from cardzoo.envs.common.argtypes import CommandError

TORCH_FIRST = "install torch==2.13.0 first (CPU wheel), then"

# backend: (module, what it is, the extra it needs)
BACKENDS = {
    "sb3": ("cardzoo.training.train", "MaskablePPO on the Gymnasium views",
            f"the training extra (torch, stable-baselines3, sb3-contrib; {{missing}} is missing): {TORCH_FIRST} "
            "pip install -e '.[train]'"),
    "rllib": ("cardzoo.training.rllib.train", "Ray RLlib's PPO",
              f"the rllib extra ({{missing}} is missing): {TORCH_FIRST} pip install -e '.[rllib]'"),
    "batched": ("cardzoo.training.ppo_batched", "PPO on the batched engines",
                f"the training extra (torch; {{missing}} is missing): {TORCH_FIRST} pip install -e '.[train]'"),
    "distil": ("cardzoo.training.distil", "DAgger distillation of the search agent",
               f"the training extra (torch; {{missing}} is missing): {TORCH_FIRST} pip install -e '.[train]'"),
}
HELP = ("train a policy with MaskablePPO, Ray RLlib's PPO (--backend rllib), PPO on the batched engines (--backend "
        "batched) or by distilling the search agent (--backend distil); see `cardzoo train GAME [--backend NAME] "
        "--help`")


def backend(argv: list[str]) -> str:
    """The backend a ``train`` command line (the words after ``train``) names: ``sb3`` if none. An unknown name is
    returned as given; the parser then rejects it among the choices."""
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--backend", default="sb3")
    return pre.parse_known_args(argv)[0].backend


def trainer(name: str):
    """The module that trains with backend ``name``; CommandError naming the extra it needs if that is missing."""
    module, _, extra = BACKENDS[name]
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise CommandError(f"--backend {name} needs {extra.format(missing=err.name)}") from None


def add_parser(sub, name: str = "sb3") -> argparse.ArgumentParser:
    """Add ``train`` to the subcommands ``sub``, with the options of backend ``name`` (``sb3`` if it is not one)."""
    module = trainer(name if name in BACKENDS else "sb3")
    parser = sub.add_parser("train", help=HELP, description=module.__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=tuple(BACKENDS), default="sb3",
                        help="; ".join(f"{b}: {what}" for b, (_, what, _) in BACKENDS.items())
                        + " (each with its own options: cardzoo train GAME --backend NAME --help)")
    module.add_options(parser)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> None:
    """Train as the parsed ``args`` say; ``args.argv`` (the whole command line) is recorded in the run."""
    module = trainer(args.backend)
    try:
        cfg = module.config(args)
    except ValueError as err:
        raise CommandError(str(err)) from None
    if args.backend == "sb3":  # the sb3 module imports its libraries lazily: check them before a run starts
        for library in ("sb3_contrib", "stable_baselines3", "torch"):
            try:
                importlib.import_module(library)
            except ImportError as err:
                raise CommandError(f"needs {BACKENDS['sb3'][2].format(missing=err.name)}") from None
    module.train(cfg, command="cardzoo " + shlex.join(args.argv))
