"""``cardzoo benchmark`` and its protocol: replays from the deal key, agents from files, the reserved deals on both
sides, bad specs, illegal moves by the env's penalty, failing agents named with the game and deal. Tiny pools and
budgets: the protocol takes the pool as data. (Isolation and the broken agents: test_benchmark_isolation.py.)"""

from __future__ import annotations

import hashlib
import json
import textwrap

import pytest

from cardzoo.agents.pools import Pool
from cardzoo.agents.registry import make_agent
from cardzoo.envs.common.errors import OptionError, PolicyError
from cardzoo.evaluation.cli import main
from cardzoo.evaluation.protocol import benchmark, read, write
from cardzoo.evaluation.protocol import seeds as reserved
from cardzoo.evaluation.protocol.protocol import SETTINGS
from cardzoo.evaluation.protocol.results import markdown

POOLS = {"rope_team": Pool("tiny", ("simple",), ("random",)), "summit_rush": Pool("tiny", ("simple",), ("random",)),
         "rook": Pool("tiny", ("heuristic",), ("random",))}
RANDOM_AGENT = "cardzoo.evaluation.protocol.template_agent:make_agent"
KEY = bytes(range(32))  # a fixed deal key: the same deals and agent seeds in every run given it


def _without_timing(result: dict) -> dict:
    """The result without what a run's CPU load changes (the time per decision)."""
    result = json.loads(json.dumps(result))
    result.pop("compute")  # the run's wall time and the agent's CPU: measured, not played
    for game in result["games"].values():
        game["headline"].pop("cpu_ms_per_decision")
        for cell in game["cells"]:
            cell.pop("agent_cpu_s")
    return result


def test_each_spec_is_made_once_per_seat_check_and_per_worker_not_per_cache_key(tmp_path, monkeypatch):
    """The cache key of every cell needs each agent's fingerprint (its weights): worked out once per run from the
    agent made to check the spec, not by making the agent again for every cell."""
    from collections import Counter

    from cardzoo.agents import registry
    from cardzoo.evaluation.matches import runner
    from cardzoo.evaluation.protocol import run

    made: Counter[str] = Counter()
    real = registry.make_agent

    def counted(name, game, *args, **kwargs):
        made[name] += 1
        return real(name, game, *args, **kwargs)

    for module in (registry, run, runner):
        monkeypatch.setattr(module, "make_agent", counted)
    benchmark("learned", games=["rope_team"], games_per_cell=4, pools=POOLS, levels=["easy"], cache=tmp_path,
              deal_key=KEY)
    # both seats checked (2), then one per seat it plays in the worker: self-play (2) and 2 members x 2 seats (4)
    assert made["learned"] == 2 + 2 + 4


def _file_agent(tmp_path, body: str, name: str = "my_agent.py") -> str:
    path = tmp_path / name
    path.write_text("import numpy as np\n\n" + textwrap.dedent(body))
    return f"{path}:make"


def test_the_protocol_replays_identically_from_scratch_from_the_cache_and_on_two_workers(tmp_path):
    args = {"games": ["rope_team", "rook"], "games_per_cell": 6, "pools": POOLS}
    first = benchmark("learned", deal_key=KEY, **args)
    cached = benchmark("learned", cache=tmp_path, deal_key=KEY, **args)
    again = benchmark("learned", cache=tmp_path, workers=2, deal_key=KEY.hex(), **args)  # the key as recorded
    assert _without_timing(first) == _without_timing(cached) == _without_timing(again)
    rope = first["games"]["rope_team"]
    # self-play and two members in two seats on each of the four levels, all on the key's deals
    assert len(rope["cells"]) == 4 * 5 and {c["games"] for c in rope["cells"]} == {6}
    assert first["deals"] == {"key": KEY.hex(), "count": 6, "range": [reserved.FIRST, reserved.FIRST + 10**9 - 1]}
    assert rope["digest"].startswith("weights:") and first["protocol"] == "benchmark_v2"
    assert first["complete"] and first["failures"] == []
    # without a key, a fresh one: other deals, and the key that made them recorded
    fresh = benchmark("learned", **args)
    assert fresh["deals"]["key"] != KEY.hex() and len(bytes.fromhex(fresh["deals"]["key"])) == 32
    assert [c["deals"] for c in fresh["games"]["rope_team"]["cells"]] != [c["deals"] for c in rope["cells"]]
    # the headline is the cells' sums: self-play over the levels, each part over its members' both seats
    h = rope["headline"]
    assert h["self"]["wins"] == sum(c["wins"] for c in rope["cells"] if c["kind"] == "self")
    assert h["cross"]["test"]["games"] == 4 * 2 * 6
    assert h["gap"]["dev"] == pytest.approx(h["self"]["rate"] - h["cross"]["dev"]["rate"])
    assert h["worst"]["partner"] == "random" and h["cpu_ms_per_decision"] > 0
    assert h["vs_reference"]["self"]["games"] == 4 * 6  # learned against simple on the same self-play deals
    assert first["games"]["rook"]["headline"]["self"] is None  # Rook: opponents only


