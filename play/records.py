"""The games people play, saved: one JSON object per line of ``<data folder>/games.jsonl``.

Each line holds the env's game record (``record``: what ``cardzoo replay`` replays), who sat where (``seats``: a
person, ``{"player": "human"}``, or an agent, ``{"agent": "learned", "policy": "<digest>"}``, the digest from
``agents.registry.fingerprint``), where it was played, whether it finished, the env's end-of-game ``info`` and
each person's result (``results``).

Writing. ``append`` adds a line under an exclusive ``flock`` on the file, in one ``write`` call, flushed and
fsync'd, so servers and terminals sharing one data folder never interleave or lose a game; a write that fails is
undone (the file is cut back to where it was) and raised as :class:`SaveError` naming the file and the system's
reason. ``append_fallback`` writes to ``fallback_path()`` instead (``<temp folder>/cardzoo-unsaved-<uid>.jsonl``,
locked the same way, created 0600 and never through a link or into another user's file), for a data folder that
stays unwritable; the terminal does so itself, the server retries first.

Reading. A games file is untrusted. ``read`` checks every line: at most ``MAX_LINE_BYTES``, UTF-8, JSON nested at
most ``MAX_DEPTH`` deep, and an entry of the right types throughout (its record as ``envs.common.record`` checks
it). ``replay_entry`` replays a line and checks that it ends exactly as saved: the ``info``, ``finished`` and the
people's ``results`` must be what the replay gives (a lost game edited to say "win" is refused). Who sat where is
taken as saved (the moves cannot show which agent made them). Anything wrong is a :class:`RecordError` naming the
file and the line, and it refuses the whole file: a forged or damaged game is never counted, and rates quietly
computed without some games would be wrong too; fix or delete the named line and run again. The same game saved
twice (an identical record) is not an error: ``distinct`` keeps its first line and names the others, which the
``replay`` and ``evaluate --records`` commands report as a warning and count once.

``rates`` gives the people's win rates per game, setting and partner with the report's Wilson intervals.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from cardzoo.envs.common.errors import CardzooError, RecordError
from cardzoo.envs.common.record import MAX_DEPTH, load_record, replay, too_deep
from cardzoo.envs.common.stats import Rate, wilson
from cardzoo.play.views import result

GAMES_FILE = "games.jsonl"
DEFAULT_DATA = Path("cardzoo-data")
# A Summit Rush game of 100,000 ticks (the max_ticks bound) for four is about 7 MB; anything past this is not a game.
MAX_LINE_BYTES = 16 * 2**20
RESULTS = ("win", "loss", "tie")


class SaveError(CardzooError, OSError):
    """A played game that could not be written (a full disk, a folder that is not writable): the message names the
    file and the system's reason. It is an ``OSError`` too, so code that handles failed writes still catches it."""


# ---------------------------------------------------------------------------- writing
def _line(entry: dict[str, Any]) -> bytes:
    try:
        return (json.dumps(entry, allow_nan=False) + "\n").encode()
    except (TypeError, ValueError, RecursionError) as err:
        raise SaveError(f"the game cannot be written as JSON: {err}") from None


