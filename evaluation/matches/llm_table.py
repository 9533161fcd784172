"""The language-model table: ``cardzoo evaluate --agents llm:MODEL ...`` (any agent spec works; made for ``llm:`` and
``hf:``).

For each game (``--only``, default every game) in its play-page default setting (Rope Team normal, Summit Rush
normal with talk, Rook one round), the agents given sit in seat order (cycled; a two-sided game given one agent seats
the game's baseline opposite it) and play deals ``0 .. games-1``; the same deals are played again with every seat of
the first agent (the *candidate*) taken by the game's baseline (the simple strategy; Rook's heuristic). A row
gives the candidate's win rate (Rook: rounds won by the candidate's first seat) with its Wilson 95 % interval, the
baseline's on the same deals, the paired difference (deals only one of them won, McNemar's exact p), and for the
candidate's seats, when it is a language model: the invalid reply rate (refused replies per request), the no-reply
rate (timeouts, HTTP or connection errors, malformed responses per request), the defaults
played per decision, the share of decisions whose first reply was legal, tokens per game (prompt + completion;
"n/a" if the endpoint gives no counts) and seconds per game. Written to ``--out`` (default ``reports/llm``):
``llm_table.md``, ``llm_table.json`` (the rows, the seats' settings, the command) and ``decisions.jsonl`` (one line
per game and language-model seat: every decision's prompt, replies, tokens, latency, refusals and default).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from cardzoo.agents.loops import play_env_game
from cardzoo.agents.registry import make_agent
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.common.record import make_env
from cardzoo.envs.common.stats import format_p, paired, wilson
from cardzoo.envs.registry import GAMES, spec

from .runner import GAME_LOOPS, Matchup, run

COUNTS = ("decisions", "attempts", "invalid", "failed", "first_legal", "defaults", "prompt_tokens",
          "completion_tokens", "seconds")


def setting(game: str) -> dict[str, Any]:
    """The env options of ``game``'s default setting on the play page."""
    s = spec(game)
    return dict(s.variants().get(s.default_variant, {}))


def seating(game: str, agents: list[str], seats: int) -> list[str]:
    s = spec(game)
    if not s.cooperative and len(agents) == 1:
        return [agents[0]] + [s.baseline] * (seats - 1)
    return [agents[i % len(agents)] for i in range(seats)]


def won(game: str, info: dict[str, Any], seat_names: list[str], seat: int) -> bool:
    s = spec(game)
    if s.win is not None:
        return info.get("outcome") == s.win
    return info.get("winner") == seat_names[seat]


def play_candidate(game: str, seats: list[str], games: int, log) -> tuple[list[bool], dict[str, Any], dict]:
    """The candidate's games: wins, its seats' counts added up, and its settings (one record line per game and
    language-model seat written to ``log``)."""
    s = spec(game)
    options = setting(game)
    env = make_env(s.env_id, illegal_action="raise", **options)
    names = list(env.possible_agents)
    agents = [make_agent(name, env, seat=i) for i, name in enumerate(seats)]
    loop = GAME_LOOPS.get(s.env_id, play_env_game)
    candidate = [i for i, name in enumerate(seats) if name == seats[0]]
    totals: dict[str, Any] = {k: 0 for k in COUNTS}
    known_tokens = True
    wins = []
    started = time.perf_counter()
    for seed in range(games):
        for i, agent in enumerate(agents):
            agent.reset(seed=agent_seed(seed, i))
        record = loop(env, agents, seed)
        wins.append(won(game, record, names, candidate[0]))
        for i in candidate:
            summary = getattr(agents[i], "summary", None)
            if summary is None:
                continue
            counts = summary()
            for k in COUNTS:
                if counts[k] is None:
                    known_tokens = False
                else:
                    totals[k] += counts[k]
            log.write(json.dumps({"game": s.env_id, "options": options, "seed": seed, "seat": names[i],
                                  "agent": seats[i], "outcome": record.get("outcome"), "won": wins[-1],
                                  "summary": counts, "decisions": agents[i].decisions}) + "\n")
        print(f"  {s.env_id} game {seed}: {record.get('outcome')}", file=sys.stderr, flush=True)
    totals["wall_seconds"] = round(time.perf_counter() - started, 3)
    totals["tokens_known"] = known_tokens
    language = [agents[i] for i in candidate if hasattr(agents[i], "settings")]
    return wins, totals, language[0].settings() if language else {}


