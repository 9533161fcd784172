"""The ``cardzoo`` command: ``evaluate``, ``play``, ``replay``, ``train`` and ``bench``.

Options of an env are given as ``-o name=value`` (values are read as JSON where they parse, e.g.
``-o open_hands=true -o ropes=2``; otherwise as strings, e.g. ``-o level=hard``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from cardzoo.envs.common.errors import CardzooError
from cardzoo.envs.common.record import ENV_MODULES, make_env, replay, save


def _env_name(game: str) -> str:
    name = game if game in ENV_MODULES else f"{game}_v0"
    if name not in ENV_MODULES:
        known = ", ".join(sorted(n.removesuffix("_v0") for n in ENV_MODULES))
        raise SystemExit(f"cardzoo: unknown game {game!r}; games: {known}")
    return name


def _options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        if "=" not in pair:
            raise SystemExit(f"cardzoo: an option is name=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def play(args: argparse.Namespace) -> None:
    from cardzoo.agents.registry import make_agent

    name = _env_name(args.game)
    options = _options(args.option)
    env = make_env(name, **{"illegal_action": "raise", **options, "render_mode": "ansi"})
    agents = {}
    for i, agent_id in enumerate(env.possible_agents):
        agent_name = args.agents[i % len(args.agents)]
        agents[agent_id] = make_agent(agent_name, name, seed=None if args.seed is None else args.seed + i)
    env.reset(seed=args.seed)
    print(env.render(), flush=True)
    for agent_id in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(agents[agent_id].act(obs["observation"], obs["action_mask"]))
        if args.delay:
            time.sleep(args.delay)
        print("\n" + env.render(), flush=True)
    print(f"\nresult: {json.dumps(info)}")
    if args.save:
        save(env, args.save)
        print(f"game saved to {args.save}; replay with: cardzoo replay {args.save}")


def replay_cmd(args: argparse.Namespace) -> None:
    env = replay(args.file)
    env.unwrapped.render_mode = "ansi"
    print(env.render())


def bench(args: argparse.Namespace) -> None:
    from cardzoo.evaluation import bench as bench_module

    bench_module.main(seconds=args.seconds, out=args.out, only=args.games)


def evaluate(args: argparse.Namespace) -> None:
    from pathlib import Path

    from cardzoo.evaluation import report

    games = report.FULL_GAMES if args.full else args.games
    out = Path(args.out or ("reports/full" if args.full else "reports/quick"))
    report.main(report.Settings(games=games, workers=args.workers, out=out,
                                cache=Path(args.cache) if args.cache else None, only=args.only))


def train(args: argparse.Namespace) -> None:
    try:
        from cardzoo.training.train import main as train_main
    except ImportError as err:
        raise SystemExit(f"cardzoo train needs the training extra (torch, stable-baselines3, sb3-contrib): {err}. "
                         "Install torch==2.13.0 first (CPU wheel), then pip install -e '.[train]'") from None
    train_main(args.rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardzoo", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("play", help="watch agents play one game in the terminal")
    p.add_argument("game", help="rope_team, ...")
    p.add_argument("--agents", nargs="+", default=["random"], help="agent name per seat (repeats if fewer)")
    p.add_argument("--seed", type=int, default=None, help="game seed (same seed, same game)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE", help="env option")
    p.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each move")
    p.add_argument("--save", metavar="FILE", help="save the game as JSON for `cardzoo replay`")
    p.set_defaults(func=play)

    r = sub.add_parser("replay", help="replay a saved game and show its final table")
    r.add_argument("file")
    r.set_defaults(func=replay_cmd)

    e = sub.add_parser("evaluate", help="the evaluation report: every game, level and agent vs the documents")
    e.add_argument("--games", type=int, default=2000, help="games per matchup (quick default)")
    e.add_argument("--full", action="store_true", help="10,000 games per matchup")
    e.add_argument("--out", help="report folder (default reports/quick or reports/full)")
    e.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    e.add_argument("--cache", help="folder for finished chunks of games, so an interrupted run resumes")
    e.add_argument("--only", nargs="+", help="only these games' sections")
    e.set_defaults(func=evaluate)

    t = sub.add_parser("train", help="train a policy with MaskablePPO (see `cardzoo train GAME --help`)",
                       add_help=False)
    t.add_argument("rest", nargs=argparse.REMAINDER)
    t.set_defaults(func=train)

    b = sub.add_parser("bench", help="env steps per CPU-second beside PettingZoo's leduc (and OpenSpiel)")
    b.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per env")
    b.add_argument("--out", help="write the figures as JSON here")
    b.add_argument("--games", nargs="+", help="only these cardzoo envs (peers always run)")
    b.set_defaults(func=bench)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except CardzooError as err:
        print(f"cardzoo: {type(err).__name__}: {err}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
