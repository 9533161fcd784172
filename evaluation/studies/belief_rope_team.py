"""The Rope Team search with a learned belief (``search_belief``) against the importance-sampled search: how much of
the search's gain over its blueprint it keeps, at how much less compute.

Two parts, both resumable (every finished unit is a line of ``--rows``, a JSONL file; a rerun skips what is there
and appends the rest, so a later session can bring the deals to 1,000 per level with the same command):

1. **The read** (``--positions``): at decisions of held-out self-play games (deals ``READ_BASE_SEED + i``, none the
   belief was trained on, levels in turn), how likely the partner's true hand is under each belief: the mean
   log-loss per card the partner may hold (nats; lower is better) of the card frequencies of the worlds drawn
   (smoothed: (count + 1/2) / (worlds + 1)), for the uniform draw over the allowed cards (the hard facts alone),
   the importance-sampled search's worlds (256 drawn and weighted, 64 resampled) and the learned belief's (64), and
   the CPU ms each belief takes. Games of ``simple`` in both seats (the blueprint the search assumes, read by the
   ``rope_team_belief_simple`` network) and of ``learned`` (read by ``rope_team_belief``, its own self-play; the
   importance sampler still assumes the simple strategy there).
2. **Play** (``--games``): the report's deals ``0 .. games - 1`` of each level (``reset(seed=i)``, agent seeds as the
   runner's), every team on the same deals, deal by deal, so every comparison is paired (McNemar):
   ``search_belief`` in both seats (the learned belief, 128 rollouts a decision), ``search`` at its defaults (256
   worlds weighted, 384 rollouts), ``search`` at ``search_belief``'s budget (64 worlds weighted, 128 rollouts),
   ``simple`` and ``learned``. CPU ms per decision (``time.process_time`` inside the search seats' decisions).

The summary (``--out``, JSON, and a PNG next to it) has win rates with Wilson intervals, paired differences with
the simple strategy and with the default search, the share of the default search's gain over the simple strategy
that each cheaper search keeps, and the ms per decision; ``cross`` the teams with a learned partner, paired with
``learned`` and ``simple`` on the same deals. Run alone and niced (one process). The committed results came from
these five runs, in order (``--rows evaluation/results/rope_team_belief_rows.jsonl --out
evaluation/results/rope_team_belief.json`` each; the file lists them, each continued the rows of the ones before,
none was stopped by its ``--minutes``), then the rows' CPU seconds were rounded to 5 decimals (the first runs wrote
full floats) and the summary recomputed from them::

    nice -n 5 python -m cardzoo.evaluation.studies.belief_rope_team --positions 150 --games 200 \
        --levels hard expert --minutes 14
    ... --positions 150 --games 300 --levels hard expert --minutes 5
    ... --positions 150 --cross 80 --levels hard --minutes 3
    ... --positions 150 --games 400 --levels hard expert --minutes 2.5
    ... --positions 150 --cross 200 --levels hard expert --minutes 3

A sixth run, in the next session, took the play to 1,000 deals per level (``--games 1000 --levels hard expert
--minutes 20``, no ``--positions``: the read stands on its 150 games a player); its CPU seconds are full floats.
The same command with a larger ``--cross`` brings the cross-play to 1,000 deals too.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from cardzoo.agents import rope_team_belief as belief
from cardzoo.agents.registry import make_agent
from cardzoo.agents.rope_team_search import RopeTeamSearch
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.common import charts
from cardzoo.envs.common.cards import mask_to_bits
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.registry import GAMES
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.env import make_config
from cardzoo.envs.rope_team.observer import LAYOUT, decode, observe_bits

from .search_rope_team import play

LEVELS = GAMES["rope_team"].levels
READ_BASE_SEED = 95_000_000  # not the report's, training's held-out (10M), distillation's (30M), the belief's (50M+)
SMALL = {"worlds": 64, "rollouts": 128, "min_worlds": 8}  # the default search at search_belief's rollouts
TEAMS = {
    "search_belief": lambda: make_agent("search_belief", "rope_team_v0"),
    "search": lambda: RopeTeamSearch(),
    "search_small": lambda: RopeTeamSearch(**SMALL),
    "simple": lambda: make_agent("simple", "rope_team_v0"),
    "learned": lambda: make_agent("learned", "rope_team_v0"),
}
# With a learned partner (``--cross`` deals, both seat orders): the search reading it with the belief trained on the
# learned policy's self-play, against the importance-sampled search, which assumes the simple strategy of it.
CROSS = {
    "search_belief_learned+learned": ("search_belief_learned", "learned"),
    "learned+search_belief_learned": ("learned", "search_belief_learned"),
    "search+learned": ("search", "learned"),
    "learned+search": ("learned", "search"),
}
SEATS = {**TEAMS, "search_belief_learned": lambda: belief.RopeTeamBeliefSearch(belief="rope_team_belief")}
READERS = {"simple": "rope_team_belief_simple", "learned": "rope_team_belief"}


# ----------------------------------------------------------------------------- 1. the read
class _Reader(RopeTeamSearch):
    """Follows a seat's game as the search does (its memory of the deal) and scores the beliefs at its decisions;
    the card is the player's (``player``), never the search's."""

    def __init__(self, seed: int, net: belief.BeliefNet):
        super().__init__(seed, rollouts=128, min_worlds=8)
        self.net = net

    def follow(self, bits: int, card: int) -> None:
        """Remember a decision the player made (as the search's ``act_bits`` does with its own card)."""
        self._remember(decode(bits))
        self.plays.append((0, card))

    def read(self, bits: int, card: int, partner_hand: int) -> dict | None:
        obs = decode(bits)
        table = self._remember(obs)
        try:
            return None if obs.open_hands else self._scores(obs, table, bits, partner_hand)
        finally:
            self.plays.append((0, card))

    def _scores(self, obs, table, bits: int, partner_hand: int) -> dict | None:
        allowed_void = 0
        for p in self.partner_plays:
            if p.table.led is not None and p.card // 13 != p.table.led // 13:
                allowed_void |= 1 << (p.table.led // 13)
        vector = LAYOUT.to_array(bits)
        allowed = int(belief.allowed_cards(vector[None], np.array([allowed_void]))[0])
        cards = np.array([c for c in range(52) if allowed >> c & 1], np.uint64)
        if len(cards) <= partner_hand.bit_count():
            return None  # nothing to read: the partner holds every allowed card
        held = (np.uint64(partner_hand) >> cards) & np.uint64(1) == 1
        out = {"cards": len(cards)}
        u = partner_hand.bit_count() / len(cards)
        out["uniform"] = -float(np.where(held, np.log(u), np.log(1 - u)).sum())
        for name in ("importance", "learned"):
            self.belief = self.net if name == "learned" else None
            start = time.process_time()
            worlds = self._belief(obs, table, 64)
            out[f"{name}_ms"] = 1e3 * (time.process_time() - start)
            if worlds is None:
                return None
            counts = ((worlds["partner"][:, None] >> cards) & np.uint64(1)).sum(axis=0)
            q = (counts + 0.5) / (len(worlds["partner"]) + 1.0)
            out[name] = -float(np.where(held, np.log(q), np.log(1 - q)).sum())
        self.belief = None
        return out


def read_game(player: str, index: int) -> list[dict]:
    """Game ``READ_BASE_SEED + index`` (level ``index % 4``) played by ``player`` in both seats; the beliefs' scores
    at every decision with more than one legal card."""
    seed = READ_BASE_SEED + index
    level = LEVELS[index % len(LEVELS)]
    s = rules.deal(make_config(level), seed)
    net = belief.load_belief(READERS[player])
    seats = [make_agent(player, "rope_team_v0", seed=agent_seed(seed, k)) for k in range(2)]
    readers = [_Reader(agent_seed(seed, k), net) for k in range(2)]
    rows = []
    while s.outcome is None:
        me = s.to_move
        legal = rules.legal_mask(s)
        bits = observe_bits(s, me)
        card = seats[me].act(LAYOUT.to_array(bits), mask_to_bits(legal))
        if legal.bit_count() > 1:
            row = readers[me].read(bits, card, s.hands[1 - me])
            if row is not None:
                rows.append({**row, "level": level})
        else:
            readers[me].follow(bits, card)
        rules.play(s, card)
    return rows


_SUMMED = ("cards", "uniform", "importance", "learned", "importance_ms", "learned_ms")


def summarise_read(rows: list[dict]) -> dict:
    """Per player: the beliefs' log-loss per allowed card and ms per belief, over every decision read (the rows are
    one per game, the decisions' scores summed)."""
    out = {}
    for player in READERS:
        mine = [r for r in rows if r["player"] == player]
        decisions, cards = sum(r["decisions"] for r in mine), sum(r["cards"] for r in mine)
        if not cards:
            continue
        entry = {"games": len(mine), "decisions": decisions, "allowed_cards": cards, "belief_file": READERS[player]}
        for name in ("uniform", "importance", "learned"):
            entry[f"{name}_loss_per_card"] = sum(r[name] for r in mine) / cards
        for name in ("importance", "learned"):
            entry[f"{name}_ms"] = sum(r[f"{name}_ms"] for r in mine) / decisions
        out[player] = entry
    return out


# ----------------------------------------------------------------------------- 2. play
def play_deal(level: str, seed: int, team: str) -> dict:
    agents = [SEATS[name]() for name in CROSS.get(team, (team, team))]
    clock = {"seconds": [], "searched": [], "departed": []}
    record = play(level, seed, agents, clock)
    seconds = np.array(clock["seconds"])
    searched = np.array(clock["searched"], bool)
    return {"outcome": record["outcome"], "decisions": len(seconds), "cpu_seconds": round(float(seconds.sum()), 5),
            "searched": int(searched.sum()), "searched_seconds": round(float(seconds[searched].sum()), 5),
            "departed": int(np.sum(clock["departed"]))}


def summarise_play(rows: list[dict], levels: list[str]) -> dict:
    out = {}
    for level in levels:
        by_team = {t: {r["seed"]: r for r in rows if r["level"] == level and r["team"] == t} for t in TEAMS}
        seeds = sorted(set.intersection(*(set(d) for d in by_team.values()))) if all(by_team.values()) else []
        if not seeds:
            continue
        won = {t: [by_team[t][s]["outcome"] == "win" for s in seeds] for t in TEAMS}
        entry = {"games": len(seeds), "teams": {}}
        for t in TEAMS:
            rate = wilson(sum(won[t]), len(seeds))
            team = {"wins": sum(won[t]), "rate": rate.rate, "low": rate.low, "high": rate.high}
            for base in ("simple", "search", "learned"):
                if t != base:
                    cmp = paired(won[t], won[base])
                    team[f"vs_{base}"] = {"difference": cmp.difference, "low": cmp.low, "high": cmp.high,
                                          "only_this": cmp.only_a, f"only_{base}": cmp.only_b,
                                          "p_value": cmp.p_value}
            recs = [by_team[t][s] for s in seeds]
            decisions, searched = sum(r["decisions"] for r in recs), sum(r["searched"] for r in recs)
            if decisions:
                team["ms_per_decision"] = 1e3 * sum(r["cpu_seconds"] for r in recs) / decisions
                team["ms_per_searched_decision"] = 1e3 * sum(r["searched_seconds"] for r in recs) / max(searched, 1)
                team["share_departing_from_blueprint"] = sum(r["departed"] for r in recs) / decisions
            entry["teams"][t] = team
        gain = entry["teams"]["search"]["rate"] - entry["teams"]["simple"]["rate"]
        for t in ("search_belief", "search_small"):
            kept = entry["teams"][t]["rate"] - entry["teams"]["simple"]["rate"]
            entry["teams"][t]["share_of_search_gain_kept"] = kept / gain if gain > 0 else None
            entry["teams"][t]["compute_vs_search"] = (entry["teams"][t]["ms_per_decision"]
                                                     / entry["teams"]["search"]["ms_per_decision"])
        out[level] = entry
    return out


def summarise_cross(rows: list[dict], levels: list[str]) -> dict:
    """Each team with a learned partner, paired with ``learned`` in both seats and ``simple`` on the same deals."""
    out = {}
    for level in levels:
        at = {(r["team"], r["seed"]): r for r in rows if r["level"] == level}
        entry = {}
        for label in CROSS:
            seeds = sorted(s for t, s in at if t == label and ("learned", s) in at and ("simple", s) in at)
            if not seeds:
                continue
            won = [at[label, s]["outcome"] == "win" for s in seeds]
            rate = wilson(sum(won), len(seeds))
            team = {"games": len(seeds), "wins": sum(won), "rate": rate.rate, "low": rate.low, "high": rate.high}
            for base in ("learned", "simple"):
                cmp = paired(won, [at[base, s]["outcome"] == "win" for s in seeds])
                team[f"vs_{base}"] = {"difference": cmp.difference, "low": cmp.low, "high": cmp.high,
                                      "only_this": cmp.only_a, f"only_{base}": cmp.only_b, "p_value": cmp.p_value}
            decisions = sum(at[label, s]["decisions"] for s in seeds)
            team["ms_per_search_decision"] = 1e3 * sum(at[label, s]["cpu_seconds"] for s in seeds) / max(decisions, 1)
            entry[label] = team
        if entry:
            out[level] = entry
    return out


def chart(summary: dict, path: Path) -> None:
    if not charts.available() or not summary["play"]:
        return
    groups = {}
    for level, entry in summary["play"].items():
        teams = entry["teams"]
        bars = [charts.Bar(t, team["rate"], team["low"], team["high"], agent=t if t in charts.AGENT_COLOURS else None)
                for t, team in teams.items()]
        ms = "\n".join(f"{t}: {team['ms_per_decision']:.1f} CPU ms/decision" for t, team in teams.items()
                       if "ms_per_decision" in team)
        groups[f"{level}, {entry['games']} deals\n{ms}"] = bars
    charts.bar_chart("Rope Team: search with a learned belief vs importance-sampled search (both seats the same)",
                     groups, path)


# ----------------------------------------------------------------------------- the run
def _load(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=0, help="games per player (simple, learned) for the read")
    parser.add_argument("--games", type=int, default=0, help="report deals per level played by every team")
    parser.add_argument("--cross", type=int, default=0, help="report deals per level with a learned partner")
    parser.add_argument("--levels", nargs="+", default=["hard", "expert"], choices=LEVELS, help="in this order")
    parser.add_argument("--rows", type=Path, default=Path("evaluation/results/rope_team_belief_rows.jsonl"))
    parser.add_argument("--out", type=Path, default=Path("evaluation/results/rope_team_belief.json"))
    parser.add_argument("--minutes", type=float, default=float("inf"), help="stop after this much CPU time")
    args = parser.parse_args(argv)
    command = "python -m cardzoo.evaluation.studies.belief_rope_team " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    rows = _load(args.rows)
    args.rows.parent.mkdir(parents=True, exist_ok=True)
    start = time.process_time()

    def out_of_time() -> bool:
        return time.process_time() - start > 60 * args.minutes

    with open(args.rows, "a") as f:
        done = {(r["part"], r.get("player"), r.get("game"), r.get("level"), r.get("team"), r.get("seed"))
                for r in rows if r["part"] == "play"}
        read_done = {(r["player"], r["game"]) for r in rows if r["part"] == "read"}
        for index in range(args.positions):
            for player in READERS:
                if (player, index) in read_done or out_of_time():
                    continue
                scored = read_game(player, index)
                new = [{"part": "read", "player": player, "game": index, "decisions": len(scored),
                        **{k: round(sum(r[k] for r in scored), 4) for k in _SUMMED}}]
                f.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in new)
                f.flush()
                rows += new
            print(f"\r  read: {index + 1}/{args.positions} games", end="", file=sys.stderr, flush=True)
        for seed in range(args.games):
            for level in args.levels:
                for team in TEAMS:
                    if ("play", None, None, level, team, seed) in done or out_of_time():
                        continue
                    row = {"part": "play", "level": level, "team": team, "seed": seed, **play_deal(level, seed, team)}
                    f.write(json.dumps(row, separators=(",", ":")) + "\n")
                    f.flush()
                    rows.append(row)
            print(f"\r  play: deal {seed + 1}/{args.games}, {time.process_time() - start:.0f} CPU s", end="",
                  file=sys.stderr, flush=True)
        for seed in range(args.cross):
            for level in args.levels:
                for team in CROSS:
                    if ("play", None, None, level, team, seed) in done or out_of_time():
                        continue
                    row = {"part": "play", "level": level, "team": team, "seed": seed, **play_deal(level, seed, team)}
                    f.write(json.dumps(row, separators=(",", ":")) + "\n")
                    f.flush()
                    rows.append(row)
            print(f"\r  cross: deal {seed + 1}/{args.cross}, {time.process_time() - start:.0f} CPU s", end="",
                  file=sys.stderr, flush=True)
    print(file=sys.stderr)
    read_rows = [r for r in rows if r["part"] == "read"]
    previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
    summary = {
        "commands": [*previous.get("commands", []), command], "rows": str(args.rows),
        "search_belief_options": {**belief.BUDGET, "belief": "rope_team_belief_simple"}, "search_small_options": SMALL,
        "read": summarise_read(read_rows),
        "play": summarise_play([r for r in rows if r["part"] == "play"], list(LEVELS)),
        "cross": summarise_cross([r for r in rows if r["part"] == "play"], list(LEVELS)),
    }
    args.out.write_text(json.dumps(summary, indent=1) + "\n")
    chart(summary, args.out.with_suffix(".png"))
    print(json.dumps({"read": summary["read"], "play": {lv: {t: (round(x["rate"], 3), round(x.get(
        "ms_per_decision", 0), 1)) for t, x in e["teams"].items()} for lv, e in summary["play"].items()}}, indent=1))


if __name__ == "__main__":
    main()
