"""How diverse the benchmark's partner pools are (``cardzoo.agents.pools``): the pool's own cross-play matrix and how
often its members choose different moves on the same observations; plus each member's time per decision.

**Cross-play.** For each cooperative game, every ordered pair of pool members (a member with itself too) plays the
same ``--games`` deals per setting: deal ``i`` is ``env.reset(seed=i)``, the agents seeded as the evaluation's runner
seeds them (``agent_seed``). Settings: Rope Team at each level; Summit Rush Normal and Hard with two players,
talking (the benchmark's settings: a silent member says nothing). The matrix shown is each pair's win rate over
both seatings and all settings.

**Disagreement.** Observations from games of the pool: each member's self-play games on ``--observe-games`` deals
(seeds after the cross-play ones), in every setting. At every decision, every member is handed the same observation
as that seat's *shadow*: its own copy, seeded as the seat's player is, that has been handed every earlier observation
of the seat in that game, so a member with memory decides as it would in the seat. (A shadow is not told which move
the seat really made: the members read what happened from the observation, except Summit Rush's count of stock
turns, which in a tick where a turned card was covered at once credits the turn to the seat if *it* chose to turn.
The search agents, which replay their own moves, could not be shadowed; they are not members.) The disagreement of
two members is the share of the decisions with more than one legal move where their moves differ (Summit Rush: the
move, not the message said with it). A member's time per decision is the mean wall time of its ``act`` calls on
those observations, every decision counted, on one process of the shared 2-core machine (a relative figure: other
jobs ran beside it).

**Not members.** The search agents' time per decision at their registry budget (the reason they are not in the
cooperative pools), in one game per setting with the game's baseline, in each seat (the first observed deal).

**Opponents.** Rook's pool members are opponents, not partners: no cross-play among them. Each plays
``--opponent-rounds`` single rounds against the heuristic (seats alternating) for its time per decision, measured as
above; the rounds it wins are reported beside it.

Run (two processes; the committed results took 11 minutes on the shared machine, under a load of 7 to 10)::

    nice -n 5 python -m cardzoo.evaluation.studies.pool_diversity --games 60 --observe-games 4 --opponent-rounds 200 \
        --workers 2

Writes ``evaluation/results/pools/diversity.json`` (every figure), ``summary.md`` (the docs page "Partner pools",
made from the JSON by :func:`summary`) and per game the heat maps ``<game>_cross_play.png`` and
``<game>_disagreement.png`` (with SVGs). ``--summary-only`` rewrites the Markdown and charts from the JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from cardzoo.agents.loops import act, deal
from cardzoo.agents.pools import MARGIN, OPPONENT_MIN_WINS, POOLS
from cardzoo.agents.registry import DESCRIPTIONS, make_agent
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.registry import GAMES
from cardzoo.envs.rope_team import rules as rope_rules
from cardzoo.envs.rope_team.observer import observe_bits

from ..report.model import RESULTS

OUT = RESULTS / "pools"
COOPERATIVE = tuple(name for name, g in GAMES.items() if g.cooperative)


def settings(game: str) -> dict[str, dict[str, Any]]:
    """The settings the study plays, name -> env options (the benchmark's)."""
    if game == "rope_team":
        return {level: {"level": level} for level in GAMES[game].levels}
    return {level: {"level": level, "players": 2, "talk": True} for level in ("normal", "hard")}


# ---------------------------------------------------------------------------- games
class _Shadows:
    """Every member's copy for one seat, handed the seat's observations; their moves and time."""

    def __init__(self, game: str, members: tuple[str, ...]):
        self.agents = [make_agent(m, GAMES[game].env_id) for m in members]
        self.seconds = np.zeros(len(members))
        self.calls = 0
        self.rows: list[list[int]] = []  # per decision with a choice: each member's move

    def reset(self, seed: int) -> None:
        for a in self.agents:
            a.reset(seed=seed)

    def decide(self, run, choice: bool, move_of=int) -> None:
        moves = []
        for i, agent in enumerate(self.agents):
            t = time.perf_counter()
            action = run(agent)
            self.seconds[i] += time.perf_counter() - t
            moves.append(move_of(action))
        self.calls += 1
        if choice:
            self.rows.append(moves)


def rope_team_game(options: dict, seed: int, players: list, shadows: list[_Shadows] | None = None) -> str:
    s = deal(seed, options["level"])
    for seat, agent in enumerate(players):
        agent.reset(seed=agent_seed(seed, seat))
        if shadows:
            shadows[seat].reset(agent_seed(seed, seat))
    while s.outcome is None:
        seat = s.to_move
        legal = rope_rules.legal_mask(s)
        bits = observe_bits(s, seat)
        if shadows:
            shadows[seat].decide(lambda a, b=bits, m=legal: act(a, b, m), legal.bit_count() > 1)
        card = act(players[seat], bits, legal)
        if not legal >> card & 1:
            raise RuntimeError(f"{players[seat]!r} played an illegal card in Rope Team game {seed} ({options})")
        rope_rules.play(s, card)
    return s.outcome


_ENVS: dict = {}


def summit_rush_game(options: dict, seed: int, players: list, shadows: list[_Shadows] | None = None) -> str:
    key = tuple(sorted(options.items()))
    if key not in _ENVS:
        from cardzoo.envs import summit_rush_v0

        _ENVS[key] = summit_rush_v0.parallel_env(**options, illegal_action="raise")
    env = _ENVS[key]
    n_moves = env.unwrapped.n_moves
    obs, _ = env.reset(seed=seed)
    seats = env.possible_agents
    for seat, agent in enumerate(players):
        agent.reset(seed=agent_seed(seed, seat))
        if shadows:
            shadows[seat].reset(agent_seed(seed, seat))
    info: dict = {}
    while env.agents:
        joint = {}
        for seat, name in enumerate(seats):
            o, m = obs[name]["observation"], obs[name]["action_mask"]
            if shadows:
                choice = int(m.reshape(-1, n_moves).any(axis=0).sum()) > 1
                shadows[seat].decide(lambda a, o=o, m=m: a.act(o, m), choice, lambda x: int(x) % n_moves)
            joint[name] = players[seat].act(o, m)
        obs, _, _, _, infos = env.step(joint)
        info = infos[seats[0]]
    return info["outcome"]


PLAY = {"rope_team": rope_team_game, "summit_rush": summit_rush_game}


def _cross(job: tuple[str, str, str, str, int]) -> tuple[str, str, str, str, int, int]:
    game, setting, a, b, games = job
    env_id = GAMES[game].env_id
    players = [make_agent(a, env_id), make_agent(b, env_id)]
    options = settings(game)[setting]
    wins = sum(PLAY[game](options, seed, players) == "win" for seed in range(games))
    return game, setting, a, b, wins, games


def _observe(job: tuple[str, str, str, int, int]) -> dict[str, Any]:
    game, setting, member, first, n = job
    members = POOLS[game].members()
    env_id = GAMES[game].env_id
    players = [make_agent(member, env_id), make_agent(member, env_id)]
    shadows = [_Shadows(game, members), _Shadows(game, members)]
    for seed in range(first, first + n):
        PLAY[game](settings(game)[setting], seed, players, shadows)
    return {"game": game, "setting": setting, "rows": shadows[0].rows + shadows[1].rows,
            "seconds": (shadows[0].seconds + shadows[1].seconds).tolist(),
            "calls": shadows[0].calls + shadows[1].calls}


class _Timed:
    """An agent whose ``act`` calls are timed."""

    def __init__(self, agent):
        self.agent, self.seconds, self.calls = agent, 0.0, 0

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, observation, action_mask):
        t = time.perf_counter()
        action = self.agent.act(observation, action_mask)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        return action


