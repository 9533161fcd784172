"""The benchmark's partner and opponent pools (``cardzoo.agents.pools``): their shape, their split, and that every
member is an agent the registry makes. (No peeking for the members: ``test_no_peeking.py`` runs every registry agent.)
"""

from __future__ import annotations

import pytest

from cardzoo.agents.pools import POOLS, VERSION, Pool, pool
from cardzoo.agents.registry import DESCRIPTIONS, make_agent
from cardzoo.envs import GAMES, OptionError, spec


def test_every_game_has_a_pool_found_by_any_name_the_registry_accepts():
    assert set(POOLS) == set(GAMES)
    for name, game in GAMES.items():
        p = POOLS[name]
        assert pool(name) is p and pool(game.env_id) is p and pool(game) is p and pool(game.make()) is p
        assert p.version == VERSION
    with pytest.raises(OptionError, match="unknown game 'chess'"):
        pool("chess")


@pytest.mark.parametrize("game", list(POOLS))
def test_dev_and_test_are_disjoint_and_nonempty(game):
    p = POOLS[game]
    assert p.dev and p.test and p.weak
    assert not set(p.dev) & set(p.test) and not set(p.weak) & set(p.dev + p.test)
    assert p.members() == p.dev + p.test + p.weak
    assert len(set(p.members())) == len(p.members())


@pytest.mark.parametrize("game", [g for g, s in GAMES.items() if s.cooperative])
def test_cooperative_pools_have_at_least_eight_partners(game):
    assert len(POOLS[game].members()) >= 8


def test_rook_has_at_least_four_opponents():
    assert len(POOLS["rook"].members()) >= 4


def test_convention_families_sit_on_both_sides():
    """The rule variants of each game's baseline and its trained policies have members in dev and in test, so a dev
    result says something about test; random play is a weak partner, in neither."""
    families = {"rope_team": (("simple", "simple_"), ("learned",)),
                "summit_rush": (("simple", "summit_"), ("learned",))}
    for game, groups in families.items():
        p = POOLS[game]
        for prefixes in groups:
            for part in (p.dev, p.test):
                assert any(m.startswith(prefixes) for m in part), (game, prefixes, part)
    for p in POOLS.values():
        assert "random" in p.weak and "random" not in p.dev + p.test


@pytest.mark.parametrize("game", list(POOLS))
def test_every_member_is_made_by_the_registry_and_described(game):
    env_id = spec(game).env_id
    for name in POOLS[game].members():
        agent = make_agent(name, env_id, seed=0)
        assert callable(agent.act), name
        assert name in DESCRIPTIONS, name


def test_a_malformed_pool_is_refused_with_the_reason():
    with pytest.raises(OptionError, match="disjoint; dev and test both hold 'simple'"):
        Pool(VERSION, dev=("simple", "random"), test=("simple",))
    with pytest.raises(OptionError, match="disjoint; test and weak both hold 'random'"):
        Pool(VERSION, dev=("simple",), test=("random",), weak=("random",))
    with pytest.raises(OptionError, match="names an agent twice"):
        Pool(VERSION, dev=("simple", "simple"), test=("random",))
    with pytest.raises(OptionError, match="tuple of agent names"):
        Pool(VERSION, dev=["simple"], test=("random",))
    with pytest.raises(OptionError, match="not 'train'"):
        POOLS["rook"].part("train")
    assert POOLS["rook"].part("test") == POOLS["rook"].test