def _write_locked(path: Path, data: bytes, private: bool = False) -> None:
    """Append ``data`` to ``path`` whole or not at all, holding an exclusive lock so that other writers (other
    processes, other servers on the same folder) wait rather than interleave."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | (os.O_NOFOLLOW if private else 0)
    fd = os.open(path, flags, 0o600 if private else 0o644)  # read too: the last byte is checked
    try:
        if private and os.fstat(fd).st_uid != os.getuid():  # a file someone else planted in the shared temp folder
            raise PermissionError(f"{path} belongs to another user")
        fcntl.flock(fd, fcntl.LOCK_EX)
        end = os.lseek(fd, 0, os.SEEK_END)
        if end and os.pread(fd, 1, end - 1) != b"\n":  # a line cut short by a crash: ours still starts a line
            data = b"\n" + data
        try:
            written = os.write(fd, data)  # one call: the whole line, or an error
            if written != len(data):
                raise OSError(f"only {written} of {len(data)} bytes were written (is the disk full?)")
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, end)  # no half line left behind for the next writer or reader
            except OSError:
                pass  # a device that cannot be cut (/dev/full): the next append starts a new line anyway
            raise
    finally:
        os.close(fd)  # also releases the lock


def append(folder: str | Path, entry: dict[str, Any]) -> Path:
    """Add one played game to ``folder/games.jsonl`` (created if needed) and return the file's path;
    :class:`SaveError` if it cannot be written (the file is then as it was)."""
    path = Path(folder) / GAMES_FILE
    data = _line(entry)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_locked(path, data)
    except OSError as err:
        raise SaveError(f"cannot save the game to {path}: {err.strerror or err}") from None
    return path


def fallback_path() -> Path:
    """Where games go when the data folder cannot take them: a file of this user's in the temporary folder."""
    return Path(tempfile.gettempdir()) / f"cardzoo-unsaved-{os.getuid()}.jsonl"


def append_fallback(entry: dict[str, Any]) -> Path:
    """Add one played game to :func:`fallback_path` (locked as ``append``) and return its path; :class:`SaveError`
    if that fails too."""
    path = fallback_path()
    try:
        _write_locked(path, _line(entry), private=True)
    except OSError as err:
        raise SaveError(f"cannot save the game to the fallback file {path} either: {err.strerror or err}") from None
    return path


# ---------------------------------------------------------------------------- reading
def _first_line(path: str | Path) -> bytes | None:
    with open(path, "rb") as f:
        while raw := f.readline(MAX_LINE_BYTES + 1):
            if raw.strip():
                return raw
    return None


def is_games_file(path: str | Path) -> bool:
    """Whether ``path`` holds played games (JSON lines with a ``record`` each) rather than one bare record (which
    ``play --save`` writes indented, so its first line is ``{``)."""
    try:
        first = _first_line(path)
        if first is None:
            return False
        if len(first) > MAX_LINE_BYTES:
            return True  # no record file starts so; ``read`` will name the line
        line = json.loads(first.decode(errors="replace"))
        return isinstance(line, dict) and "record" in line and "seats" in line
    except (OSError, ValueError, RecursionError):
        return False


