"""The game registry (``cardzoo.envs.registry``): every entry resolves, the tables that used to be typed per module
are derived from it, every command offers exactly the registered games, and each game's ``rules.deal`` is the deal
the code made by hand before it (the same generator draws, in the same order)."""

from __future__ import annotations

import argparse
import importlib
import random
from pathlib import Path

import numpy as np
import pytest

from cardzoo.agents.registry import AGENTS, agent_names, make_agent
from cardzoo.envs import GAMES, GameSpec, OptionError, spec
from cardzoo.envs.registry import batched, register

ROOT = Path(__file__).resolve().parents[1]
SPECS = list(GAMES.values())
IDS = [s.name for s in SPECS]


# ----------------------------------------------------------------------------- each entry resolves
@pytest.mark.parametrize("game", SPECS, ids=IDS)
def test_every_module_attr_field_loads(game):
    module = importlib.import_module(game.module)
    assert callable(module.env) and callable(getattr(module, game.doc_attr))
    assert spec(module.env()) is game and spec(game.make()) is game  # the env names itself by its env id
    assert (ROOT / "seeds" / game.rules_doc).is_file()
    for field in ("engine", "fast_loop", "tick_steps"):
        if getattr(game, field) is not None:
            assert callable(game.load(field)), field
        else:
            with pytest.raises(OptionError, match=f"{game.name} has no"):
                game.load(field)


@pytest.mark.parametrize("game", SPECS, ids=IDS)
def test_every_entry_holds_what_the_rest_of_the_code_asks_of_a_game(game):
    """The fields callers ask the registry for instead of dispatching on the game's name: each is given and is what
    its callers need (a game missing one fails here, not in whichever command reaches it first)."""
    from cardzoo.agents.pools import Pool, pool
    from cardzoo.envs.common.text import TextView
    from cardzoo.evaluation.protocol.protocol import SETTINGS
    from cardzoo.play.views import SeatView

    for field in ("text_view", "seat_view", "pool"):
        assert getattr(game, field), f"{game.name} names no {field}"
    assert issubclass(game.load("text_view"), TextView) and issubclass(game.load("seat_view"), SeatView)
    assert game.load("seat_view").game == game.env_id and game.load("text_view").game == game.env_id
    assert isinstance(pool(game.name), Pool) and pool(game.name).dev and pool(game.name).test
    env = game.make(parallel=False)
    assert env.action_space(env.possible_agents[0]).n in game.action_sizes
    assert SETTINGS[game.name] and all(set(dict(s.options)) <= set(game.options) for s in SETTINGS[game.name])
    view = game.load("seat_view")
    assert view.typing_help and view.rules() and callable(view.at_table) and callable(view.outcome_text)
    assert game.tick_steps is not None or not game.parallel  # a Parallel game is played tick by tick


@pytest.mark.parametrize("game", SPECS, ids=IDS)
def test_levels_and_options_are_the_game_modules_own(game):
    rules = importlib.import_module(f"cardzoo.envs.{game.name}.rules")
    env_module = importlib.import_module(f"cardzoo.envs.{game.name}.env")
    assert game.levels == tuple(getattr(rules, "LEVELS", {}))
    assert game.options == tuple(env_module.ENV_OPTIONS)
    assert callable(rules.deal)
    if game.levels:
        assert game.default_level in game.levels
        assert set(game.train_levels) <= set(game.levels) and set(game.policy_levels) <= set(game.levels)
        assert "level" in game.options
    assert game.talk == ("talk" in game.options)
    assert set(game.train_options) <= set(game.options)


@pytest.mark.parametrize("game", SPECS, ids=IDS)
def test_the_baseline_is_an_agent_of_the_game(game):
    assert game.baseline in agent_names(game.env_id)


def test_every_agent_is_registered_for_registered_games_only():
    env_ids = {s.env_id for s in SPECS}
    named = {env for games in AGENTS.values() for env in games if env != "*"}
    assert named and named <= env_ids, named - env_ids


