"""The ``cardzoo`` command: ``evaluate``, ``play``, ``serve``, ``replay``, ``race``, ``train`` and ``bench``.

Options of an env are given as ``-o name=value`` (values are read as JSON where they parse, e.g.
``-o open_hands=true -o ropes=2``; otherwise as strings, e.g. ``-o level=hard``). ``play`` shows the table as
text itself, so it refuses ``-o render_mode=...``.

People play too: ``play GAME --agents human learned`` seats a person in the terminal (``cardzoo.play.terminal``),
``serve`` starts the browser app (``cardzoo.play.server``; ``--seed`` fixes its sequence of deals; a ``--host``
other than loopback prints a warning that the server is exposed; ``--api-docs`` serves the API pages). Games are
appended to ``DATA/games.jsonl``; ``replay FILE --line N`` replays one of them (without ``--line``, all, checking each
ends as saved) and ``evaluate --records FILE`` gives the people's win rates. Both refuse a games file with a
malformed or tampered line, naming the line, and warn of a game saved twice, counting it once (``play.records``).

Errors end the command with one line on stderr and a non-zero status, never a traceback: a bad argument is
argparse's ``error:`` line (status 2); a bad game, option, record or output path is ``cardzoo <command>: ...``
(status 2), checked before any game is played; output to a closed pipe (``cardzoo play ... | head``) ends quietly
(status 1, as Python's own recipe); a full disk or another failed write is one line (status 1). A person's game that
cannot be appended to ``DATA/games.jsonl`` is said so on stderr and saved to ``records.fallback_path()`` instead.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import secrets
import shlex
import sys
import time
from importlib.metadata import version
from pathlib import Path

from cardzoo.envs.common.argtypes import GAMES, CommandError, game, number, writable_file, writable_folder
from cardzoo.envs.common.argtypes import env_options as _options
from cardzoo.envs.common.errors import CardzooError
from cardzoo.envs.common.record import make_env, replay, save


# ---------------------------------------------------------------------------- commands
def play(args: argparse.Namespace) -> None:
    from cardzoo.agents.registry import make_agent
    from cardzoo.play.table import HUMAN

    options = _options(args.option)
    if "render_mode" in options:
        raise CommandError("play shows the table as text itself; drop -o render_mode (the Python API takes it)")
    if HUMAN in args.agents:
        play_human(args, options)
        return
    if args.data:
        raise CommandError("--data collects games with a person at the table (--agents human ...); an agents' game "
                           "is saved with --save")
    if args.save:
        writable_file(Path(args.save), "the game")
    env = make_env(args.game, **{"illegal_action": "raise", **options, "render_mode": "ansi"})
    if len(args.agents) > len(env.possible_agents):
        raise CommandError(f"{len(args.agents)} agents for the {len(env.possible_agents)} seats of {args.game}")
    agents = {}
    for i, agent_id in enumerate(env.possible_agents):
        agent_name = args.agents[i % len(args.agents)]
        agents[agent_id] = make_agent(agent_name, args.game, seed=None if args.seed is None else args.seed + i)
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


def play_human(args: argparse.Namespace, options: dict) -> None:
    """A game with a person in the terminal; saved (also when left early) to --data and, with --save, as a record."""
    from cardzoo.play import records
    from cardzoo.play.table import Table
    from cardzoo.play.terminal import Quit, Terminal

    if "illegal_action" in options:
        raise CommandError("a person's game is strict (a mistyped move is asked again); drop -o illegal_action")
    if args.delay:
        raise CommandError("--delay paces agents' games; a person's game waits for the person")
    data = Path(args.data) if args.data else records.DEFAULT_DATA
    writable_folder(data, "played games")
    if args.save:
        writable_file(Path(args.save), "the game")
    seats = len(make_env(args.game, **options).possible_agents)  # checks the options too
    if len(args.agents) > seats:
        raise CommandError(f"{len(args.agents)} agents for the {seats} seats of {args.game}")
    players = [args.agents[i % len(args.agents)] for i in range(seats)]
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    table = Table.open(args.game, options, players, seed)
    try:
        Terminal(table).run()
    except Quit:
        print("\nyou left the game")
    except EOFError:
        print("\nend of input: the game is left unfinished")
    finally:
        entry = table.entry("terminal")
        try:
            path = records.append(data, entry)
        except records.SaveError as err:  # never lost silently: said, and kept in the fallback file (or raised)
            print(f"this game could not be saved: {err}", file=sys.stderr)
            path = records.append_fallback(entry)
        state = "" if table.over else f" (unfinished, after {table.steps} move{'s' * (table.steps != 1)})"
        print(f"game saved{state}: {path} line {sum(1 for _ in open(path))}")
        if args.save:
            save(table.env, args.save)
            print(f"record saved to {args.save}; replay with: cardzoo replay {args.save}")


def replay_cmd(args: argparse.Namespace) -> None:
    from cardzoo.play import records

    if records.is_games_file(args.file):
        replay_games(args.file, args.line)
        return
    if args.line is not None:
        raise CommandError(f"--line picks a game of a games file (JSON lines, see cardzoo serve); {args.file} holds "
                           "one record")
    env = replay(args.file)  # a missing, unreadable or malformed file is a RecordError naming it
    env.unwrapped.render_mode = "ansi"
    print(env.render())


def replay_games(path: str, line: int | None) -> None:
    """Replay the games of a games file: all of them, one line each, or the one on ``line`` with its table. Every
    line is checked first (``records.read``): one bad line refuses the file, naming the line; a game saved twice is
    a warning on stderr."""
    from cardzoo.play import records
    from cardzoo.play.views import outcome_text

    games = records.read(path)
    _, repeated = records.distinct(games)
    same_as = {n: lines[0] for lines in repeated for n in lines[1:]}
    if line is not None:
        games = [(n, e) for n, e in games if n == line]
        if not games:
            raise CommandError(f"{path} has no game on line {line}")
    for n, entry in games:
        env = records.replay_entry(entry, records.line_name(path, n))
        record = entry["record"]
        humans = [i for i, seat in enumerate(entry["seats"].values()) if "agent" not in seat]
        info = records.final_info(env)
        ending = "unfinished" if info is None else "; ".join(
            outcome_text(record["env"], info, seat) for seat in humans or [0])
        if line is not None:
            env.unwrapped.render_mode = "ansi"
            print(env.render())
        twice = f" The same game as line {same_as[n]} (counted once)." if n in same_as else ""
        print(f"line {n}: {record['env']} ({records.rates_setting(record)}), {records.players(entry)}, "
              f"{len(record['actions'])} moves: {ending} Replayed identically.{twice}")
    if line is None:
        for lines in repeated:
            print(f"cardzoo replay: {records.duplicate_warning(path, lines)}", file=sys.stderr)


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


def evaluate(args: argparse.Namespace) -> None:
    from cardzoo.evaluation import report

    if args.records:
        evaluate_records(args)
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


def _training(backend: str):
    """The module that trains with ``backend``: its ``add_options``, ``config`` and ``train``."""
    if backend != "rllib":
        from cardzoo.training import train as training

        return training
    try:
        from cardzoo.training.rllib import train as training
    except ImportError as err:
        raise CommandError(f"--backend rllib needs the rllib extra ({err.name} is missing): install torch==2.13.0 "
                           "first (CPU wheel), then pip install -e '.[rllib]'") from None
    return training


def _train_backend(argv: list[str]) -> str:
    """The backend a ``train`` command line names: the options it takes depend on it."""
    if argv[:1] != ["train"]:
        return "sb3"
    backend = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    backend.add_argument("--backend", default="sb3")
    return backend.parse_known_args(argv[1:])[0].backend


def evaluate_records(args: argparse.Namespace) -> None:
    """The people's win rates in a games file, each game first replayed and checked against what it saved."""
    from cardzoo.play import records

    given = [flag for flag, value in (("--out", args.out), ("--workers", args.workers), ("--cache", args.cache),
                                      ("--only", args.only)) if value]
    if given:
        raise CommandError(f"--records reports saved games; it takes no {', '.join(given)}")
    games, repeated = records.load(args.records)  # one bad line refuses the file, naming the line
    for lines in repeated:
        print(f"cardzoo evaluate: {records.duplicate_warning(args.records, lines)}", file=sys.stderr)
    print(f"{len(games)} games from {args.records}, each replayed to the ending it saved; people's win rates with "
          "Wilson 95 % intervals (a Rook tie is not a win):\n")
    print(records.rates_table(records.rates([e for _, e in games])))