def _time_agent(job: tuple[str, str, str, int]) -> tuple[str, str, float, int]:
    """``name``'s time in one game of ``setting`` with the game's baseline, in each seat (deal ``seed``)."""
    game, setting, name, seed = job
    spec = GAMES[game]
    timed = _Timed(make_agent(name, spec.env_id))
    for seat in (0, 1):
        players = [timed, make_agent(spec.baseline, spec.env_id)]
        PLAY[game](settings(game)[setting], seed, players if seat == 0 else players[::-1])
    return game, name, timed.seconds, timed.calls


def _opponent(job: tuple[str, str, int]) -> tuple[str, str, float, int, int]:
    """An opponent pool member against the game's baseline on ``rounds`` single rounds, seats alternating: its time
    per decision and the rounds it won."""
    game, member, rounds = job
    from cardzoo.agents.loops import play_env_game

    spec = GAMES[game]
    env = spec.make(**dict(spec.train_options))
    timed = _Timed(make_agent(member, spec.env_id))
    baseline = make_agent(spec.baseline, spec.env_id)
    won = 0
    for seed in range(rounds):
        seat = seed % 2
        agents = [timed, baseline] if seat == 0 else [baseline, timed]
        for s, agent in enumerate(agents):
            agent.reset(seed=agent_seed(seed, s))
        won += play_env_game(env, agents, seed)["winner"] == env.possible_agents[seat]
    return game, member, 1000 * timed.seconds / max(timed.calls, 1), timed.calls, won


