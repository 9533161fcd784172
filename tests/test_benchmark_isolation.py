"""The benchmark against an outside agent that cheats or breaks: the leaked-seed attack learns nothing in its own
worker (and learns every partner's hand without the isolation and the deal key: the attack works), and each broken
agent (raises, exits, hangs, runs out of memory, is no factory at all) is reported cleanly, naming the agent, the
deal and the decision, the run stopping with a non-zero exit unless --keep-going. Also the command's own defects:
a --name outside --out, --backend ray without Ray, a cache chunk that is a folder, and a cache key blind to the
modules an agent imports."""

from __future__ import annotations

import json
import re
import textwrap
import warnings

import pytest

from cardzoo.agents.pools import Pool
from cardzoo.envs.common.errors import OptionError
from cardzoo.evaluation.cli import main
from cardzoo.evaluation.protocol import benchmark, read
from cardzoo.evaluation.protocol import seeds as reserved

# One partner, one level: the fewest cells that still play the agent with a stranger in both seats.
POOLS = {"rope_team": Pool("tiny", ("simple",), ()), "rook": Pool("tiny", ("heuristic",), ()),
         "summit_rush": Pool("tiny", ("simple",), ())}
EASY = {"games": ["rope_team"], "pools": POOLS, "levels": ["easy"]}

ATTACKER = """\
import gc, json, sys
import numpy as np
from cardzoo.envs.rope_team import rules

LOG = {log!r}
FIRST = {first}
INVERSE = pow(1_000_003, -1, 2**63)


def candidates(seed, seat):
    # the v1 agent seed inverted, and the first deals of the public range
    yield (seed - seat * 7919) * INVERSE % 2**63
    yield from range(FIRST, FIRST + 64)


class Attacker:
    def __init__(self, seat, seed):
        self.seat, self.seed, self.first = seat, seed, True
        self.found = {{
            "envs_in_process": sum(1 for o in gc.get_objects() if type(o).__name__.endswith("Env")),
            "runner_worker": getattr(sys.modules.get("cardzoo.evaluation.matches.runner"), "_worker", None) is not None,
        }}

    def act(self, observation, action_mask):
        if self.first:
            self.first = False
            mine = int("".join(str(int(b)) for b in observation[51::-1]), 2)  # the hand's bits
            knew = None
            for seed in candidates(self.seed, self.seat):
                for level in rules.LEVELS.values():
                    s = rules.deal(level, seed)
                    if s.hands[self.seat] == mine:
                        knew = s.hands[1 - self.seat]
            self.found.update(knew_partner=knew is not None, plain=type(observation) is np.ndarray)
            with open(LOG, "a") as f:
                f.write(json.dumps(self.found) + "\\n")
        return int(np.flatnonzero(action_mask)[0])


def make(game, seat, seed):
    return Attacker(seat, seed)
"""


def _agent(tmp_path, body: str, name: str = "agent.py") -> str:
    path = tmp_path / name
    path.write_text("import numpy as np\n\n" + textwrap.dedent(body))
    return f"{path}:make"


def _attacker(tmp_path) -> tuple[str, object]:
    log = tmp_path / "attack.jsonl"
    (tmp_path / "attacker.py").write_text(ATTACKER.format(log=str(log), first=reserved.FIRST))
    return f"{tmp_path / 'attacker.py'}:make", log


def test_the_leaked_seed_attack_learns_nothing_about_the_partners_hand(tmp_path):
    spec, log = _attacker(tmp_path)
    result = benchmark(spec, games_per_cell=12, **EASY)
    found = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(found) == 4 * 12  # a log per seat it plays and game: self-play (two seats), then each seat
    assert not any(f["knew_partner"] for f in found), "the agent found its deal"
    assert not any(f["envs_in_process"] or f["runner_worker"] for f in found)  # nothing of the run's in its process
    assert all(f["plain"] for f in found)  # a plain array: no object to reach the env through
    assert result["games"]["rope_team"]["headline"]["errors"] == 0


def test_without_isolation_and_the_key_the_same_attack_knows_every_partners_hand(tmp_path):
    """The attack's own check: played as benchmark_v1 played it (in the run's process, deals FIRST + i, agents seeded
    from the deal), it finds the partner's hand in every game."""
    from cardzoo.evaluation.matches.runner import Matchup, run

    spec, log = _attacker(tmp_path)
    run(Matchup.of("rope_team_v0", (spec, "simple"), strict=False, level="easy"), 12, base_seed=reserved.FIRST,
        workers=1, progress=False)
    found = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(found) == 12 and all(f["knew_partner"] for f in found)
    assert all(f["runner_worker"] for f in found)  # and it shares the run's process