def serve(args: argparse.Namespace) -> None:
    import socket

    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as err:
        raise CommandError(f"needs the web extra (fastapi, uvicorn; {err.name} is missing): "
                           "pip install -e '.[web]'") from None
    from cardzoo.play import records
    from cardzoo.play.access import allowed_hosts, is_loopback
    from cardzoo.play.liveness import serve as run_server
    from cardzoo.play.server import create_app

    data = Path(args.data) if args.data else records.DEFAULT_DATA
    writable_folder(data, "played games")
    try:  # a busy port or a bad host is one line, before the server starts
        with socket.create_server((args.host, args.port)):
            pass
    except OSError as err:
        raise CommandError(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}") from None
    if not is_loopback(args.host):
        names = ", ".join(allowed_hosts(args.host, args.allow_host))
        print(f"cardzoo serve: WARNING: listening on {args.host}, so other machines can reach this server. Every game "
              "needs its secret token (only the page that made it holds it); the pages must be opened by one of "
              f"these names (--allow-host adds one): {names}", file=sys.stderr, flush=True)
    print(f"cardzoo: playing at http://{args.host}:{args.port}/ ; games are saved to {data / records.GAMES_FILE}; "
          "Ctrl-C stops", flush=True)
    app = create_app(data, seed=args.seed, host=args.host, allow_hosts=args.allow_host, api_docs=args.api_docs)
    # uvicorn with header, idle and connection limits (liveness.serve). A socket message over the app's limit is
    # refused by uvicorn before it is buffered whole (its default: 16 MiB).
    run_server(app, args.host, args.port, ws_max_size=app.state.limits.body_bytes)


