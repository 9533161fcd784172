"""``act_batch``: an agent whose class defines it plays a chunk's games in lockstep, one call answering every waiting
game (evaluation/matches/lockstep.py). The records must be the game-by-game records, in process and isolated, in all
three games; its failures are each game's own (a raise loses the call's games, a non-action its own game, a dead
worker every game it held) and are reported as any agent's are."""

from __future__ import annotations

import textwrap

import pytest

from cardzoo.agents.isolated import Limits
from cardzoo.envs.common.errors import IllegalActionError
from cardzoo.evaluation.matches.runner import Matchup, run

AGENT = """\
import json, os
import numpy as np

LOG = {log!r}


class Greedy:
    # the lowest legal action, a seeded random one every fifth decision: state per game, and a seed that matters
    def __init__(self, seat, seed):
        self.rng, self.n = np.random.default_rng(seed), 0

    def act(self, observation, action_mask):
        self.n += 1
        legal = np.flatnonzero(action_mask)
        return int(self.rng.choice(legal)) if self.n % 5 == 0 else int(legal[0])


class Batched(Greedy):
    batch_size = {batch_size}

    @staticmethod
    def act_batch(agents, observations, action_masks):
        assert observations.shape[0] == action_masks.shape[0] == len(agents)
        with open(LOG, "a") as f:
            f.write(json.dumps([len(agents), os.getpid()]) + "\\n")
        return [a.act(o, m) for a, o, m in zip(agents, observations, action_masks)]


def plain(game, seat, seed):
    return Greedy(seat, seed)


def batched(game, seat, seed):
    return Batched(seat, seed)
"""

PARTNERS = {"rope_team_v0": "simple", "summit_rush_v0": "simple", "rook_v0": "heuristic"}


def _module(tmp_path, batch_size=None, extra: str = "", name: str = "batchy") -> tuple[str, object]:
    log = tmp_path / f"{name}.jsonl"
    path = tmp_path / f"{name}.py"
    path.write_text(AGENT.format(log=str(log), batch_size=batch_size) + textwrap.dedent(extra))
    return str(path), log


def _calls(log) -> list[int]:
    import json

    return [json.loads(line)[0] for line in log.read_text().splitlines()] if log.exists() else []


def _strip(records):  # CPU time is measured, not played: the one field two equal runs may differ in
    return [{k: v for k, v in r.items() if k != "cpu"} for r in records]


@pytest.mark.parametrize("env", sorted(PARTNERS))
@pytest.mark.parametrize("strict", [True, False])
def test_lockstep_records_equal_game_by_game(tmp_path, env, strict):
    path, log = _module(tmp_path)
    options = {"talk": True} if env == "summit_rush_v0" else {}
    games = 24
    played = {}
    for factory in ("plain", "batched"):
        matchup = Matchup.of(env, [f"{path}:{factory}", PARTNERS[env]], strict=strict, **options)
        played[factory] = run(matchup, games, base_seed=5_000, workers=1, chunk=10, progress=False)
    assert _strip(played["batched"]) == _strip(played["plain"])
    calls = _calls(log)
    assert max(calls) == 10  # one call answers a whole chunk's waiting games
    if not strict:  # and each game counts one decision per call it was in
        assert sum(calls) == sum(r["decisions"][0] for r in played["batched"])


@pytest.mark.parametrize("env", ["rope_team_v0", "summit_rush_v0"])
def test_an_isolated_agent_batches_in_its_own_worker(tmp_path, env):
    path, log = _module(tmp_path, batch_size=4)
    options = {"talk": True} if env == "summit_rush_v0" else {}
    played = {}
    for factory in ("plain", "batched"):
        matchup = Matchup.of(env, [f"{path}:{factory}", PARTNERS[env]], strict=False, isolation=Limits(), **options)
        played[factory] = run(matchup, 12, base_seed=7_000, workers=1, progress=False)
    assert _strip(played["batched"]) == _strip(played["plain"])
    assert all(r["outcome"] != "error" for r in played["batched"])
    calls = _calls(log)
    assert max(calls) == 4  # batch_size caps a call; every call ran in the agent's worker, not here
    import json
    import os

    pids = {json.loads(line)[1] for line in log.read_text().splitlines()}
    assert os.getpid() not in pids and len(pids) == 1


