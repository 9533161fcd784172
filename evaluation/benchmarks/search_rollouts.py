"""CPU time per decision of the search agents before and after their rollouts were batched over worlds, at equal
worlds, rollouts and seeds, on the decisions of real games (both paths see every observation; their choices are
compared, and must agree, at every decision).

"Before" is the search module as it was at ``--base`` (a git revision: the per-world rollouts), loaded from the
repository's history beside the current one (so it runs in a git checkout); "after" is the current module. Per game:

- Summit Rush: the team's search per tick (``search(pub, worlds, ...)``, 32 worlds the default), before: one world
  at a time with ``rules.play_tick``; after: every world x candidate at once on the batched engine's array core,
  the blueprint batched (``agents/summit_rush_rollouts.py``); also after with the blueprint asked seat by seat as a
  plain ``obs, mask -> actions`` policy (what a learned policy costs in the same rollouts, less its own network).
- Rope Team: the agent's ``act`` at every decision. Its rollouts were already batched (numpy, the simple strategy
  on the rows' arrays); "after" is the same fast path, and "after, policy" plays the rollouts by the batched
  policy on observations (``simple_policy``, the pluggable blueprint's path).

Times are ``time.process_time`` around each call (one process; the paths alternate which goes first); decisions
with a single candidate are counted apart (no rollouts). Run it alone, under nice, and read the ratios: the
machine is shared, so absolute times carry the load average recorded with them::

    nice -n 5 python -m cardzoo.evaluation.benchmarks.search_rollouts --games 3 \\
        --out evaluation/results/search_rollouts.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BASE = "24f8738"  # the last revision with the per-world rollouts


def load_base(path: str, base: str, rename: dict[str, str] | None = None):
    """The module at ``path`` (e.g. ``agents/summit_rush_search.py``) as it was at git revision ``base``, loaded
    as ``cardzoo.agents._base_<name>`` inside the package (its relative imports resolve to the current package,
    or to other base modules through ``rename``: import name -> loaded base module name)."""
    root = Path(__file__).resolve().parents[2]
    source = subprocess.run(["git", "-C", str(root), "show", f"{base}:{path}"], check=True, capture_output=True,
                            text=True).stdout
    for old, new in (rename or {}).items():
        source = source.replace(f"from .{old} import", f"from .{new} import")
    name = "cardzoo.agents._base_" + Path(path).stem
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "cardzoo.agents"
    sys.modules[name] = module
    exec(compile(source, f"{base}:{path}", "exec"), module.__dict__)  # noqa: S102 - the repository's own code
    return module


def _bits(vector: np.ndarray) -> int:
    return int.from_bytes(np.packbits(vector.view(np.uint8), bitorder="little").tobytes(), "little")


def _timed(fn, *args):
    start = time.process_time()
    out = fn(*args)
    return out, time.process_time() - start


def _summary(times: dict[str, list[float]], searched: int, single: int, agree: int) -> dict:
    out = {"decisions_searched": searched, "decisions_single_candidate": single, "choices_agree": agree}
    for path, seconds in times.items():
        out[path] = {"ms_mean": round(1000 * float(np.mean(seconds)), 2),
                     "ms_median": round(1000 * float(np.median(seconds)), 2),
                     "ms_p99": round(1000 * float(np.percentile(seconds, 99)), 2)}
    before = out["before"]["ms_mean"]
    for path in times:
        out[path]["speedup_vs_before"] = round(before / out[path]["ms_mean"], 2)
    return out


def summit_rush(base: str, games: int, worlds: int, level: str) -> dict:
    from cardzoo.agents.summit_rush_rollouts import SimpleBlueprint
    from cardzoo.agents.summit_rush_search import Public, candidates, search
    from cardzoo.envs import summit_rush_v0

    old = load_base("agents/summit_rush_search.py", base)

    def per_seat(config):  # the blueprint as a plain policy: no joint() fast path
        simple = SimpleBlueprint(config)
        return lambda obs, mask: simple(obs, mask)

    paths = {"before": lambda pub: old.search(pub, worlds, None, 1.0, 0),
             "after": lambda pub: search(pub, worlds, None, 1.0, 0),
             "after_policy": lambda pub: search(pub, worlds, None, 1.0, 0, per_seat)}
    times: dict[str, list[float]] = {k: [] for k in paths}
    searched = single = agree = 0
    for seed in range(games):
        env = summit_rush_v0.parallel_env(level=level, talk=False)
        obs, _ = env.reset(seed=seed)
        while env.agents:
            o = obs[env.possible_agents[0]]
            pub = Public(_bits(o["observation"]), o["observation"].shape[0], o["action_mask"].shape[0])
            if len(candidates(pub)) == 1:
                single += 1
                joint = candidates(pub)[0]
            else:
                order = list(paths) if searched % 2 == 0 else list(paths)[::-1]
                chosen = {}
                for path in order:
                    chosen[path], seconds = _timed(paths[path], pub)
                    times[path].append(seconds)
                joint = chosen["after"]
                agree += len(set(chosen.values())) == 1
                searched += 1
            obs, *_ = env.step(dict(zip(env.possible_agents, joint, strict=True)))
    return {"game": "summit_rush_v0", "level": level, "games": games, "worlds": worlds,
            **_summary(times, searched, single, agree)}


def rope_team(base: str, games: int, level: str) -> dict:
    from cardzoo.agents.rope_team_rollouts import simple_policy
    from cardzoo.agents.rope_team_search import RopeTeamSearch
    from cardzoo.envs import rope_team_v0

    load_base("agents/rope_team_rollouts.py", base)
    old = load_base("agents/rope_team_search.py", base, {"rope_team_rollouts": "_base_rope_team_rollouts"})
    times: dict[str, list[float]] = {"before": [], "after": [], "after_policy": []}
    searched = single = agree = 0
    options = RopeTeamSearch().options
    for seed in range(games):
        env = rope_team_v0.env(level=level)
        env.reset(seed=seed)
        agents = {"before": [old.RopeTeamSearch(seed * 2 + i) for i in range(2)],
                  "after": [RopeTeamSearch(seed * 2 + i) for i in range(2)],
                  "after_policy": [RopeTeamSearch(seed * 2 + i, rollout_policy=simple_policy) for i in range(2)]}
        for agent in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            order = list(agents) if (searched + single) % 2 == 0 else list(agents)[::-1]
            chosen, spent = {}, {}
            for path in order:
                chosen[path], spent[path] = _timed(agents[path][seat].act, o["observation"], o["action_mask"])
            if "values" in agents["after"][seat].last:
                searched += 1
                agree += len(set(chosen.values())) == 1
                for path in agents:
                    times[path].append(spent[path])
            else:
                single += 1
            env.step(chosen["after"])
    return {"game": "rope_team_v0", "level": level, "games": games, "worlds": options.worlds,
            "rollouts": options.rollouts, **_summary(times, searched, single, agree)}


def rook(base: str, games: int) -> dict:
    from cardzoo.agents.rook_heuristic import RookHeuristic
    from cardzoo.agents.rook_search import RookSearch
    from cardzoo.envs.rook import rules
    from cardzoo.envs.rook.observer import observe_bits

    old = load_base("agents/rook_search.py", base)
    heuristic = RookHeuristic()
    times: dict[str, list[float]] = {"before": [], "after": []}
    searched = single = agree = 0
    for seed in range(games):
        agents = {"before": old.RookSearch(seed=seed), "after": RookSearch(seed=seed)}
        seat = seed % 2
        rng = np.random.default_rng(seed)
        s = rules.new_game(rules.Config(rounds=1), rules.shuffled_deck(rng), rng, dealer=seed % 2)
        while s.outcome is None:
            bits, legal = observe_bits(s, s.to_move), rules.legal_actions(s)
            if s.to_move != seat:
                rules.apply(s, heuristic.act_bits(bits, legal))
                continue
            order = list(agents) if (searched + single) % 2 == 0 else list(agents)[::-1]
            chosen, spent = {}, {}
            for path in order:
                chosen[path], spent[path] = _timed(agents[path].act_bits, bits, legal)
            if legal & (legal - 1):
                searched += 1
                agree += chosen["before"] == chosen["after"]
                for path in agents:
                    times[path].append(spent[path])
            else:
                single += 1
            rules.apply(s, chosen["after"])
    defaults = RookSearch()
    return {"game": "rook_v0", "level": "single rounds vs heuristic", "games": games, "worlds": defaults.worlds,
            "bid_worlds": defaults.bid_worlds, **_summary(times, searched, single, agree)}


def chart(rows: list[dict], path: Path) -> list[Path]:
    from cardzoo.envs.common.charts import _pyplot, _save, available

    if not available():
        return []
    plt = _pyplot()
    paths = ("before", "after", "after_policy")
    labels = {"before": f"before (revision {rows[0].get('base', BASE)}: Summit Rush and Rook per world)",
              "after": "after: batched over worlds, the built-in blueprint",
              "after_policy": "after: batched, the blueprint as an obs, mask -> action policy"}
    fig, ax = plt.subplots(figsize=(8.5, 3.8))
    width = 0.26
    titles = {"summit_rush_v0": "Summit Rush", "rope_team_v0": "Rope Team", "rook_v0": "Rook"}
    names = [f"{titles[r['game']]} {r['level'].split()[0]}\n{r['worlds']} worlds" for r in rows]
    for j, key in enumerate(paths):
        values = [r[key]["ms_mean"] if key in r else 0.0 for r in rows]
        bars = ax.bar(np.arange(len(rows)) + (j - 1) * width, values, width, label=labels[key],
                      color=("#999999", "#D55E00", "#0072B2")[j])
        ax.bar_label(bars, [f"{v:.0f}" if v else "" for v in values], fontsize=7)
    ax.set_xticks(np.arange(len(rows)), names, fontsize=8)
    ax.set_ylabel("CPU ms per searched decision (mean)")
    ax.set_title("Search rollouts before and after batching over worlds (same worlds, seeds, choices)", fontsize=9)
    ax.legend(fontsize=7)
    return _save(fig, path)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="games per row")
    parser.add_argument("--base", default=BASE, help="git revision of the per-world rollouts")
    parser.add_argument("--only", choices=("rope_team", "summit_rush", "rook"), nargs="*", default=None)
    parser.add_argument("--out")
    parser.add_argument("--replot", action="store_true", help="redraw the chart of --out's JSON, run nothing")
    args = parser.parse_args(argv)
    if args.replot:
        result = json.loads(Path(args.out).read_text())
        chart([{**r, "base": result["base"]} for r in result["rows"]], Path(args.out).with_suffix(".png"))
        return result
    only = set(args.only or ("rope_team", "summit_rush", "rook"))
    rows = []
    if "summit_rush" in only:
        for level, worlds in (("normal", 32), ("hard", 32), ("normal", 128)):
            rows.append(summit_rush(args.base, args.games, worlds, level))
            print(json.dumps(rows[-1]), flush=True)
    if "rope_team" in only:
        for level in ("hard",):
            rows.append(rope_team(args.base, args.games, level))
            print(json.dumps(rows[-1]), flush=True)
    if "rook" in only:
        rows.append(rook(args.base, 4 * args.games))
        print(json.dumps(rows[-1]), flush=True)
    result = {"rows": rows, "base": args.base, "seeds": f"0..{args.games - 1} (reset(seed=i))",
              "clock": "time.process_time per call", "load_average": os.getloadavg(),
              "cpu_count": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
              "date": time.strftime("%Y-%m-%d"), "command": " ".join(["python -m", __spec__.name if __spec__ else
                                                                     "search_rollouts", *(argv or sys.argv[1:])])}
    if args.out:
        out = Path(args.out)
        out.write_text(json.dumps(result, indent=1) + "\n")
        chart(rows, out.with_suffix(".png"))
    return result


if __name__ == "__main__":
    main()