# ---------------------------------------------------------------------------- the study
def run(games: int, observe_games: int, workers: int, opponent_rounds: int) -> dict[str, Any]:
    cross_jobs = [(g, s, a, b, games) for g in COOPERATIVE for s in settings(g)
                  for a in POOLS[g].members() for b in POOLS[g].members()]
    observe_jobs = [(g, s, m, games, observe_games) for g in COOPERATIVE for s in settings(g)
                    for m in POOLS[g].members()]
    out: dict[str, Any] = {"pools_version": {g: POOLS[g].version for g in COOPERATIVE}, "games_per_pair": games,
                           "cross_play_seeds": [0, games - 1],
                           "observe_seeds": [games, games + observe_games - 1], "games": {},
                           "opponent_pools": {g: {"dev": list(POOLS[g].dev), "test": list(POOLS[g].test),
                                                  "weak": list(POOLS[g].weak),
                                                  "rounds": opponent_rounds, "ms_per_decision": {},
                                                  "won_vs_baseline": {}}
                                              for g in GAMES if g not in COOPERATIVE}}
    opponent_jobs = [(g, m, opponent_rounds) for g in out["opponent_pools"] for m in POOLS[g].members()]
    # the search agents at their registry budget, not members: their time per decision
    out["not_members"] = {g: {"search": {"ms_per_decision": 0.0, "decisions": 0}} for g in COOPERATIVE}
    search_jobs = [(g, s, "search", games) for g in COOPERATIVE for s in settings(g)]
    for g in COOPERATIVE:
        pool = POOLS[g]
        m = len(pool.members())
        out["games"][g] = {
            "title": GAMES[g].title, "members": list(pool.members()), "dev": list(pool.dev), "test": list(pool.test),
            "weak": list(pool.weak),
            "descriptions": {n: DESCRIPTIONS.get(n, "") for n in pool.members()},
            "settings": {s: dict(o) for s, o in settings(g).items()},
            "wins": {s: [[0] * m for _ in range(m)] for s in settings(g)},  # [seat 0 member][seat 1 member]
            "disagreements": {s: [[0] * m for _ in range(m)] for s in settings(g)},
            "decisions": dict.fromkeys(settings(g), 0), "seconds": [0.0] * m, "calls": [0] * m,
        }
    started = time.time()
    with ProcessPoolExecutor(max_workers=workers) as pool_exec:
        for done, (g, s, a, b, wins, _) in enumerate(pool_exec.map(_cross, cross_jobs, chunksize=4), 1):
            members = out["games"][g]["members"]
            out["games"][g]["wins"][s][members.index(a)][members.index(b)] = wins
            if done % 200 == 0:
                print(f"cross-play {done}/{len(cross_jobs)} ({time.time() - started:.0f} s)", flush=True)
        for r in pool_exec.map(_observe, observe_jobs):
            entry = out["games"][r["game"]]
            rows = np.array(r["rows"], dtype=np.int64).reshape(-1, len(entry["members"]))
            differ = (rows[:, :, None] != rows[:, None, :]).sum(axis=0)
            table = entry["disagreements"][r["setting"]]
            for i in range(len(table)):
                for j in range(len(table)):
                    table[i][j] += int(differ[i, j])
            entry["decisions"][r["setting"]] += len(rows)
            entry["seconds"] = [x + y for x, y in zip(entry["seconds"], r["seconds"], strict=True)]
            entry["calls"] = [x + r["calls"] for x in entry["calls"]]
        for g, name, seconds, calls in pool_exec.map(_time_agent, search_jobs):
            entry = out["not_members"][g][name]
            total = entry["ms_per_decision"] * entry["decisions"] + 1000 * seconds
            entry["decisions"] += calls
            entry["ms_per_decision"] = total / entry["decisions"]
        for g, m, ms, _, won in pool_exec.map(_opponent, opponent_jobs):
            out["opponent_pools"][g]["ms_per_decision"][m] = ms
            out["opponent_pools"][g]["won_vs_baseline"][m] = won
    print(f"done in {time.time() - started:.0f} s", flush=True)
    return out