BROKEN = {
    "raises": ("raise RuntimeError('no model loaded')", "decision 1: act raised RuntimeError: no model loaded"),
    "exits": ("import os; os._exit(3)", "decision 1: the agent's process exited with code 3"),
    "hangs": ("import time; time.sleep(60)", "decision 1 took longer than 0.5 s (the time limit)"),
    "eats memory": ("self.hog = bytearray(2 * 2**30)", "decision 1: act raised MemoryError"),
    "returns no action": ("return 'the ace'", "decision 1: act returned 'the ace', not an integer action"),
}


@pytest.mark.parametrize("how", list(BROKEN))
def test_a_broken_agent_fails_its_cell_and_the_run_stops_naming_agent_deal_and_decision(tmp_path, how):
    line, message = BROKEN[how]
    spec = _agent(tmp_path, f"""
        class Broken:
            def act(self, observation, action_mask):
                {line}
                return int(np.flatnonzero(action_mask)[0])

        def make(game, seat, seed):
            return Broken()
        """)
    from cardzoo.agents.isolated import Limits

    limits = Limits(decision_seconds=0.5, memory_mb=1024)
    result = benchmark(spec, games_per_cell=2, limits=limits, **EASY)
    [failure] = result["failures"]
    assert not result["complete"] and failure["cell"] == "self-play" and failure["errors"] == 2
    assert failure["first"].startswith("deal 0: agent ") and spec in failure["first"], failure
    assert message in failure["first"] and "rope_team_v0 game seed" in failure["first"]
    cells = result["games"]["rope_team"]["cells"]
    assert len(cells) == 1 and cells[0]["failed"]  # the run stopped after the failed cell
    kept = benchmark(spec, games_per_cell=2, limits=limits, keep_going=True, **EASY)
    assert kept["complete"] and len(kept["games"]["rope_team"]["cells"]) == 3
    assert [c["failed"] for c in kept["games"]["rope_team"]["cells"]] == [True, True, True]


def test_the_command_exits_non_zero_on_a_failing_agent_unless_keep_going(tmp_path, capsys):
    spec = _agent(tmp_path, """
        class Exits:
            def act(self, observation, action_mask):
                import os
                os._exit(5)

        def make(game, seat, seed):
            return Exits()
        """)
    argv = ["benchmark", spec, "--only", "rope_team", "--levels", "easy", "--partners", "simple", "--games", "2",
            "--out", str(tmp_path / "out"), "--quiet", "--name", "exits"]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert "exited with code 5" in err and "--keep-going" in err and "deal 0" in err
    assert not read(tmp_path / "out" / "exits.json")["complete"]
    main([*argv, "--keep-going"])  # exits 0
    out = capsys.readouterr().out
    assert "FAILED rope_team easy self-play: 2 games lost" in out
    assert read(tmp_path / "out" / "exits.json")["complete"]


