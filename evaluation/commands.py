"""``cardzoo evaluate``, ``race`` and ``bench``: the report, the Summit Rush record race and the env benchmark.

``evaluate`` writes the evaluation report (``cardzoo.evaluation.report``): every game, level and agent against the
rule documents, on local processes or on Ray (``--backend ray``); ``evaluate --records FILE`` gives the people's win
rates in a games file, each game first replayed and checked against what it saved (``play.records``: a malformed or
tampered line refuses the file, naming the line; a game saved twice is a warning and counts once). ``race`` plays
series of Summit Rush games and adds up the stock cards left in the games won; ``bench`` measures env steps per
CPU-second beside PettingZoo's leduc.

Each command is added to the ``cardzoo`` parser here; ``cardzoo.evaluation.cli`` assembles them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cardzoo.envs.common.argtypes import GAMES, CommandError, game, number, writable_file, writable_folder
from cardzoo.envs.common.argtypes import env_options as _options
from cardzoo.envs.common.record import make_env


def evaluate(args: argparse.Namespace) -> None:
    from cardzoo.evaluation import report

    if args.records:
        evaluate_records(args)
        return
    if args.agents:
        evaluate_agents(args)
        return
    games = report.FULL_GAMES if args.full else args.games or report.QUICK_GAMES
    out = Path(args.out or ("reports/full" if args.full else "reports/quick"))
    writable_folder(out, "the report")
    if args.cache:
        writable_folder(Path(args.cache), "the cache")
    settings = report.Settings(games=games, workers=args.workers, out=out,
                               cache=Path(args.cache) if args.cache else None, only=args.only)
    if args.backend == "local":
        if args.address:
            raise CommandError("--address is for --backend ray")
        report.main(settings)
        return
    try:
        from cardzoo.evaluation.matches.ray_backend import ray_executor
    except ImportError as err:
        raise CommandError(f"--backend ray needs Ray ({err.name} is missing): pip install -e '.[rllib]'") from None
    with ray_executor(args.address) as executor:
        settings.executor = executor
        report.main(settings)


def evaluate_agents(args: argparse.Namespace) -> None:
    """The language-model table (``evaluation.matches.llm_table``): the agents given against the baseline on the same
    deals, with invalid replies, tokens and time."""
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.errors import OptionError
    from cardzoo.evaluation.matches import llm_table

    given = [flag for flag, value in (("--full", args.full), ("--workers", args.workers), ("--cache", args.cache),
                                      ("--address", args.address), ("--backend ray", args.backend != "local"))
             if value]
    if given:
        raise CommandError(f"--agents plays its games in this process, in order; it takes no {', '.join(given)}")
    from cardzoo.envs.registry import GAMES as REGISTERED
    from cardzoo.envs.registry import spec

    try:
        for game_name in args.only or list(REGISTERED):
            spec(game_name)
            for name in args.agents:
                make_agent(name, game_name)  # a bad game or spec fails here, before any game
    except OptionError as err:
        raise CommandError(str(err)) from None
    out = Path(args.out or "reports/llm")
    writable_folder(out, "the table")
    command = "cardzoo evaluate --agents " + " ".join(args.agents) + f" --games {args.games or 10}" + (
        f" --only {' '.join(args.only)}" if args.only else "")
    llm_table.main(args.agents, args.games or 10, args.only, out, command)


def evaluate_records(args: argparse.Namespace) -> None:
    """The people's win rates in a games file, each game first replayed and checked against what it saved."""
    from cardzoo.play import records

    given = [flag for flag, value in (("--out", args.out), ("--workers", args.workers), ("--cache", args.cache),
                                      ("--only", args.only), ("--agents", args.agents)) if value]
    if given:
        raise CommandError(f"--records reports saved games; it takes no {', '.join(given)}")
    games, repeated = records.load(args.records)  # one bad line refuses the file, naming the line
    for lines in repeated:
        print(f"cardzoo evaluate: {records.duplicate_warning(args.records, lines)}", file=sys.stderr)
    print(f"{len(games)} games from {args.records}, each replayed to the ending it saved; people's win rates with "
          "Wilson 95 % intervals (a Rook tie is not a win):\n")
    print(records.rates_table(records.rates([e for _, e in games])))


