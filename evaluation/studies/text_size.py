"""How long the text views are: characters (and an estimate of tokens) per decision and per game, for each game and
each view mode (with and without the numbered legal moves).

Every seat is played by its game's baseline (``simple`` for Rope Team and Summit Rush, ``heuristic`` for Rook) on
deals ``env.reset(seed=i)``, i = 0..games-1, and each seat's views of both modes are fed every observation it
decides on (Summit Rush: every tick). A decision's characters are those of ``view.observe``; a game's are the sum
over every seat's decisions, plus each seat's ``view.rules()`` once (counted apart as ``rules_chars``). Tokens are
estimated as characters / 4 (no tokenizer is installed offline; a real tokenizer's counts may be added beside
them).

Run (about half a minute)::

    python -m cardzoo.evaluation.studies.text_size --games 50

Writes ``evaluation/results/text_size.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from cardzoo.agents.registry import make_agent
from cardzoo.envs.registry import spec
from cardzoo.envs.text import text_view

from ..report.model import RESULTS

# (game, env options): each game at its default setting; Rook also as single rounds, the form training uses.
SETTINGS = (("rope_team", {"level": "normal"}), ("rook", {}), ("rook", {"rounds": 1}),
            ("summit_rush", {"level": "normal"}), ("summit_rush", {"level": "normal", "talk": False}))
CHARS_PER_TOKEN = 4


def measure(game: str, options: dict, games: int) -> list[dict]:
    """One row per view mode: characters per decision and per game over ``games`` deals."""
    game_spec = spec(game)
    per_decision = {True: [], False: []}
    per_game = {True: [], False: []}
    rules = {}
    for seed in range(games):
        env = game_spec.make(**options)
        agents = {a: make_agent(game_spec.baseline, game_spec.env_id, seed=seed) for a in env.possible_agents}
        views = {(a, mode): text_view(game, options, legal_moves=mode) for a in env.possible_agents
                 for mode in (True, False)}
        totals = {True: 0, False: 0}
        for mode in (True, False):
            rules[mode] = len(views[env.possible_agents[0], mode].rules())
            totals[mode] += rules[mode] * len(env.possible_agents)

        def decide(agent, obs, agents=agents, views=views, totals=totals):
            for mode in (True, False):
                chars = len(views[agent, mode].observe(obs["observation"], obs["action_mask"]))
                per_decision[mode].append(chars)
                totals[mode] += chars
            return agents[agent].act(obs["observation"], obs["action_mask"])

        if game_spec.parallel:
            observations, _ = env.reset(seed=seed)
            while env.agents:
                observations, *_ = env.step({a: decide(a, observations[a]) for a in env.agents})
        else:
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                env.step(None if term or trunc else decide(agent, obs))
        env.close()
        for mode in (True, False):
            per_game[mode].append(totals[mode])
    rows = []
    for mode in (True, False):
        d, g = per_decision[mode], per_game[mode]
        rows.append({
            "game": game_spec.name, "options": options, "legal_moves": mode, "games": games, "decisions": len(d),
            "rules_chars": rules[mode], "chars_per_decision_mean": round(statistics.fmean(d), 1),
            "chars_per_decision_median": statistics.median(d), "chars_per_decision_max": max(d),
            "chars_per_game_mean": round(statistics.fmean(g), 1), "chars_per_game_max": max(g),
            "tokens_per_decision_mean_est": round(statistics.fmean(d) / CHARS_PER_TOKEN, 1),
            "tokens_per_game_mean_est": round(statistics.fmean(g) / CHARS_PER_TOKEN, 1),
        })
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="deals per game and setting (seeds 0..games-1)")
    parser.add_argument("--out", type=Path, default=RESULTS / "text_size.json")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    rows = [row for game, options in SETTINGS for row in measure(game, options, args.games)]
    result = {
        "command": f"python -m cardzoo.evaluation.studies.text_size --games {args.games}",
        "tokens": f"estimated as characters / {CHARS_PER_TOKEN} (no tokenizer installed offline)",
        "agents": "each game's baseline in every seat; a decision is one seat's observe (Summit Rush: one tick)",
        "rows": rows,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for row in rows:
        print(f"{row['game']:<12} {json.dumps(row['options']):<36} list={row['legal_moves']!s:<5} "
              f"{row['chars_per_decision_mean']:>7} chars/decision  {row['chars_per_game_mean']:>9} chars/game")


if __name__ == "__main__":
    main()