# ---------------------------------------------------------------------------- figures from the JSON
def figures(entry: dict[str, Any]) -> dict[str, Any]:
    """The derived figures of one game: both-seat cross-play rates over all settings, the disagreement shares, each
    member's self-play and mean cross-play with the dev and test parts, and its time per decision."""
    members = entry["members"]
    games = entry["games_per_pair"] * len(entry["settings"])
    wins = sum(np.array(w, dtype=float) for w in entry["wins"].values())
    cross = (wins + wins.T) / (2 * games)  # both seatings
    decisions = sum(entry["decisions"].values())
    disagree = sum(np.array(d, dtype=float) for d in entry["disagreements"].values()) / max(decisions, 1)
    index = {n: i for i, n in enumerate(members)}
    rows = []
    for i, n in enumerate(members):
        def mean_with(part, i=i, n=n):
            others = [index[o] for o in entry[part] if o != n]
            return float(np.mean(cross[i, others])) if others else float("nan")

        others = [j for j in range(len(members)) if j != i]
        rows.append({"member": n, "part": _part(entry, n),
                     "self_play": float(cross[i, i]), "with_dev": mean_with("dev"), "with_test": mean_with("test"),
                     "disagreement": float(np.mean(disagree[i, others])),
                     "ms_per_decision": 1000 * entry["seconds"][i] / max(entry["calls"][i], 1)})
    simple = cross[index["simple"], index["simple"]] if "simple" in index else float("nan")
    for r in rows:  # the pools' competence rule (agents/pools.py)
        r["competent"] = bool(r["self_play"] >= simple - MARGIN - 1e-9)
    with_dev = np.array([r["with_dev"] for r in rows])
    with_test = np.array([r["with_test"] for r in rows])
    off = ~np.eye(len(members), dtype=bool)
    return {"cross": cross, "disagree": disagree, "rows": rows, "decisions": decisions, "games": games,
            "simple_self_play": float(simple),
            "dev_test_correlation": float(np.corrcoef(with_dev, with_test)[0, 1]),
            "mean_cross": float(cross[off].mean()), "mean_self": float(np.diag(cross).mean()),
            "mean_disagreement": float(disagree[off].mean()),
            "min_disagreement": float(disagree[off].min()),
            "closest": min(((members[i], members[j]) for i in range(len(members)) for j in range(i + 1, len(members))),
                           key=lambda p: disagree[index[p[0]], index[p[1]]])}


def _part(entry: dict[str, Any], member: str) -> str:
    return next((p for p in ("dev", "test", "weak") if member in entry.get(p, ())), "?")


def opponent_competent(pool: dict[str, Any]) -> dict[str, bool]:
    """Rook's opponents against the pools' rule: each wins at least OPPONENT_MIN_WINS of its rounds against the
    heuristic."""
    return {m: pool["won_vs_baseline"][m] / pool["rounds"] >= OPPONENT_MIN_WINS for m in pool["won_vs_baseline"]}