def race_cmd(args: argparse.Namespace) -> None:
    from cardzoo.agents.registry import make_agent
    from cardzoo.evaluation.matches.race import race
    from cardzoo.evaluation.matches.runner import Matchup, run

    env_name = "summit_rush_v0"
    options = _options(args.option)
    if "render_mode" in options:
        raise CommandError("race plays its games unseen; drop -o render_mode (cardzoo play shows a game)")
    env = make_env(env_name, **options)  # bad options and agents fail here, before any game
    if len(args.agents) > len(env.possible_agents):
        raise CommandError(f"{len(args.agents)} agents for the {len(env.possible_agents)} seats of {env_name}")
    for name in args.agents:
        make_agent(name, env_name)
    games = args.series * args.length
    matchup = Matchup.of(env_name, args.agents, **options)
    print(f"race the record: {matchup.label}, {args.series} series of {args.length} games (deals {args.first_deal}.."
          f"{args.first_deal + games - 1})", flush=True)
    result = race(run(matchup, games, base_seed=args.first_deal, workers=args.workers, progress=False), args.length)
    print("series totals: " + " ".join(map(str, result.totals)))
    print(result)


def bench(args: argparse.Namespace) -> None:
    from cardzoo.evaluation.benchmarks import envs as bench_module

    if args.out:
        writable_file(Path(args.out), "the figures")
    bench_module.main(seconds=args.seconds, out=args.out, only=args.games)


def add_evaluate(sub) -> None:
    e = sub.add_parser("evaluate", help="the evaluation report: every game, level and agent vs the documents")
    size = e.add_mutually_exclusive_group()
    size.add_argument("--games", type=number(int, 1), default=None, help="games per matchup (default 2000)")
    size.add_argument("--full", action="store_true", help="10,000 games per matchup")
    size.add_argument("--records", metavar="FILE", help="people's win rates in a games file (DIR/games.jsonl); every "
                      "line checked as by cardzoo replay")
    e.add_argument("--agents", nargs="+", metavar="SPEC", help="the language-model table instead of the report: these "
                   "agents (llm:MODEL, hf:PATH or any agent; per seat, cycled) against the baseline on the same deals, "
                   "with invalid replies, tokens and time per game (default 10 games; --out default reports/llm)")
    e.add_argument("--out", help="report folder (default reports/quick or reports/full)")
    e.add_argument("--workers", type=number(int, 1), default=None, help="processes (default: all cores)")
    e.add_argument("--cache", help="folder for finished chunks of games, so an interrupted run resumes")
    e.add_argument("--only", nargs="+", help="only these games' sections (a report of the same size already in "
                   "--out keeps its other sections)")
    e.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes (--workers), or Ray tasks on a cluster: the same games, the same report")
    e.add_argument("--address", help="with --backend ray: the Ray cluster to join (default: Ray started here)")
    e.set_defaults(func=evaluate)


def add_race(sub) -> None:
    race = sub.add_parser("race", help="race the record (Summit Rush): series of games, adding up the stock cards "
                                       "left in the games won")
    race.add_argument("--agents", nargs="+", default=["simple_talk"], help="agent name per seat (repeats if fewer)")
    race.add_argument("--length", type=number(int, 1), default=10, help="games per series")
    race.add_argument("--series", type=number(int, 1), default=20, help="series to play")
    race.add_argument("--first-deal", type=number(int, 0), default=0, help="game seed of the first series' first game")
    race.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE", help="env option")
    race.add_argument("--workers", type=number(int, 1), default=None, help="processes (default: all cores)")
    race.set_defaults(func=race_cmd)


def add_bench(sub) -> None:
    b = sub.add_parser("bench", help="env steps per CPU-second beside PettingZoo's leduc (and OpenSpiel)")
    b.add_argument("--seconds", type=number(float, 0, above=True), default=3.0, help="CPU seconds per env")
    b.add_argument("--out", help="write the figures as JSON here")
    b.add_argument("--games", nargs="+", type=game, help=f"only these cardzoo envs ({GAMES}; peers always run)")
    b.set_defaults(func=bench)