def test_a_cell_is_the_games_of_the_keyed_deals():
    """A cell's per-deal results are the games ``reset(seed=s_i)`` of the key's deals played directly, the agents
    seeded from the key, the deal and the seat."""
    from cardzoo.agents.loops import play_env_game
    from cardzoo.agents.seeding import keyed_agent_seed
    from cardzoo.envs.common.record import make_env

    result = benchmark("random", games=["rope_team"], games_per_cell=12, pools=POOLS, deal_key=KEY)
    cell = next(c for c in result["games"]["rope_team"]["cells"] if c["setting"] == "easy" and c["partner"] == "simple"
                and c["seat"] == 1)
    env = make_env("rope_team_v0", level="easy")
    won = []
    deals = reserved.keyed_deals(KEY, 12)
    assert len(set(deals)) == 12 and all(s in reserved.BENCHMARK for s in deals) and deals != sorted(deals)
    for seed in deals:
        agents = [make_agent("simple", "rope_team_v0"), make_agent("random", "rope_team_v0")]
        for seat, agent in enumerate(agents):
            agent.reset(seed=keyed_agent_seed(KEY, seed, seat))
        won.append("W" if play_env_game(env, agents, seed)["outcome"] == "win" else "L")
    assert cell["deals"] == "".join(won) and "W" in won and "L" in won


def test_a_module_callable_agent_from_a_temporary_file_is_scored(tmp_path):
    spec = _file_agent(tmp_path, """
        CALLS = []

        class Lowest:
            def act(self, observation, action_mask):
                return int(np.flatnonzero(action_mask)[0])

        def make(game, seat, seed):
            CALLS.append((game, seat, seed))
            return Lowest()
        """)
    result = benchmark(spec, games=["rope_team"], games_per_cell=4, pools=POOLS)
    rope = result["games"]["rope_team"]
    assert sum(c["games"] for c in rope["cells"]) == 20 * 4 and rope["headline"]["errors"] == 0
    path = str((tmp_path / "my_agent.py").resolve())
    own = hashlib.sha256(path.encode() + b"\0" + (tmp_path / "my_agent.py").read_bytes() + b"\0").hexdigest()
    assert rope["digest"] == "sha256:" + own  # its worker imported no other code of its own
    # the factory is called afresh for each game with the game, the seat and the seat's seed
    agent = make_agent(spec, "rope_team_v0", seat=1)
    agent.reset(seed=7)
    first = agent.agent
    agent.reset(seed=8)
    assert agent.agent is not first
    import sys

    module = next(m for m in sys.modules.values() if getattr(m, "__file__", None) == str(tmp_path / "my_agent.py"))
    assert module.CALLS[-2:] == [("rope_team", 1, 7), ("rope_team", 1, 8)]


def test_a_policy_file_is_scored_on_its_game_and_the_others_are_said_to_be_skipped():
    from pathlib import Path

    path = str(Path(__file__).resolve().parents[1] / "agents" / "policies" / "rope_team_v2.npz")
    result = benchmark(path, games_per_cell=2, pools=POOLS, deal_key=KEY)
    assert list(result["games"]) == ["rope_team"] and set(result["skipped"]) == {"summit_rush", "rook"}
    assert "trained on rope_team_v0, not rook_v0" in result["skipped"]["rook"]
    with open(path, "rb") as f:
        assert result["games"]["rope_team"]["digest"] == "sha256:" + hashlib.sha256(f.read()).hexdigest()
    # the same weights as the registry's learned: the same games
    learned = benchmark("learned", games=["rope_team"], games_per_cell=2, pools=POOLS, deal_key=KEY)
    assert [c["deals"] for c in result["games"]["rope_team"]["cells"]] == [
        c["deals"] for c in learned["games"]["rope_team"]["cells"]]