@pytest.mark.parametrize("game", SPECS, ids=IDS)
def test_every_play_variant_makes_the_game(game):
    variants = game.variants()
    assert game.default_variant in variants
    assert list(variants)[:len(game.levels)] == list(game.levels)
    for options in variants.values():
        game.make(**options).reset(seed=0)


@pytest.mark.parametrize("game", [s for s in SPECS if s.ceilings], ids=lambda s: s.name)
def test_the_ceilings_pattern_names_committed_files(game):
    found = sorted((ROOT / "evaluation" / "results").glob(game.ceilings.format(variant="*")))
    assert found, game.ceilings
    levels = game.policy_levels or game.levels
    assert all((ROOT / "evaluation" / "results" / game.ceilings.format(variant=lv)).is_file() for lv in levels)


# ----------------------------------------------------------------------------- looking a game up
def test_spec_accepts_a_name_an_env_id_and_an_env():
    rope = GAMES["rope_team"]
    assert spec("rope_team") is rope and spec("rope_team_v0") is rope and spec(rope) is rope
    from cardzoo.envs import rope_team_v0, summit_rush_v0

    assert spec(rope_team_v0.env()) is rope and spec(rope_team_v0.raw_env()) is rope
    assert spec(summit_rush_v0.parallel_env()) is GAMES["summit_rush"]
    assert spec(summit_rush_v0.env()) is GAMES["summit_rush"]


@pytest.mark.parametrize("bad", ["rope", "rope_team_v1", "", "ROPE_TEAM"])
def test_an_unknown_name_is_refused_naming_the_games(bad):
    with pytest.raises(OptionError, match=r"unknown game .*; games: rope_team, summit_rush, rook"):
        spec(bad)


@pytest.mark.parametrize("bad", [None, 3, object(), ["rope_team"]])
def test_something_that_is_no_game_is_refused_saying_what_is_expected(bad):
    with pytest.raises(OptionError, match="expected a game name .* or a cardzoo env"):
        spec(bad)


def test_a_second_entry_with_a_taken_name_or_env_id_is_refused():
    for name, env_id in (("rope_team", "other_v0"), ("other", "rope_team_v0"), ("rook_v0", "x_v0")):
        twin = GameSpec(name=name, env_id=env_id, title="Twin", parallel=False, cooperative=True, rules_doc="x.md",
                        doc_attr="env", baseline="random")
        with pytest.raises(OptionError, match="already registered"):
            register(twin)
    assert list(GAMES) == IDS


def test_make_agent_takes_the_game_in_each_form():
    from cardzoo.envs import rope_team_v0

    for game in ("rope_team", "rope_team_v0", rope_team_v0.env()):
        assert make_agent("simple", game).act is not None
    with pytest.raises(OptionError, match="unknown game 'rope'; games: rook_v0, rope_team_v0, summit_rush_v0"):
        make_agent("simple", "rope")


# ----------------------------------------------------------------------------- derived tables
def test_the_old_tables_are_derived_from_the_registry():
    from cardzoo.agents.loops import FAST_LOOPS
    from cardzoo.envs.batched import ENGINES
    from cardzoo.envs.common.record import ENV_MODULES, PARALLEL_ENVS
    from cardzoo.evaluation.matches.runner import GAME_LOOPS, GAME_STEPS, RECORD_VERSIONS
    from cardzoo.training import ppo_batched, train

    assert ENV_MODULES == {s.env_id: f"cardzoo.envs.{s.env_id}" for s in SPECS}
    assert PARALLEL_ENVS == tuple(s.env_id for s in SPECS if s.parallel)
    assert ENGINES == {s.env_id: s.engine for s in batched()} and len(ENGINES) == 3
    assert set(FAST_LOOPS) == {s.env_id for s in SPECS if s.fast_loop}
    assert set(GAME_LOOPS) == set(GAME_STEPS) == set(RECORD_VERSIONS) == {s.env_id for s in SPECS if s.tick_steps}
    assert list(train.GAMES) == IDS and list(ppo_batched.GAMES) == [s.name for s in batched()]