def host_name(text: str) -> str:
    """argparse type: a name or address a ``Host`` header may give (no port, scheme or wildcard)."""
    name = text.strip("[]")
    try:
        ipaddress.ip_address(name)
        return name
    except ValueError:
        if re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?", text):
            return text
    raise argparse.ArgumentTypeError(f"expected a host name or address (no port or scheme), got {text[:100]!r}")


def port(text: str) -> int:
    """argparse type: a TCP port, 1..65535."""
    value = number(int, 1)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 1..65535, got {text!r}")
    return value


def train(args: argparse.Namespace) -> None:
    training = _training(args.backend)
    try:
        cfg = training.config(args)
    except ValueError as err:
        raise CommandError(str(err)) from None
    if args.backend == "sb3":
        try:
            import sb3_contrib  # noqa: F401
            import stable_baselines3  # noqa: F401
            import torch  # noqa: F401
        except ImportError as err:
            raise CommandError(f"needs the training extra (torch, stable-baselines3, sb3-contrib; {err.name} is "
                               "missing): install torch==2.13.0 first (CPU wheel), then pip install -e '.[train]'"
                               ) from None
    training.train(cfg, command="cardzoo " + shlex.join(args.argv))


def train_batched(args: argparse.Namespace) -> None:
    """``cardzoo train GAME --backend batched|distil ...``: PPO on the batched engines, or distillation of the search
    agent (DAgger), each with its own options."""
    try:
        if args.backend == "distil":
            from cardzoo.training import distil as module
        else:
            from cardzoo.training import ppo_batched as module
    except ImportError as err:
        raise CommandError(f"needs the training extra (torch; {err.name} is missing): install torch==2.13.0 first "
                           "(CPU wheel), then pip install -e '.[train]'") from None
    module.train(module.parse_args(args.rest), command="cardzoo " + shlex.join(args.argv))