def test_a_seat_of_agents_both_batching(tmp_path):
    path, log = _module(tmp_path)
    played = {f: run(Matchup.of("rope_team_v0", [f"{path}:{f}"], strict=False), 10, workers=1, progress=False)
              for f in ("plain", "batched")}
    assert _strip(played["batched"]) == _strip(played["plain"])
    assert max(_calls(log)) == 10


FAILING = """

class Raises(Batched):
    @staticmethod
    def act_batch(agents, observations, action_masks):
        raise RuntimeError("batch boom")


class OneBad(Batched):
    # in the first call, the third game's entry is not an action; the others play on
    first = [True]

    @staticmethod
    def act_batch(agents, observations, action_masks):
        out = Batched.act_batch(agents, observations, action_masks)
        if OneBad.first.pop() if OneBad.first else False:
            out[2] = "two"
        return out


class Exits(Batched):
    @staticmethod
    def act_batch(agents, observations, action_masks):
        os._exit(3)


def raises(game, seat, seed):
    return Raises(seat, seed)


def exits(game, seat, seed):
    return Exits(seat, seed)


def one_bad(game, seat, seed):
    return OneBad(seat, seed)
"""


def test_a_raising_batch_loses_its_games_and_names_the_call(tmp_path):
    path, _ = _module(tmp_path, extra=FAILING)
    records = run(Matchup.of("rope_team_v0", [f"{path}:raises", "simple"], strict=False), 6, base_seed=11,
                  workers=1, progress=False)
    assert [r["outcome"] for r in records] == ["error"] * 6
    error = records[0]["error"]
    assert f"{path}:raises" in error and "player_0" in error and "game seed 11" in error
    assert "decision 1: act_batch (6 games) raised RuntimeError: batch boom" in error
    with pytest.raises(RuntimeError, match="batch boom"):  # a strict matchup raises the agent's error
        run(Matchup.of("rope_team_v0", [f"{path}:raises", "simple"]), 2, workers=1, progress=False)


def test_a_non_action_in_a_batch_loses_that_game_only(tmp_path):
    path, _ = _module(tmp_path, extra=FAILING)
    records = run(Matchup.of("rope_team_v0", [f"{path}:one_bad", "simple"], strict=False), 6, base_seed=21,
                  workers=1, progress=False)
    outcomes = [r["outcome"] for r in records]
    assert outcomes[2] == "error" and outcomes.count("error") == 1
    assert "act_batch (6 games) returned 'two' for this game, not an action" in records[2]["error"]
    path, _ = _module(tmp_path, extra=FAILING, name="again")  # a fresh module: its first call again
    with pytest.raises(IllegalActionError, match="'two'"):
        run(Matchup.of("rope_team_v0", [f"{path}:one_bad", "simple"]), 6, base_seed=21, workers=1, progress=False)


def test_after_a_failure_the_chunk_stops_when_the_run_stops_on_failures(tmp_path):
    path, _ = _module(tmp_path, extra=FAILING)
    matchup = Matchup.of("rope_team_v0", [f"{path}:one_bad", "simple"], strict=False, stop_on_failure=True)
    records = run(matchup, 6, base_seed=21, workers=1, progress=False)
    assert records[2]["outcome"] == "error" and "not an action" in records[2]["error"]
    others = [r for i, r in enumerate(records) if i != 2]
    assert all(r["outcome"] == "error" and r["error"].startswith("not played: the agent failed earlier (game seed 23)")
               for r in others)


def test_an_isolated_worker_that_dies_in_a_batch_loses_every_game_it_held(tmp_path):
    path, _ = _module(tmp_path, extra=FAILING)
    matchup = Matchup.of("rope_team_v0", [f"{path}:exits", "simple"], strict=False, isolation=Limits())
    records = run(matchup, 5, base_seed=31, workers=1, progress=False)
    assert [r["outcome"] for r in records] == ["error"] * 5
    assert all("the agent's process exited with code 3" in r["error"] for r in records)
    assert "act_batch for 5 games" in records[0]["error"]