# ----------------------------------------------------------------------------- the commands offer the registered games
def _subparser(command: str, backend: str = "sb3") -> argparse.ArgumentParser:
    from cardzoo.evaluation.cli import build_parser

    subs = next(a for a in build_parser(backend)._actions if isinstance(a, argparse._SubParsersAction))
    return subs.choices[command]


def _game_action(parser: argparse.ArgumentParser) -> argparse.Action:
    return next(a for a in parser._actions if a.dest in ("game", "games"))


def _accepted(parser: argparse.ArgumentParser, candidates) -> set[str]:
    """The candidates the parser's game argument takes (its type, or its choices)."""
    action = _game_action(parser)
    taken = set()
    for name in candidates:
        if action.choices is not None:
            if name in action.choices:
                taken.add(name)
            continue
        try:
            action.type(name)
        except argparse.ArgumentTypeError:
            continue
        taken.add(name)
    return taken


CANDIDATES = [*IDS, *(s.env_id for s in SPECS), "rope", "hanabi", "hanabi_v0", "summit", "rope_team_v1", ""]


@pytest.mark.parametrize("command", ["play", "bench"])
def test_play_and_bench_take_exactly_the_registered_games(command):
    parser = _subparser(command)
    assert _accepted(parser, CANDIDATES) == {*IDS, *(s.env_id for s in SPECS)}
    assert ", ".join(sorted(IDS)) in parser.format_help().replace("\n", " ").replace("  ", " ") or command == "bench"


def test_the_unknown_game_message_lists_the_registered_games():
    from cardzoo.envs.common.argtypes import game

    with pytest.raises(argparse.ArgumentTypeError, match="games: " + ", ".join(sorted(IDS)) + "$"):
        game("hanabi")


def test_train_offers_exactly_the_registered_games():
    assert list(_game_action(_subparser("train")).choices) == sorted(IDS)
    from cardzoo.training import distil, ppo_batched

    # the trainers with their own options (cardzoo train GAME --backend batched|distil): the games they are for
    batched_games = _game_action(ppo_batched.add_options(argparse.ArgumentParser())).choices
    assert list(batched_games) == sorted(s.name for s in batched())
    distil_games = _game_action(distil.add_options(argparse.ArgumentParser())).choices
    assert distil_games and set(distil_games) <= set(IDS)


def test_evaluate_has_a_section_for_exactly_the_registered_games():
    from cardzoo.evaluation.report.build import _load_sections
    from cardzoo.evaluation.report.model import SECTIONS

    _load_sections()
    assert list(SECTIONS) == IDS


def test_replay_reads_records_of_exactly_the_registered_games():
    from cardzoo.envs.common.errors import RecordError
    from cardzoo.envs.common.record import load_record

    for s in SPECS:
        record, _ = load_record({"env": s.env_id, "seed": 0, "actions": []})
        assert record["env"] == s.env_id
    with pytest.raises(RecordError, match="known: " + ", ".join(sorted(s.env_id for s in SPECS))):
        load_record({"env": "hanabi_v0", "seed": 0, "actions": []})