OWN_OPTIONS_BACKENDS = ("batched", "distil")  # trainers that parse their own options


def _batched_backend(argv: list[str]) -> tuple[str, list[str]] | None:
    """The backend and the arguments of ``cardzoo train`` less ``--backend NAME``, if NAME is a backend that parses
    its own options (``OWN_OPTIONS_BACKENDS``)."""
    if argv[:1] != ["train"]:
        return None
    rest = argv[1:]
    for i, arg in enumerate(rest):
        if arg == "--backend" and rest[i + 1 : i + 2] and rest[i + 1] in OWN_OPTIONS_BACKENDS:
            return rest[i + 1], rest[:i] + rest[i + 2 :]
        if arg.startswith("--backend=") and arg.split("=", 1)[1] in OWN_OPTIONS_BACKENDS:
            return arg.split("=", 1)[1], rest[:i] + rest[i + 1 :]
    return None


def build_parser(train_backend: str = "sb3") -> argparse.ArgumentParser:
    training = _training(train_backend)
    parser = argparse.ArgumentParser(prog="cardzoo", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"cardzoo {version('cardzoo')}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("play", help="play (--agents human ...) or watch agents play one game in the terminal")
    p.add_argument("game", type=game, help=GAMES)
    p.add_argument("--agents", nargs="+", default=["random"],
                   help="agent name per seat (repeats if fewer); 'human' seats you")
    p.add_argument("--seed", type=number(int, 0), default=None, help="game seed (same seed, same game)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE", help="env option")
    p.add_argument("--delay", type=number(float, 0), default=0.0, help="seconds to pause after each move")
    p.add_argument("--save", metavar="FILE", help="save the game as JSON for `cardzoo replay`")
    p.add_argument("--data", metavar="DIR",
                   help="with a person at the table: append the game to DIR/games.jsonl (default cardzoo-data)")
    p.set_defaults(func=play)

    s = sub.add_parser("serve", help="play with the agents in a browser (a local web app; the web extra)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    s.add_argument("--port", type=port, default=8000, help="port (default 8000)")
    s.add_argument("--data", metavar="DIR", help="append the games played to DIR/games.jsonl (default cardzoo-data)")
    s.add_argument("--seed", type=number(int, 0), default=None,
                   help="seed of the deals: the same seed deals the same games in the same order (default: fresh)")
    s.add_argument("--allow-host", action="append", default=[], metavar="NAME", type=host_name,
                   help="also answer requests addressed to NAME (a name or address of this machine; repeatable)")
    s.add_argument("--api-docs", action="store_true", help="serve the API's pages /docs, /redoc and /openapi.json")
    s.set_defaults(func=serve)

    r = sub.add_parser("replay", help="replay a saved game and show its final table, or the games of a games file",
                       description="Replay a record (play --save) and show its final table, or check every game of a "
                       "games file (DIR/games.jsonl): each must replay to the ending, finished flag and people's "
                       "results it saved. One malformed or tampered line refuses the whole file with an error naming "
                       "the line (fix or delete it and run again); a game saved twice is a warning and counts once.")
    r.add_argument("file", help="a record (play --save) or a games file (DIR/games.jsonl)")
    r.add_argument("--line", type=number(int, 1), help="the game on this line of a games file (with its table)")
    r.set_defaults(func=replay_cmd)

    e = sub.add_parser("evaluate", help="the evaluation report: every game, level and agent vs the documents")
    size = e.add_mutually_exclusive_group()
    size.add_argument("--games", type=number(int, 1), default=None, help="games per matchup (default 2000)")
    size.add_argument("--full", action="store_true", help="10,000 games per matchup")
    size.add_argument("--records", metavar="FILE", help="people's win rates in a games file (DIR/games.jsonl); every "
                      "line checked as by cardzoo replay")
    e.add_argument("--out", help="report folder (default reports/quick or reports/full)")
    e.add_argument("--workers", type=number(int, 1), default=None, help="processes (default: all cores)")
    e.add_argument("--cache", help="folder for finished chunks of games, so an interrupted run resumes")
    e.add_argument("--only", nargs="+", help="only these games' sections (a report of the same size already in "
                   "--out keeps its other sections)")
    e.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes (--workers), or Ray tasks on a cluster: the same games, the same report")
    e.add_argument("--address", help="with --backend ray: the Ray cluster to join (default: Ray started here)")
    e.set_defaults(func=evaluate)

    t = sub.add_parser("train", help="train a policy with MaskablePPO, Ray RLlib's PPO (--backend rllib), PPO on the "
                       "batched engines (--backend batched) or by distilling the search agent (--backend distil); "
                       "see `cardzoo train GAME [--backend NAME] --help`",
                       description=training.__doc__.splitlines()[0])
    t.add_argument("--backend", choices=("sb3", "rllib", *OWN_OPTIONS_BACKENDS), default="sb3",
                   help="sb3: MaskablePPO on the Gymnasium views; rllib: Ray RLlib's PPO (each with the options "
                        "listed here for it); batched: PPO on the batched engines; distil: DAgger distillation of "
                        "the search agent (Rope Team); these two with their own options (cardzoo train GAME "
                        "--backend batched --help)")
    training.add_options(t)
    t.set_defaults(func=train)

    race = sub.add_parser("race", help="race the record (Summit Rush): series of games, adding up the stock cards "
                                       "left in the games won")
    race.add_argument("--agents", nargs="+", default=["simple_talk"], help="agent name per seat (repeats if fewer)")
    race.add_argument("--length", type=number(int, 1), default=10, help="games per series")
    race.add_argument("--series", type=number(int, 1), default=20, help="series to play")
    race.add_argument("--first-deal", type=number(int, 0), default=0, help="game seed of the first series' first game")
    race.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE", help="env option")
    race.add_argument("--workers", type=number(int, 1), default=None, help="processes (default: all cores)")
    race.set_defaults(func=race_cmd)

    b = sub.add_parser("bench", help="env steps per CPU-second beside PettingZoo's leduc (and OpenSpiel)")
    b.add_argument("--seconds", type=number(float, 0, above=True), default=3.0, help="CPU seconds per env")
    b.add_argument("--out", help="write the figures as JSON here")
    b.add_argument("--games", nargs="+", type=game, help=f"only these cardzoo envs ({GAMES}; peers always run)")
    b.set_defaults(func=bench)
    return parser


def _stdout_to_devnull() -> None:
    # Python flushes stdout again at exit; pointing it at devnull keeps that flush from a second error.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    own = _batched_backend(argv)
    if own is None:
        try:
            parser = build_parser(_train_backend(argv))
        except CommandError as err:
            print(f"cardzoo train: {err}", file=sys.stderr)
            raise SystemExit(2) from None
        args = parser.parse_args(argv)
    else:  # the batched and distil trainers parse their own options
        args = argparse.Namespace(command="train", func=train_batched, backend=own[0], rest=own[1])
    args.argv = argv  # for the record of a training run
    try:
        args.func(args)
        sys.stdout.flush()
    except (CardzooError, CommandError) as err:
        kind = f"{type(err).__name__}: " if isinstance(err, CardzooError) else ""
        print(f"cardzoo {args.command}: {kind}{err}", file=sys.stderr)
        raise SystemExit(1 if isinstance(err, OSError) else 2) from None  # SaveError: a failed write
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        _stdout_to_devnull()
        raise SystemExit(1) from None
    except OSError as err:  # a full disk (stdout to /dev/full too), a file that went away: the system's words
        try:
            sys.stdout.flush()
        except OSError:
            _stdout_to_devnull()
        print(f"cardzoo {args.command}: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"cardzoo {args.command}: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