def test_the_template_agent_is_a_working_spec():
    result = benchmark(RANDOM_AGENT, games=["summit_rush"], games_per_cell=2, pools=POOLS)
    cells = result["games"]["summit_rush"]["cells"]
    # every level of Summit Rush, 5 cells each: self-play, then each of the two partners in both seats
    assert len(cells) == len(SETTINGS["summit_rush"]) * 5 and all(c["errors"] == c["illegal"] == 0 for c in cells)


def test_the_benchmark_plays_only_its_reserved_deals():
    assert reserved.benchmark_seeds(3) == [reserved.FIRST, reserved.FIRST + 1, reserved.FIRST + 2]
    reserved.check_benchmark_seeds(reserved.benchmark_seeds(5))
    for seeds in ([0], [reserved.FIRST - 1], [reserved.FIRST + reserved.SIZE]):
        with pytest.raises(OptionError, match="only deals in its reserved range"):
            reserved.check_benchmark_seeds(seeds)
    with pytest.raises(OptionError, match="1..1,000,000,000 deals"):
        reserved.benchmark_seeds(reserved.SIZE + 1)
    with pytest.raises(OptionError, match="positive integer"):
        benchmark("random", games_per_cell=0, pools=POOLS)


def test_training_refuses_the_benchmarks_deals(monkeypatch):
    from cardzoo.training import common, gym_envs, train

    # fixed streams: a --seed that pushes them into the reserved range is refused before any game
    cfg = train.TrainConfig(game="rope_team", seed=reserved.FIRST // 7_777_777 + 1, imitate="simple",
                            imitate_games=10, levels=("easy",))
    with pytest.raises(OptionError, match="imitation warm start.*reserved deals"):
        train.imitation_data(cfg)
    monkeypatch.setattr(common, "EVAL_BASE_SEED", reserved.FIRST - 5)
    with pytest.raises(OptionError, match="held-out evaluation"):
        common.held_out(("easy",), 10, lambda level, seeds: 0.0)
    # random draws: a draw inside the range is drawn again
    env = gym_envs.SharedPolicyEnv([lambda: make_env_raw()], seed=0)

    class Rigged:
        def __init__(self):
            self.draws = [reserved.FIRST + 3, 42]

        def integers(self, high):
            return self.draws.pop(0)

    env._np_random = Rigged()
    env.reset()
    assert env.env.game_record()["seed"] == 42


def test_the_batched_streams_refuse_the_benchmarks_deals():
    pytest.importorskip("stable_baselines3")
    from cardzoo.envs.batched import make_batched
    from cardzoo.training.batched_vec import BatchedVecEnv

    vec = BatchedVecEnv(make_batched("rope_team_v0", 2, level="easy"))
    vec.seed(reserved.FIRST - 10)
    with pytest.raises(OptionError, match="batched env's seed stream"):
        vec.reset()
    vec.seed(5)
    vec.reset()  # a stream far below the range plays


def make_env_raw():
    from cardzoo.envs import rope_team_v0

    return rope_team_v0.raw_env()


@pytest.mark.parametrize("spec, problem", [
    ("no_such_agent", "no agent 'no_such_agent'"),
    ("no_such_module_xyz:make", "no module 'no_such_module_xyz'"),
    ("cardzoo.evaluation.protocol.template_agent:missing", "has no attribute 'missing'"),
    ("cardzoo.evaluation.protocol.template_agent:np", "not callable"),
    ("missing/policy.npz", "missing/policy.npz"),
])
def test_a_bad_agent_spec_is_an_error_naming_it(spec, problem):
    with pytest.raises((OptionError, PolicyError), match=problem):  # PolicyError: a policy file's own problems
        benchmark(spec, games=["rope_team"], games_per_cell=2, pools=POOLS)