def _lines(path: str | Path, where: str):
    """``(line number, text)`` of every non-blank line, each checked for length and encoding."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise RecordError(f"{where} does not exist") from None
    except OSError as err:
        raise RecordError(f"{where} cannot be read: {err}") from None
    with f:
        n = 0
        while True:
            try:
                raw = f.readline(MAX_LINE_BYTES + 1)
            except OSError as err:
                raise RecordError(f"{where} cannot be read after line {n}: {err}") from None
            if not raw:
                return
            n += 1
            if len(raw) > MAX_LINE_BYTES:
                raise RecordError(f"{where} line {n} is longer than {MAX_LINE_BYTES} bytes; no game is so long")
            try:
                text = raw.decode()
            except UnicodeDecodeError as err:
                raise RecordError(f"{where} line {n} is not UTF-8 text: byte {err.start + 1} is "
                                  f"{raw[err.start:err.start + 1]!r}") from None
            if text.strip():
                yield n, text


def check_entry(entry: Any, where: str) -> dict[str, Any]:
    """``entry`` if it has the shape and types of a played game; :class:`RecordError` naming the field if not."""
    if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict) or "seats" not in entry:
        raise RecordError(f"{where} is not a played game (it needs a record and seats)")
    deep = too_deep(entry)
    if deep:
        raise RecordError(f"{where}: {deep} is nested more than {MAX_DEPTH} levels deep")
    record, _ = load_record(entry["record"])  # its types, before anything reads them
    if record.get("kind") != "parallel":  # the env would refuse these only when replaying; ``read`` names them all
        for i, action in enumerate(record["actions"]):
            if not isinstance(action, int) or isinstance(action, bool):
                raise RecordError(f"{where}: record.actions[{i}] must be an integer, got {json.dumps(action)[:40]}")
    seats = entry["seats"]
    if not isinstance(seats, dict) or not seats:
        raise RecordError(f"{where}: seats must be an object of seat -> player, got {type(seats).__name__}")
    for name, seat in seats.items():
        ok = isinstance(seat, dict) and ("player" in seat) != ("agent" in seat) and (
            isinstance(seat.get("player"), str)
            or isinstance(seat.get("agent"), str) and isinstance(seat.get("policy", ""), (str, type(None))))
        if not ok:
            raise RecordError(f"{where}: seats.{name} must be {{\"player\": name}} or {{\"agent\": name, \"policy\": "
                              f"digest}}, got {json.dumps(seat)[:80]}")
    if entry.get("cardzoo_game", 1) != 1 or isinstance(entry.get("cardzoo_game"), bool):
        raise RecordError(f"{where}: cardzoo_game (the line format) must be 1, got "
                          f"{json.dumps(entry['cardzoo_game'])[:40]}")
    for key in ("where", "started", "saved"):
        if not isinstance(entry.get(key, ""), str):
            raise RecordError(f"{where}: {key} must be a string, got {json.dumps(entry[key])[:40]}")
    if not isinstance(entry.get("finished"), bool):
        raise RecordError(f"{where}: finished must be true or false, got {json.dumps(entry.get('finished'))[:40]}")
    if not isinstance(entry.get("info"), (dict, type(None))):
        raise RecordError(f"{where}: info must be an object or null, got {type(entry['info']).__name__}")
    results = entry.get("results")
    if results is not None and not (isinstance(results, dict) and all(r in RESULTS for r in results.values())):
        raise RecordError(f"{where}: results must be null or an object of seat -> {' / '.join(RESULTS)}, got "
                          f"{json.dumps(results)[:80]}")
    return entry


def line_name(path: str | Path, n: int) -> str:
    """How messages name line ``n`` of a games file."""
    return f"games file {str(path)!r} line {n}"


def read(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """Every game of a games file as ``(line number, entry)``, each checked by ``check_entry``; ``RecordError``
    naming the file and line of the first bad one (the file is refused whole)."""
    where = f"games file {str(path)!r}"
    out = []
    for n, line in _lines(path, where):
        at = line_name(path, n)
        try:
            entry = json.loads(line)
        except RecursionError:
            raise RecordError(f"{at} is nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as err:  # not JSON, or an integer of over 4300 digits
            raise RecordError(f"{at} is not JSON: {err}") from None
        try:
            out.append((n, check_entry(entry, at)))
        except RecordError as err:
            message = str(err)
            if not message.startswith(at):  # load_record's message starts "record: ..."
                message = f"{at}: {message}"
            raise RecordError(message) from None
    return out


def distinct(games: list[tuple[int, dict[str, Any]]]) -> tuple[list[tuple[int, dict[str, Any]]], list[list[int]]]:
    """The games with each one once (its first line), and the line numbers of every game saved more than once
    (the same record -- deal, options and moves -- with the same game id and start time: a person who plays a twin
    deal the same way against a deterministic agent has played a second game, which counts)."""
    first: dict[str, list[int]] = {}
    kept = []
    for n, entry in games:
        key = json.dumps([entry.get("game"), entry.get("started"), entry["record"]], sort_keys=True)
        if key not in first:
            first[key] = []
            kept.append((n, entry))
        first[key].append(n)
    return kept, [lines for lines in first.values() if len(lines) > 1]


def duplicate_warning(path: str | Path, lines: list[int]) -> str:
    return (f"warning: {path} lines {', '.join(map(str, lines))} hold the same game (the same record); it is counted "
            f"once, as line {lines[0]}")


def load(path: str | Path) -> tuple[list[tuple[int, dict[str, Any]]], list[list[int]]]:
    """The games of a games file as ``evaluate --records`` counts them: every line read and replayed to the ending
    it saved (``RecordError`` naming the first line that is not), each game once; and the lines of the games saved
    more than once (see ``distinct``)."""
    games = read(path)
    for n, entry in games:
        replay_entry(entry, line_name(path, n))
    return distinct(games)


def final_info(env) -> dict[str, Any] | None:
    """The end-of-game info of a replayed env, or None if its game did not finish."""
    info = env.unwrapped.outcome_info
    return dict(info) if info and "outcome" in info else None


def replay_entry(entry: dict[str, Any], where: str):
    """The env that has replayed ``entry``'s record; ``RecordError`` if it cannot, or if it ends otherwise than
    the entry says: a different ``info``, ``finished`` or people's ``results``, or seats not the game's."""
    check_entry(entry, where)
    try:
        env = replay(entry["record"])
    except RecordError as err:
        raise RecordError(f"{where}: {err}") from None
    info = final_info(env)
    saved = entry.get("info")
    if json.loads(json.dumps(info)) != saved:
        raise RecordError(f"{where}: the replay ends {info}, the file says {saved}")
    agents = list(env.unwrapped.possible_agents)
    if list(entry["seats"]) != agents:
        raise RecordError(f"{where}: the seats are {list(entry['seats'])}, the game's are {agents}")
    if entry["finished"] != (info is not None):
        raise RecordError(f"{where}: the file says finished={json.dumps(entry['finished'])}, the replay "
                          f"{'ends' if info else 'does not end'}")
    game = entry["record"]["env"]
    humans = [i for i, seat in enumerate(entry["seats"].values()) if "player" in seat]
    expected = None if info is None else {agents[i]: result(game, info, i) for i in humans}
    if entry.get("results") != expected:
        raise RecordError(f"{where}: the people's results are {json.dumps(entry.get('results'))}, the replay gives "
                          f"{json.dumps(expected)}")
    return env


def rates_setting(record: dict[str, Any]) -> str:
    """A game's setting: its options but the illegal-move mode (always strict for people)."""
    options = {k: v for k, v in (record.get("options") or {}).items() if k != "illegal_action"}
    return " ".join(f"{k}={v}" for k, v in sorted(options.items())) or "defaults"


