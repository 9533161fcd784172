"""The games people play, saved: one JSON object per line of ``<data folder>/games.jsonl``.

Each line holds the env's game record (``record``: what ``cardzoo replay`` replays), who sat where (``seats``: a
person, ``{"player": "human"}``, or an agent, ``{"agent": "learned", "policy": "<digest>"}``, the digest from
``agents.registry.fingerprint``), where it was played, whether it finished, the env's end-of-game ``info`` and
each person's result. ``replay_entry`` replays a line and checks that it ends exactly as saved; ``rates`` gives the
people's win rates per game, setting and partner with the report's Wilson intervals.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from cardzoo.envs.common.errors import CardzooError, RecordError
from cardzoo.envs.common.record import replay
from cardzoo.evaluation.stats import Rate, wilson

GAMES_FILE = "games.jsonl"
DEFAULT_DATA = Path("cardzoo-data")


FALLBACK_FILE = "cardzoo-unsaved-games.jsonl"  # in the temp folder: where games go when the data file cannot be written


class SaveError(CardzooError, OSError):
    """A game that could not be written; the message names the file and the cause."""


def append(folder: str | Path, entry: dict[str, Any]) -> Path:
    """Add one played game to ``folder/games.jsonl`` (created if needed) and return the file's path; ``SaveError``
    naming the file and the cause if it cannot be written."""
    path = Path(folder) / GAMES_FILE
    return _append(path, entry, lambda: path.parent.mkdir(parents=True, exist_ok=True))


def append_fallback(entry: dict[str, Any]) -> Path:
    """Add one played game to the fallback file in the temp folder (for a data file that cannot be written)."""
    return _append(Path(tempfile.gettempdir()) / FALLBACK_FILE, entry, lambda: None)


def _append(path: Path, entry: dict[str, Any], prepare) -> Path:
    line = json.dumps(entry) + "\n"
    try:
        prepare()
        with open(path, "a") as f:
            f.write(line)
    except OSError as err:
        raise SaveError(f"cannot write {str(path)!r}: {err.strerror or err}") from err
    return path


def is_games_file(path: str | Path) -> bool:
    """Whether ``path`` holds played games (JSON lines with a ``record`` each) rather than one bare record."""
    try:
        first = Path(path).read_text().lstrip().split("\n", 1)[0]
        return isinstance(line := json.loads(first), dict) and "record" in line and "seats" in line
    except (OSError, UnicodeDecodeError, ValueError):
        return False


def read(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """Every game of a games file as ``(line number, entry)``; ``RecordError`` naming the line for a bad one."""
    where = f"games file {str(path)!r}"
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        raise RecordError(f"{where} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise RecordError(f"{where} cannot be read: {err}") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            raise RecordError(f"{where} line {n} is not JSON: {err}") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict) or "seats" not in entry:
            raise RecordError(f"{where} line {n} is not a played game (it needs a record and seats)")
        out.append((n, entry))
    return out


def final_info(env) -> dict[str, Any] | None:
    """The end-of-game info of a replayed env, or None if its game did not finish."""
    info = env.unwrapped.outcome_info
    return dict(info) if info and "outcome" in info else None


def replay_entry(entry: dict[str, Any], where: str):
    """The env that has replayed ``entry``'s record; ``RecordError`` if it cannot, or if it ends otherwise than
    the entry says (a different outcome, or a finished game that is not over)."""
    try:
        env = replay(entry["record"])
    except RecordError as err:
        raise RecordError(f"{where}: {err}") from None
    info = final_info(env)
    saved = entry.get("info")
    if json.loads(json.dumps(info)) != saved:
        raise RecordError(f"{where}: the replay ends {info}, the file says {saved}")
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