def test_a_bad_spec_on_the_command_line_is_one_line_naming_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["benchmark", "nosuch_agent:make", "--games", "2", "--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "'nosuch_agent:make'" in err and "Traceback" not in err


def test_the_command_writes_json_markdown_and_a_heat_map(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    main(["benchmark", "random", "--only", "rook", "--games", "3", "--out", str(tmp_path), "--quiet"])
    result = read(tmp_path / "random.json")
    assert (tmp_path / "random.png").stat().st_size > 1000
    assert result["package"] and result["budget"] == "custom" and result["command"].startswith("cardzoo benchmark")
    rook = result["games"]["rook"]
    from cardzoo.agents.pools import pool

    assert len(rook["cells"]) == 2 * len(pool("rook").members())
    cell = rook["cells"][0]
    assert {"games", "wins", "low", "high", "illegal", "errors", "deals"} <= cell.keys()
    assert "## Rook for Two" in (tmp_path / "random.md").read_text() and "random.json" in capsys.readouterr().out


ILLEGAL_AGENTS = """\
from cardzoo.agents.base import BitsAgent
import numpy as np


class IllegalOnSomeDeals:
    '''Plays its lowest legal card, but an illegal one (a card the mask forbids) in every third game.'''

    def __init__(self, seed):
        self.illegal = seed % 3 == 0

    def act(self, observation, action_mask):
        if self.illegal and not action_mask.all():
            return int(np.flatnonzero(action_mask == 0)[0])
        return int(np.flatnonzero(action_mask)[0])


class IllegalBits(BitsAgent):
    '''The same as a bit-level agent, so the runner's fast Rope Team loop plays it.'''

    def reset(self, seed=None):
        self.illegal = seed is not None and seed % 3 == 0

    def act_bits(self, bits, legal, size=None, n_actions=None):
        illegal = [c for c in range(52) if not legal >> c & 1]
        if self.illegal and illegal:
            return illegal[0]
        return next(c for c in range(52) if legal >> c & 1)
"""


@pytest.mark.parametrize("how, game", [("a module:callable agent (the env's loop)", "rope_team"),
                                       ("a bit-level registry agent (the fast loop)", "rope_team"),
                                       ("a module:callable agent (the tick loop)", "summit_rush")])
def test_an_illegal_move_loses_by_the_envs_penalty_and_is_counted(tmp_path, monkeypatch, how, game):
    monkeypatch.syspath_prepend(str(tmp_path))
    code = ILLEGAL_AGENTS + "\n\ndef make(game, seat, seed):\n    return IllegalOnSomeDeals(seed)\n"
    (tmp_path / "illegal_agents.py").write_text(code)
    spec = "illegal_agents:make"
    if "registry" in how:
        import illegal_agents

        from cardzoo.agents.registry import AGENTS

        spec = "illegal_bits"
        monkeypatch.setitem(AGENTS, spec, {"rope_team_v0": lambda seed: illegal_agents.IllegalBits()})
    result = benchmark(spec, games=[game], games_per_cell=9, pools=POOLS, deal_key=KEY)
    for cell in result["games"][game]["cells"]:
        seats = (0, 1) if cell["kind"] == "self" else (cell["seat"],)
        from cardzoo.agents.seeding import keyed_agent_seed

        expected = [any(keyed_agent_seed(KEY, seed, s) % 3 == 0 for s in seats)
                    for seed in reserved.keyed_deals(KEY, 9)]
        assert [d == "I" for d in cell["deals"]] == expected, cell["deals"]
        assert cell["illegal"] == sum(expected) == cell["outcomes"].get("illegal", 0) > 0
        assert cell["errors"] == 0 and cell["wins"] <= 9 - cell["illegal"]
    assert result["games"][game]["headline"]["illegal"] > 0


def test_an_agent_that_raises_or_returns_no_action_is_named_and_the_other_cells_run(tmp_path):
    spec = _file_agent(tmp_path, """
        class Flaky:
            def __init__(self, seat, seed):
                self.seat, self.seed = seat, seed

            def act(self, observation, action_mask):
                if self.seat == 0 and self.seed % 2 == 0:
                    raise RuntimeError("the model server is down")
                if self.seat == 0:
                    return "7♠"
                return int(np.flatnonzero(action_mask)[0])

        def make(game, seat, seed):
            return Flaky(seat, seed)
        """, "flaky.py")
    result = benchmark(spec, games=["rope_team", "rook"], games_per_cell=4, pools=POOLS, keep_going=True,
                       deal_key=KEY)
    # the seat-0 cells: on each Rope Team level self-play and both partners, and Rook's two opponents
    assert result["complete"] and len(result["failures"]) == 4 * 3 + 2
    for game, env in (("rope_team", "rope_team_v0"), ("rook", "rook_v0")):
        cells = result["games"][game]["cells"]
        as_first = [c for c in cells if c["seat"] in (0, None)]
        as_second = [c for c in cells if c["seat"] == 1]
        assert all(c["errors"] == c["games"] == 4 and set(c["deals"]) == {"E"} for c in as_first)
        assert all(c["errors"] == 0 and c["games"] == 4 and "E" not in c["deals"] for c in as_second)
        assert all(c["failed"] for c in as_first) and not any(c["failed"] for c in as_second)
        messages = [e for c in as_first for e in c["error_examples"]]
        deals = reserved.keyed_deals(KEY, 4)
        for m in messages:  # each names the deal (its number and seed), the agent, its seat and the decision
            number = int(m.split(":")[0].removeprefix("deal "))
            assert f"{env} game seed {deals[number]}" in m and "player_0" in m and "flaky.py:make" in m
        assert any("decision 1: act raised RuntimeError: the model server is down" in m for m in messages)
        assert any("decision 1: act returned '7♠', not an integer action" in m for m in messages)
    text = markdown(result)
    assert "the model server is down" in text


def test_results_are_read_back_and_a_foreign_file_is_refused(tmp_path):
    result = benchmark("random", games=["rook"], games_per_cell=2, pools=POOLS)
    path = write(result, tmp_path, chart=False)
    assert read(path) == json.loads(json.dumps(result))
    (tmp_path / "other.json").write_text(json.dumps({"protocol": "benchmark_v0"}))
    from cardzoo.envs.common.errors import RecordError

    with pytest.raises(RecordError, match="other.json: not a result of benchmark_v1 or benchmark_v2"):
        read(tmp_path / "other.json")


THREE_PARTS = {"rook": Pool("tiny", ("heuristic",), ("heuristic_timid",), ("random",)),
               "rope_team": Pool("tiny", ("simple",), ("simple_wary",), ("random",))}


def test_the_quick_budget_plays_self_play_and_the_test_part_and_full_every_part(monkeypatch):
    from cardzoo.evaluation.protocol import protocol

    monkeypatch.setitem(protocol.BUDGETS, "quick", 2)  # the quick budget's cells, at 2 games each
    quick = benchmark("random", games=["rope_team"], budget="quick", pools=THREE_PARTS, deal_key=KEY)
    rope = quick["games"]["rope_team"]
    assert rope["pool"]["played"] == ["test"] and quick["budget"] == "quick"
    assert {(c["kind"], c["partner"]) for c in rope["cells"]} == {("self", None), ("partner", "simple_wary")}
    assert rope["headline"]["cross"]["dev"] is None and rope["headline"]["cross"]["weak"] is None
    custom = benchmark("random", games=["rope_team"], games_per_cell=2, pools=THREE_PARTS, deal_key=KEY)
    assert custom["games"]["rope_team"]["pool"]["played"] == ["dev", "test", "weak"]
    tuning = benchmark("random", games=["rope_team"], games_per_cell=2, pools=THREE_PARTS, parts=["dev"])
    assert {c["partner"] for c in tuning["games"]["rope_team"]["cells"]} == {None, "simple"}
    with pytest.raises(OptionError, match="the pool parts are dev, test, weak"):
        benchmark("random", games=["rope_team"], games_per_cell=2, pools=THREE_PARTS, parts=["train"])


def test_the_weak_part_is_a_robustness_row_outside_the_headline_and_the_worst_partner():
    result = benchmark("simple", games=["rope_team"], games_per_cell=12, pools=THREE_PARTS, deal_key=KEY,
                       levels=["easy"])
    h = result["games"]["rope_team"]["headline"]
    cells = result["games"]["rope_team"]["cells"]
    assert h["cross"]["weak"]["games"] == 2 * 12 and h["members"]["random"]["part"] == "weak"
    assert h["cross"]["all"]["games"] == 2 * 2 * 12  # dev and test only
    assert h["cross"]["all"]["wins"] == sum(c["wins"] for c in cells if c["part"] in ("dev", "test"))
    # the worst is the lowest competent member, though the weak one does worse still
    assert h["worst"]["partner"] in ("simple", "simple_wary")
    assert h["members"]["random"]["rate"] < h["worst"]["rate"]
    assert "| with the weak partners (robustness, not in the headline) |" in markdown(result)
