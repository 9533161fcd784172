"""``cardzoo play``, ``serve`` and ``replay``: people and agents at the table, and games played back.

``play GAME --agents human learned`` seats a person in the terminal (``cardzoo.play.terminal``); without ``human``
the agents play one game shown as text. ``serve`` starts the browser app (``cardzoo.play.server``; ``--seed`` fixes
its sequence of deals; a ``--host`` other than loopback prints a warning that the server is exposed; ``--api-docs``
serves the API pages). A person's games are appended to ``DATA/games.jsonl``; ``replay FILE --line N`` replays one of
them (without ``--line``, all, checking each ends as saved). ``replay`` refuses a games file with a malformed or
tampered line, naming the line, and warns of a game saved twice, counting it once (``play.records``). A person's
game that cannot be appended to ``DATA/games.jsonl`` is said so on stderr and saved to ``records.fallback_path()``.

Each command is added to the ``cardzoo`` parser by :func:`add_parsers`; ``cardzoo.evaluation.cli`` assembles them.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import re
import sys
import time
from pathlib import Path

from cardzoo.envs.common.argtypes import GAMES, CommandError, game, number, writable_file, writable_folder
from cardzoo.envs.common.argtypes import env_options as _options
from cardzoo.envs.common.record import make_env, replay, save
from cardzoo.envs.common.seeding import fresh_seed


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
    seed = fresh_seed() if args.seed is None else args.seed
    agents = {}
    for i, agent_id in enumerate(env.possible_agents):
        agent_name = args.agents[i % len(args.agents)]
        # the env, not its name: an agent that reads the options (a language model's text view) gets them
        agents[agent_id] = make_agent(agent_name, env, seed=seed + i, seat=i)
    env.reset(seed=seed)
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
    seed = fresh_seed() if args.seed is None else args.seed
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
    from cardzoo.play.liveness import Liveness
    from cardzoo.play.liveness import serve as run_server
    from cardzoo.play.server import create_app

    check_agents(args.agent)
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
    app = create_app(data, seed=args.seed, host=args.host, allow_hosts=args.allow_host, api_docs=args.api_docs,
                     agents=args.agent, liveness=Liveness(move_timeout=args.move_timeout))
    # uvicorn with header, idle and connection limits (liveness.serve). A socket message over the app's limit is
    # refused by uvicorn before it is buffered whole (its default: 16 MiB).
    run_server(app, args.host, args.port, ws_max_size=app.state.limits.body_bytes)


def check_agents(specs: list[str]) -> None:
    """Each extra agent of ``serve --agent`` must make an agent for every game (a bad spec is one line, before the
    server starts)."""
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.errors import OptionError
    from cardzoo.envs.registry import GAMES as REGISTERED

    for name in specs:
        if name == "human":
            raise CommandError("--agent human: the person is the page's own seat")
        try:
            for game_name in REGISTERED:
                make_agent(name, game_name)
        except (OptionError, ImportError) as err:
            raise CommandError(f"--agent {name[:100]}: {err}") from None


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


def add_parsers(sub) -> None:
    """Add ``play``, ``serve`` and ``replay`` to the subcommands ``sub``."""
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
    s.add_argument("--agent", action="append", default=[], metavar="SPEC",
                   help="also offer this agent at every table, e.g. a language model llm:MODEL?base_url=... or "
                        "hf:PATH (repeatable; its decisions get the move timeout / 6 unless the spec gives a budget)")
    s.add_argument("--move-timeout", type=number(float, 0, above=True), default=30.0, metavar="SECONDS",
                   help="an agent's turn longer than this stops its game (default 30; give a model more)")
    s.set_defaults(func=serve)

    r = sub.add_parser("replay", help="replay a saved game and show its final table, or the games of a games file",
                       description="Replay a record (play --save) and show its final table, or check every game of a "
                       "games file (DIR/games.jsonl): each must replay to the ending, finished flag and people's "
                       "results it saved. One malformed or tampered line refuses the whole file with an error naming "
                       "the line (fix or delete it and run again); a game saved twice is a warning and counts once.")
    r.add_argument("file", help="a record (play --save) or a games file (DIR/games.jsonl)")
    r.add_argument("--line", type=number(int, 1), help="the game on this line of a games file (with its table)")
    r.set_defaults(func=replay_cmd)