@pytest.mark.parametrize("spec, problem", [
    ("os:system", "system() takes at most 1 argument"),
    ("builtins:print", "the factory returned NoneType"),
])
def test_a_callable_that_makes_no_agent_is_refused_before_any_game(tmp_path, capsys, spec, problem):
    with pytest.raises(OptionError, match=rf"agent spec {spec!r} cannot play rope_team: .*{re.escape(problem)}"):
        benchmark(spec, games_per_cell=2, **EASY)
    with pytest.raises(SystemExit) as exit_:
        main(["benchmark", spec, "--games", "2", "--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err and "plays none of the benchmark's games" in err
    assert not list(tmp_path.iterdir())  # no result written


def test_an_agent_declares_its_games_and_the_others_are_skipped(tmp_path):
    spec = _agent(tmp_path, """
        class Lowest:
            def act(self, observation, action_mask):
                return int(np.flatnonzero(action_mask)[0])

        def make(game, seat, seed):
            assert game == "rope_team", "called for a game it does not play"
            return Lowest()

        make.games = ("rope_team",)
        """)
    result = benchmark(spec, games_per_cell=2, pools=POOLS, levels=["easy"])
    assert list(result["games"]) == ["rope_team"] and set(result["skipped"]) == {"summit_rush", "rook"}
    assert "declares the games rope_team, not rook" in result["skipped"]["rook"]
    assert result["filters"] == {"levels": ["easy"]}
    with pytest.raises(OptionError, match="declares the games rope_team, not rook"):
        benchmark(spec, games=["rook"], games_per_cell=2, pools=POOLS)


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", ".hidden", "a/b", ""])
def test_a_result_name_that_is_not_a_plain_file_name_is_refused(tmp_path, capsys, name):
    with pytest.raises(SystemExit) as exit_:
        main(["benchmark", "random", "--only", "rook", "--games", "1", "--out", str(tmp_path / "out"), "--name", name])
    assert exit_.value.code == 2 and "not a plain file name" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "x.json").exists()


def test_the_ray_backend_without_ray_is_one_line(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(SystemExit) as exit_:
        main(["benchmark", "random", "--only", "rook", "--games", "1", "--out", str(tmp_path), "--backend", "ray"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "--backend ray needs Ray" in err and "Traceback" not in err


def test_a_bad_deal_key_is_named(tmp_path):
    with pytest.raises(OptionError, match="a deal key is 64 hex digits"):
        benchmark("random", games=["rook"], games_per_cell=1, pools=POOLS, deal_key="xyz")


def test_a_cache_chunk_that_is_a_folder_is_played_again_with_a_warning(tmp_path):
    key = bytes(32)
    args = {"games_per_cell": 3, "deal_key": key, **EASY}
    clean = benchmark("random", **args)
    benchmark("random", cache=tmp_path / "cache", **args)
    chunks = sorted((tmp_path / "cache").rglob("*.json"))
    assert chunks
    for path in chunks:  # every chunk replaced by a folder of that name
        path.unlink()
        path.mkdir()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = benchmark("random", cache=tmp_path / "cache", **args)
    text = " ".join(str(w.message) for w in caught)
    assert "unreadable" in text and "could not be written" in text
    strip = lambda r: [c["deals"] for c in r["games"]["rope_team"]["cells"]]  # noqa: E731
    assert strip(again) == strip(clean)


def test_the_cache_key_covers_the_modules_an_agent_imports(tmp_path, monkeypatch):
    """Editing a helper module the factory imports (not the factory's file) is never served stale results."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "helper_rule.py").write_text("PICK = 0  # the lowest legal card\n")
    spec = _agent(tmp_path, """
        import helper_rule

        class Pick:
            def act(self, observation, action_mask):
                return int(np.flatnonzero(action_mask)[helper_rule.PICK])

        def make(game, seat, seed):
            return Pick()
        """)
    args = {"games_per_cell": 6, "deal_key": bytes(32), "cache": tmp_path / "cache", **EASY}
    from cardzoo.agents import isolated
    from cardzoo.agents.registry import fingerprint

    lowest = benchmark(spec, **args)
    before = fingerprint(spec, "rope_team_v0")  # what every evaluation cache keys on, not the benchmark's alone
    (tmp_path / "helper_rule.py").write_text("PICK = -1  # the highest legal card\n")
    monkeypatch.setattr(isolated, "_PROBES", {})  # a new run (a new process) probes again
    assert fingerprint(spec, "rope_team_v0") != before
    highest = benchmark(spec, **args)
    assert lowest["games"]["rope_team"]["digest"] != highest["games"]["rope_team"]["digest"]
    fresh = benchmark(spec, **{**args, "cache": None})
    cells = lambda r: [c["deals"] for c in r["games"]["rope_team"]["cells"]]  # noqa: E731
    assert cells(highest) == cells(fresh) != cells(lowest)


def test_a_hanging_agent_costs_one_time_limit_a_chunk_not_one_a_game(tmp_path):
    """Without --keep-going the games after a failure in a chunk are recorded as not played: 10 deals in two chunks
    of 5 cost two time limits; with --keep-going every deal is played, and each costs one."""
    import time

    from cardzoo.agents.isolated import Limits

    spec = _agent(tmp_path, """
        import time

        class Hangs:
            def act(self, observation, action_mask):
                time.sleep(60)

        def make(game, seat, seed):
            return Hangs()
        """)
    limits = Limits(decision_seconds=0.5)
    start = time.monotonic()
    stopped = benchmark(spec, games_per_cell=10, limits=limits, **EASY)
    fast = time.monotonic() - start
    [cell] = stopped["games"]["rope_team"]["cells"]
    assert cell["errors"] == 10 and not stopped["complete"]
    assert "took longer than 0.5 s" in cell["error_examples"][0]
    assert "not played: the agent failed earlier" in cell["error_examples"][1]
    start = time.monotonic()
    kept = benchmark(spec, games_per_cell=10, limits=limits, keep_going=True,
                     **{**EASY, "partners": ["simple"], "parts": ["dev"]})
    slow = time.monotonic() - start
    assert all("took longer than 0.5 s" in e for c in kept["games"]["rope_team"]["cells"]
               for e in c["error_examples"])
    assert fast < 2 * 0.5 + 4 and slow > 3 * 10 * 0.5  # self-play and both seats, every deal timed out