def players(entry: dict[str, Any]) -> str:
    """Who sat where, in seat order: "human + learned (<digest>)"."""
    names = []
    for seat in entry["seats"].values():
        if "agent" in seat:
            names.append(seat["agent"] + (f" ({seat['policy']})" if seat.get("policy") else ""))
        else:
            names.append(seat.get("player", "?"))
    return " + ".join(names)


def rates(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The people's win rates per game, setting (options) and seating, with Wilson 95 % intervals. A game counts
    once per person in it; unfinished games are counted apart; a Rook tie is not a win."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = defaultdict(lambda: {"wins": 0, "games": 0, "unfinished": 0})
    for entry in entries:
        record = entry["record"]
        g = groups[(record["env"], rates_setting(record), players(entry))]
        if not entry.get("finished"):
            g["unfinished"] += 1
            continue
        for outcome in (entry.get("results") or {}).values():
            g["games"] += 1
            g["wins"] += outcome == "win"
    rows = []
    for (game, setting, seating), g in sorted(groups.items()):
        rate: Rate = wilson(g["wins"], g["games"])
        rows.append({"game": game, "setting": setting, "players": seating, "games": g["games"], "wins": g["wins"],
                     "rate": rate, "unfinished": g["unfinished"]})
    return rows


def rates_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| game | setting | players | games | people's wins (Wilson 95 %) | unfinished |",
             "|---|---|---|---:|---:|---:|"]
    for r in rows:
        shown = str(r["rate"]) if r["games"] else "-"
        lines.append(f"| {r['game']} | {r['setting']} | {r['players']} | {r['games']} | {r['wins']}: {shown} | "
                     f"{r['unfinished']} |")
    return "\n".join(lines)
