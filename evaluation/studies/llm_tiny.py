"""The language-model seat's sizes, measured with the tiny random model (``agents/llm/tiny.py``): per game and view
mode (legal moves listed or not), the share of decisions whose first reply is legal, tokens per decision and per
game, and the prompt's characters per decision (tokenizer-free: the tiny model's byte-level BPE of 512 tokens cuts
text finer than a real model's, so its token counts are an upper bound of the same text's for a real tokenizer).

The model is noise: its legal first replies measure how forgiving the parser is of random text, not play. Every
seat is the tiny model (``hf:`` with the spec's defaults: 32 tokens a reply, 2 retries, then a random legal move),
on each game's default play-page setting, deals ``0 .. games-1``.

    nice -n 5 python -m cardzoo.evaluation.studies.llm_tiny --games 3 --out evaluation/results/llm_tiny.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

from cardzoo.agents.llm.tiny import build_tiny_model
from cardzoo.agents.loops import play_env_game
from cardzoo.agents.registry import make_agent
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.common.record import make_env
from cardzoo.envs.registry import GAMES
from cardzoo.evaluation.matches.llm_table import setting
from cardzoo.evaluation.matches.runner import GAME_LOOPS


def measure(folder: Path, game: str, legal_moves: bool, games: int) -> dict:
    spec = GAMES[game]
    options = setting(game)
    env = make_env(spec.env_id, illegal_action="raise", **options)
    name = f"hf:{folder}?threads=1&legal_moves={int(legal_moves)}"
    agents = [make_agent(name, env, seat=i) for i in range(len(env.possible_agents))]
    loop = GAME_LOOPS.get(spec.env_id, play_env_game)
    decisions = first_legal = attempts = prompt_tokens = completion_tokens = prompt_chars = 0
    per_game, started = [], time.perf_counter()
    for seed in range(games):
        for i, agent in enumerate(agents):
            agent.reset(seed=agent_seed(seed, i))
        loop(env, agents, seed)
        tokens = 0
        for agent in agents:
            s = agent.summary()
            decisions += s["decisions"]
            first_legal += s["first_legal"]
            attempts += s["attempts"]
            prompt_tokens += s["prompt_tokens"]
            completion_tokens += s["completion_tokens"]
            tokens += s["prompt_tokens"] + s["completion_tokens"]
            prompt_chars += sum(len(m["content"]) for d in agent.decisions for m in d["prompt"])
        per_game.append(tokens)
    return {"game": spec.env_id, "options": options, "legal_moves": legal_moves, "games": games,
            "decisions": decisions, "attempts": attempts, "first_legal": first_legal,
            "first_legal_share": first_legal / decisions, "attempts_per_decision": attempts / decisions,
            "prompt_tokens_per_attempt": prompt_tokens / attempts,
            "completion_tokens_per_attempt": completion_tokens / attempts,
            "tokens_per_decision": (prompt_tokens + completion_tokens) / decisions,
            "prompt_chars_per_decision": prompt_chars / decisions,
            "decisions_per_game": decisions / games, "tokens_per_game": sum(per_game) / games,
            "tokens_per_game_each": per_game, "seconds": round(time.perf_counter() - started, 1)}


def markdown(rows: list[dict]) -> str:
    lines = ["| game | legal moves listed | decisions / game | first reply legal | replies / decision | "
             "prompt characters / decision | tokens / decision | tokens / game |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['game']} | {'yes' if r['legal_moves'] else 'no'} | {r['decisions_per_game']:.1f} | "
                     f"{100 * r['first_legal_share']:.1f}% | {r['attempts_per_decision']:.2f} | "
                     f"{r['prompt_chars_per_decision']:,.0f} | {r['tokens_per_decision']:,.0f} | "
                     f"{r['tokens_per_game']:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3, help="games per game and view mode")
    parser.add_argument("--out", default="evaluation/results/llm_tiny.json")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_tiny_model(Path(tmp) / "tiny", seed=0)
        for game in GAMES:
            for legal_moves in (True, False):
                rows.append(measure(folder, game, legal_moves, args.games))
                print(markdown(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    out = Path(args.out)
    command = "python -m cardzoo.evaluation.studies.llm_tiny " + shlex.join(argv if argv is not None else sys.argv[1:])
    out.write_text(json.dumps({"command": command, "model": "build_tiny_model(seed=0): 2-layer Llama, width 32, "
                               "byte-level BPE of 512 tokens, random weights", "rows": rows}, indent=1) + "\n")
    out.with_suffix(".md").write_text(f"# The tiny random model at every table\n\n`{command}`\n\n{markdown(rows)}\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