def row(game: str, seats: list[str], games: int, log) -> dict[str, Any]:
    s = spec(game)
    wins, totals, settings = play_candidate(game, seats, games, log)
    baseline_seats = [s.baseline if name == seats[0] else name for name in seats]
    names = list(make_env(s.env_id, **setting(game)).possible_agents)
    records = run(Matchup.of(s.env_id, baseline_seats, **setting(game)), games, workers=1, progress=False)
    base = [won(game, r, names, 0) for r in records]  # the candidate sits first
    rate, base_rate, pair = wilson(sum(wins), games), wilson(sum(base), games), paired(wins, base)
    language = totals["decisions"] > 0
    tokens = totals["prompt_tokens"] + totals["completion_tokens"] if totals["tokens_known"] else None
    return {
        "game": s.env_id, "options": setting(game), "seats": seats, "baseline_seats": baseline_seats,
        "games": games, "wins": sum(wins), "win_rate": rate.rate, "win_low": rate.low, "win_high": rate.high,
        "baseline_wins": sum(base), "baseline_rate": base_rate.rate, "only_candidate": pair.only_a,
        "only_baseline": pair.only_b, "p_value": pair.p_value, "counts": totals, "settings": settings,
        "invalid_rate": totals["invalid"] / totals["attempts"] if language and totals["attempts"] else None,
        "no_reply_rate": totals["failed"] / totals["attempts"] if language and totals["attempts"] else None,
        "default_rate": totals["defaults"] / totals["decisions"] if language else None,
        "first_legal_rate": totals["first_legal"] / totals["decisions"] if language else None,
        "tokens_per_game": tokens / games if tokens is not None and language else None,
        "seconds_per_game": totals["seconds"] / games if language else totals["wall_seconds"] / games,
        "text": {"rate": str(rate), "baseline": str(base_rate), "paired": f"{pair.only_a} / {pair.only_b}, "
                 f"{format_p(pair.p_value)}"},
    }


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| game | setting | seats | games | win rate [95 % CI] | baseline, same deals | only this / only "
             "baseline | invalid replies | no reply | defaults | first reply legal | tokens / game | s / game |",
             "|---|---|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        opts = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "default"
        tokens = "n/a" if r["tokens_per_game"] is None else f"{r['tokens_per_game']:,.0f}"
        lines.append(f"| {r['game']} | {opts} | {' + '.join(r['seats'])} | {r['games']} | {r['text']['rate']} | "
                     f"{r['text']['baseline']} ({' + '.join(r['baseline_seats'])}) | {r['text']['paired']} | "
                     f"{_pct(r['invalid_rate'])} | {_pct(r['no_reply_rate'])} | {_pct(r['default_rate'])} | "
                     f"{_pct(r['first_legal_rate'])} | "
                     f"{tokens} | {r['seconds_per_game']:.2f} |")
    return "\n".join(lines)


def main(agents: list[str], games: int, only: list[str] | None, out: Path, command: str) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    chosen = [spec(g).name for g in only] if only else list(GAMES)
    rows = []
    with open(out / "decisions.jsonl", "w") as log:
        for game in chosen:
            seats = seating(game, agents, len(make_env(spec(game).env_id, **setting(game)).possible_agents))
            print(f"{spec(game).title}: {' + '.join(seats)}, {games} games", file=sys.stderr, flush=True)
            rows.append(row(game, seats, games, log))
    table = markdown(rows)
    (out / "llm_table.md").write_text(
        f"# Language-model table\n\n`{command}`\n\n{table}\n\nWin rates with Wilson 95 % intervals; the baseline "
        "plays the same deals in the candidate's seats; \"only this / only baseline\": deals one of them won and "
        "the other lost (McNemar's exact p). Invalid replies (refused moves) and no reply (timeouts, HTTP and "
        "connection errors) per request, defaults (a random legal move) per "
        "decision, first reply legal per decision. Every decision is in decisions.jsonl.\n")
    (out / "llm_table.json").write_text(json.dumps({"command": command, "rows": rows}, indent=1) + "\n")
    print(table)
    print(f"\nwritten: {out / 'llm_table.md'}, {out / 'llm_table.json'}, {out / 'decisions.jsonl'}")
    return rows