def heat_map(matrix: np.ndarray, members: list[str], test: set[str], title: str, label: str, path: Path) -> None:
    from cardzoo.envs.common.charts import _pyplot, _save

    plt = _pyplot()
    n = len(members)
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * n, 0.6 + 0.5 * n))
    image = ax.imshow(100 * matrix, cmap="viridis", vmin=0, vmax=100)
    names = [f"{m} (test)" if m in test else m for m in members]
    ax.set_xticks(range(n), names, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(n), names, fontsize=8)
    for i in range(n):
        for j in range(n):
            v = 100 * matrix[i, j]
            ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=6.5, color="white" if v < 60 else "black")
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, label=label, fraction=0.04)
    _save(fig, path)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summary(result: dict[str, Any], out: Path = OUT) -> str:
    """The docs page's Markdown (and the heat maps), from the study's JSON alone."""
    lines = [
        "# Partner pools",
        "",
        "The benchmark scores an agent with strangers: with each member of its game's partner pool "
        "(Rook: against each member of an opponent pool), defined in `cardzoo.agents.pools` (version "
        f"`{next(iter(result['pools_version'].values()))}`). Each pool has a **dev** part, for tuning, and a **test** "
        "part, held out: never train with it, never tune against it (not its policies, not its results); report "
        "both. Both hold only competent members: a partner whose self-play win rate below is at least the simple "
        f"strategy's minus {100 * MARGIN:.0f} points, an opponent that wins at least {100 * OPPONENT_MIN_WINS:.0f} % "
        "of its rounds against the heuristic. The others are the **weak** part, a robustness row the benchmark "
        "reports apart, never in the headline or the worst partner. The members mix conventions on purpose: the "
        "document's simple strategy and rule variants that change one convention each (`cardzoo.agents.partners`, "
        "`cardzoo.agents.summit_rush_partners`) and trained policies of different seeds, inputs and objectives; each "
        "family has members on both sides of the split where it has two.",
        "",
        "Below, the pools' own cross-play and how often their members choose different moves on the same "
        "observations, made by `evaluation/studies/pool_diversity.py` (its docstring says how; command: "
        "`nice -n 5 python -m cardzoo.evaluation.studies.pool_diversity --games "
        f"{result['games_per_pair']} --observe-games {result['observe_seeds'][1] - result['observe_seeds'][0] + 1} "
        f"--opponent-rounds {next(iter(result['opponent_pools'].values()))['rounds']} --workers 2`). Cross-play is "
        "over both seatings and every setting, on the deals "
        f"{result['cross_play_seeds'][0]}..{result['cross_play_seeds'][1]}; disagreement is over the decisions with "
        "more than one legal move in the members' self-play games on the deals "
        f"{result['observe_seeds'][0]}..{result['observe_seeds'][1]}. *With dev* / *with test* are a member's mean "
        "cross-play win rate with the other members of each part; the time per decision is a relative figure "
        "(wall time on the shared 2-core machine).",
        "",
    ]
    for game, entry in result["games"].items():
        entry = {**entry, "games_per_pair": result["games_per_pair"]}
        f = figures(entry)
        members, test = entry["members"], set(entry["test"])
        settings_text = ", ".join(entry["settings"])
        lines += [f"## {entry['title']}", "",
                  f"{len(members)} members: dev {', '.join(f'`{m}`' for m in entry['dev'])}; test (held out) "
                  f"{', '.join(f'`{m}`' for m in entry['test'])}; weak {', '.join(f'`{m}`' for m in entry['weak'])}. "
                  f"The simple strategy's self-play: {pct(f['simple_self_play'])}, so a competent partner's is at "
                  f"least {pct(f['simple_self_play'] - MARGIN)}. Settings: {settings_text}; "
                  f"{f['games']} games per pair and seating; {f['decisions']} decisions with a choice observed.", "",
                  f"- Mean self-play win rate {pct(f['mean_self'])}, mean cross-play between two different members "
                  f"{pct(f['mean_cross'])}.",
                  f"- Two different members choose different moves on {pct(f['mean_disagreement'])} of the decisions "
                  f"on average; the closest pair, `{f['closest'][0]}` and `{f['closest'][1]}`, on "
                  f"{pct(f['min_disagreement'])}.",
                  f"- Across members, the mean cross-play with the dev part and with the test part correlate "
                  f"(Pearson r = {f['dev_test_correlation']:.2f}): a partner that does well with dev does well with "
                  "test." if f["dev_test_correlation"] > 0.7 else
                  f"- Across members, the mean cross-play with the dev part and with the test part correlate with "
                  f"Pearson r = {f['dev_test_correlation']:.2f}.", "",
                  "| member | part | self-play | competent | with dev | with test | disagreement with the others | "
                  "ms per decision | what it plays |",
                  "|---|---|---:|---|---:|---:|---:|---:|---|"]
        for r in f["rows"]:
            lines.append(f"| `{r['member']}` | {r['part']} | {pct(r['self_play'])} | "
                         f"{'yes' if r['competent'] else 'no'} | {pct(r['with_dev'])} | "
                         f"{pct(r['with_test'])} | {pct(r['disagreement'])} | {r['ms_per_decision']:.3f} | "
                         f"{entry['descriptions'].get(r['member'], '')} |")
        for name, t in result["not_members"][game].items():
            lines += ["", f"Not a member: `{name}` ({entry['descriptions'].get(name) or DESCRIPTIONS.get(name, '')}; "
                      f"at its registry budget) takes {t['ms_per_decision']:.1f} ms per decision ({t['decisions']} "
                      f"decisions, one game per setting with `{GAMES[game].baseline}`, in each seat): a benchmark "
                      "cell with it would cost that much more than a cell with a member, so the search agents join no "
                      "cooperative pool."]
        lines += ["", f"![{entry['title']} cross-play]({game}_cross_play.png)", "",
                  f"![{entry['title']} disagreement]({game}_disagreement.png)", ""]
        heat_map(f["cross"], members, test, f"{entry['title']}: cross-play win rate (both seatings, {settings_text})",
                 "win rate (%)", out / f"{game}_cross_play.png")
        heat_map(f["disagree"], members, test, f"{entry['title']}: decisions where the two choose different moves",
                 "share of decisions (%)", out / f"{game}_disagreement.png")
    for game, pool in result["opponent_pools"].items():
        spec = GAMES[game]
        lines += [f"## {spec.title}", "",
                  f"Opponents: dev {', '.join(f'`{m}`' for m in pool['dev'])}; test (held out) "
                  f"{', '.join(f'`{m}`' for m in pool['test'])}; weak "
                  f"{', '.join(f'`{m}`' for m in pool.get('weak', []))}. The benchmark plays each against the "
                  "agent, both seats; this study plays no cross-play among them (they are opponents, not partners). "
                  "Each played "
                  f"{pool['rounds']} single rounds against `{spec.baseline}` (seats alternating) for its time per "
                  "decision.", "",
                  f"| opponent | part | rounds won against `{spec.baseline}` | competent | ms per decision |",
                  "|---|---|---:|---|---:|"]
        competent = opponent_competent(pool)
        for m in pool["dev"] + pool["test"] + pool.get("weak", []):
            lines.append(f"| `{m}` | {_part(pool, m)} | {pct(pool['won_vs_baseline'][m] / pool['rounds'])} | "
                         f"{'yes' if competent[m] else 'no'} | {pool['ms_per_decision'][m]:.3f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=60, help="deals per ordered pair and setting (default: 60)")
    parser.add_argument("--observe-games", type=int, default=4,
                        help="self-play deals per member and setting for the disagreement (default: 4)")
    parser.add_argument("--opponent-rounds", type=int, default=200,
                        help="Rook rounds per opponent against the baseline, for its time per decision (default: 200)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default: 2)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default: {OUT})")
    parser.add_argument("--summary-only", action="store_true", help="rewrite summary.md and the charts from the JSON")
    args = parser.parse_args(argv)
    if min(args.games, args.observe_games, args.workers, args.opponent_rounds) < 1:
        parser.error("--games, --observe-games, --opponent-rounds and --workers must be at least 1")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "diversity.json"
    if args.summary_only:
        result = json.loads(path.read_text())
    else:
        result = run(args.games, args.observe_games, args.workers, args.opponent_rounds)
        path.write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "summary.md").write_text(summary(result, args.out) + "\n")


if __name__ == "__main__":
    main()