def test_serve_offers_exactly_the_registered_games(tmp_path):
    """The play page's catalog is built from the registry: its games, titles, variants and defaults, turn-based games
    first (registration order within each kind), and the page's ``/api/catalog`` serves exactly those."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from cardzoo.play.server import CATALOG, create_app

    assert list(CATALOG) == [s.name for s in SPECS if not s.parallel] + [s.name for s in SPECS if s.parallel]
    with TestClient(create_app(tmp_path), base_url="http://127.0.0.1:8000") as client:
        served = client.get("/api/catalog").json()
    assert list(served) == list(CATALOG)
    for name, entry in served.items():
        assert entry["title"] == GAMES[name].title and entry["variants"] == list(GAMES[name].variants())
        assert entry["default"] == GAMES[name].default_variant and (entry["paces"] is not None) == GAMES[name].parallel
    assert {c["env"] for c in CATALOG.values()} == {s.env_id for s in SPECS}
    for name, entry in CATALOG.items():  # the ready-made variants of the registry are the page's
        assert list(entry["variants"].items()) == list(GAMES[name].variants().items())
        assert entry["default"] == GAMES[name].default_variant
        assert entry["title"] == GAMES[name].title


# ----------------------------------------------------------------------------- one deal per game
SEEDS = [*range(60), 2**31 - 1, 2**40 + 17, 2**63 - 1]


def _slots(state) -> dict:
    """A state's fields, each generator by its state."""
    out = {}
    for name in type(state).__slots__:
        value = getattr(state, name, None)
        if isinstance(value, np.random.Generator):
            value = value.bit_generator.state
        elif isinstance(value, random.Random):
            value = value.getstate()
        out[name] = value
    return out


@pytest.mark.parametrize("level", GAMES["rope_team"].levels)
def test_rope_team_deal_is_the_hand_written_deal(level):
    from cardzoo.envs import rope_team_v0
    from cardzoo.envs.rope_team import rules

    env = rope_team_v0.raw_env(level=level)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)  # the deal as the env, runner, ceilings and distil wrote it
        before = rules.new_game(rules.LEVELS[level], rules.shuffled_deck(rng), rng, dealer=1)
        now = rules.deal(rules.LEVELS[level], seed)
        assert _slots(now) == _slots(before)
        env.reset(seed=seed)
        assert _slots(env.game) == _slots(before)
        assert _slots(GAMES["rope_team"].deal(rules.LEVELS[level], seed)) == _slots(before)


def test_rook_deal_is_the_hand_written_deal():
    from cardzoo.envs import rook_v0
    from cardzoo.envs.rook import rules

    for config, options in ((rules.Config(rounds=1), {"rounds": 1}), (rules.Config(), {})):
        env = rook_v0.raw_env(**options)
        for seed in SEEDS:
            rng = np.random.default_rng(seed)
            before = rules.new_game(config, rules.shuffled_deck(rng), rng, dealer=1)
            assert _slots(rules.deal(config, seed)) == _slots(before)
            env.reset(seed=seed)
            assert _slots(env.game) == _slots(before)


@pytest.mark.parametrize("level", GAMES["summit_rush"].levels)
def test_summit_rush_deal_is_the_hand_written_deal(level):
    from cardzoo.envs import summit_rush_v0
    from cardzoo.envs.summit_rush import rules

    env = summit_rush_v0.parallel_env(level=level)
    config = env.unwrapped.config if hasattr(env, "unwrapped") else env.config
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        deck = rng.permutation(52).tolist()
        before = rules.new_game(config, deck, int(rng.integers(2**63)))
        assert _slots(rules.deal(config, seed)) == _slots(before)
        env.reset(seed=seed)
        assert _slots(env.game) == _slots(before)
    given = list(range(52))  # a given deck: the order seed is the generator's first draw
    assert _slots(rules.deal(config, 5, given)) == _slots(
        rules.new_game(config, given, int(np.random.default_rng(5).integers(2**63))))


def test_the_report_loops_deal_with_the_rules():
    from cardzoo.agents.loops import deal
    from cardzoo.envs.rope_team import rules

    for level in GAMES["rope_team"].levels:
        for seed in SEEDS[:10]:
            assert _slots(deal(seed, level)) == _slots(rules.deal(rules.LEVELS[level], seed))


def test_agent_seed_lives_beside_the_agents_and_is_re_exported():
    from cardzoo.agents import agent_seed, loops
    from cardzoo.agents.seeding import agent_seed as lowest
    from cardzoo.evaluation.matches import runner

    assert agent_seed is lowest is runner.agent_seed is loops.agent_seed
    assert agent_seed(3, 1) == (3 * 1_000_003 + 7919) % 2**63
