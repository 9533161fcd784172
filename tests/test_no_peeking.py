"""No peeking, for every game and every agent in the registry that acts on observations.

(a) A seat's observations are the same, move by move, in two games that differ only in cards it has not seen --
its partner's or opponent's hand, the face-down ridge or peaks, the stocks, the Nest, the cards set aside -- dealt
consistently with everything it has observed, at several points of a game (``hidden_worlds.check_no_peeking``).
(b) The agent under test, with the same seed and fed the same observations, decides the same in both -- inside each
game's live env, so an agent that reads the env, its state or its generator by any path decides differently.
(c) An agent built by the registry and played through a game holds no reference to the env, its game state or an
oracle.

The search agents play with small budgets (their algorithm is the same); the learned agents play every variant
(where no policy fits, their fallback). Two leaking agents show that each check fails when an agent peeks.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cardzoo.agents.registry import agent_names, make_agent
from cardzoo.agents.rook_learned_search import RookLearnedSearch
from cardzoo.agents.rook_search import RookSearch
from cardzoo.agents.rope_team_belief import RopeTeamBeliefSearch
from cardzoo.agents.rope_team_search import RopeTeamSearch
from cardzoo.agents.summit_rush_search import _MEMO, SummitRushSearch
from cardzoo.envs import rope_team_v0
from cardzoo.evaluation.studies import search_rope_team as rope_team_search_study

from .hidden_worlds import GAMES, Diverged, check_no_peeking, holds_live_objects

# Small budgets; Summit Rush's z = 0 leaves the blueprint on any gain, so more of the search decides.
SMALL = {RopeTeamSearch: {"worlds": 48, "rollouts": 32}, SummitRushSearch: {"worlds": 3, "z": 0.0},
         RookSearch: {"worlds": 2, "bid_worlds": 3, "tries": 4}, RopeTeamBeliefSearch: {"rollouts": 32},
         RookLearnedSearch: {"worlds": 2, "bid_worlds": 2, "tries": 4}}
ROPE_LEVELS = ("easy", "normal", "hard", "expert")
SUMMIT_SILENT = ({"level": "normal", "talk": False}, {"level": "hard", "talk": False},
                 {"time_limit": None, "talk": False}, {"players": 3, "talk": False}, {"solo": True, "talk": False})
SUMMIT_TALK = ({"level": "normal", "talk": True},)


def build(name: str, env_name: str, seed: int):
    """The registry's agent ``name`` (a search agent rebuilt with a small budget), seeded with ``seed``."""
    agent = make_agent(name, env_name, seed=seed)
    if type(agent) in SMALL:
        # A learned blueprint keeps its part (Summit Rush: the root move, the first rollout ticks, the simple tail
        # the rest; Rope Team: the whole blueprint, only the budget is small).
        if isinstance(agent, SummitRushSearch) and agent.blueprint_spec != "simple":
            same = {"blueprint": agent.blueprint_spec, "blueprint_ticks": 1, "wins_only": agent.wins_only}
        elif isinstance(agent, RopeTeamSearch):
            same = {"blueprint": agent.blueprint_spec}
        else:
            same = {}
        agent = type(agent)(seed=seed, **SMALL[type(agent)], **same)
    agent.reset(seed)
    return agent


def fresh(name: str, env_name: str, seed: int):
    """A maker of fresh agents ``name`` with the same seed (the Summit Rush search's memo cleared: a memo hit would
    repeat the first game's decision without looking)."""

    def make():
        _MEMO.clear()
        return build(name, env_name, seed)

    return make


class Noisy:
    """A partner or opponent: the agent ``name``, with a share of uniformly random legal moves (positions the agent
    alone would not reach)."""

    def __init__(self, name: str, env_name: str, seed: int, noise: float = 0.25):
        self.agent = make_agent(name, env_name, seed=seed)
        self.agent.reset(seed)
        self.rng = np.random.default_rng(seed)
        self.noise = noise

    def act(self, observation, action_mask):
        action = self.agent.act(observation, action_mask)
        if self.rng.random() < self.noise:
            action = int(self.rng.choice(np.flatnonzero(action_mask)))
        return action


def settings(env_name: str, name: str) -> list[dict]:
    """The env options an agent plays in these tests: each level or variant it fits."""
    if env_name == "rope_team_v0":
        return [{"level": level} for level in ROPE_LEVELS]
    if env_name == "rook_v0":
        return [{"rounds": 1}]
    options = SUMMIT_TALK if "talk" in name else SUMMIT_SILENT
    if name.startswith("learned") and "talk" not in name:  # a silent policy in the talking game, on Expert's clock
        options = (*options, {"level": "expert", "talk": True})
    return list(options)


def partner(env_name: str, name: str) -> str:
    if env_name == "rook_v0":
        return "heuristic"
    return "simple_talk" if env_name == "summit_rush_v0" and "talk" in name else "simple"


def cases():
    for env_name in GAMES:
        for name in agent_names(env_name):
            yield pytest.param(env_name, name, id=f"{env_name}-{name}")


@pytest.mark.parametrize(("env_name", "name"), list(cases()))
def test_indistinguishable_games_same_observations_same_decisions(env_name, name):
    """In each game and variant, for every seat over the deals: at the first, a middle and the last decision of
    the agent's seat, a twin game (every card the seat has not seen relabelled, other seats replayed) gives the
    seat the same observations and the fresh agent the same decisions."""
    game = GAMES[env_name]
    changed = checked = 0
    for i, options in enumerate(settings(env_name, name)):
        players = 1 if options.get("solo") else options.get("players", 2)
        deals = 4 if env_name == "rook_v0" else 2 if env_name == "rope_team_v0" or i < 2 else 1
        if name in ("search_learned", "search_wide") and env_name == "rook_v0":
            # A network in every rollout step, or 17 times the worlds, cost many times the old search's time; two
            # deals still put the agent in both seats.
            deals = 2
        for j, seed in enumerate(range(100 * (i + 1), 100 * (i + 1) + deals)):
            seat = (i + j) % players
            others = {s: Noisy(partner(env_name, name), env_name, seed * 10 + s) for s in range(players) if s != seat}
            changed += check_no_peeking(game, options, seed, seat, fresh(name, env_name, seed * 7 + 1), others)
            checked += 1
    assert checked >= 2
    assert changed >= checked  # the twins really moved hidden cards


# ---------------------------------------------------------------------------- the checks have teeth
def _live_rope_team_game():
    """The game of the one Rope Team env with a game in progress (found as a peeking agent would find it)."""
    live = [o for o in gc.get_objects() if isinstance(o, rope_team_v0.raw_env) and o.game is not None
            and o.game.outcome is None]
    return live[-1].game


class _ReadsTheEnv:
    """A leak: the simple strategy, except that it leads its partner's longest suit, read from the live game."""

    def __init__(self, seed=None):
        self.inner = make_agent("simple", "rope_team_v0", seed=seed)

    def reset(self, seed=None):
        self.inner.reset(seed)

    def act(self, observation, action_mask):
        s = _live_rope_team_game()
        partner = s.hands[1 - s.to_move]
        legal = [c for c in np.flatnonzero(action_mask)]
        return int(max(legal, key=lambda c: ((partner >> (13 * (c // 13))) & 0x1FFF).bit_count()))


class _SamplesTheTruth(rope_team_search_study._Told):
    """A leak: the search agent whose worlds hold its partner's true hand (the study's diagnostic), read from the
    live game."""

    def act(self, observation, action_mask):
        s = _live_rope_team_game()
        self.partner_hand = s.hands[1 - s.to_move]
        return super().act(observation, action_mask)


@pytest.mark.parametrize("leak", [_ReadsTheEnv, lambda seed=None: _SamplesTheTruth(seed=seed, worlds=48, rollouts=32)])
def test_a_peeking_agent_decides_otherwise_in_some_twin(leak):
    game = GAMES["rope_team_v0"]
    caught = 0
    for seed in range(6):
        others = {1 - seed % 2: Noisy("simple", "rope_team_v0", seed)}
        try:
            check_no_peeking(game, {"level": "hard"}, seed, seed % 2, lambda s=seed: leak(seed=s), others)
        except Diverged:
            caught += 1
    assert caught >= 2


# ---------------------------------------------------------------------------- no references to the env
def _play_holding(env_name: str, name: str, options: dict, seed: int) -> list[str]:
    """Play ``name`` in seat 0 (partners as in the pair test) and walk its references after each of its moves."""
    game = GAMES[env_name]
    env = game.make_env(**options)
    agent = build(name, env_name, seed)
    others = {s: Noisy(partner(env_name, name), env_name, seed + s) for s in range(1, options.get("players", 2))}
    found: list[str] = []
    if game.parallel:
        obs, _ = env.reset(seed=seed)
        while env.agents and not found:
            moves = {a: (agent if i == 0 else others[i]).act(obs[a]["observation"], obs[a]["action_mask"])
                     for i, a in enumerate(env.possible_agents)}
            found = holds_live_objects(agent, env)
            obs, *_ = env.step(moves)
        return found
    env.reset(seed=seed)
    for current in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(current)
        env.step((agent if seat == 0 else others[seat]).act(obs["observation"], obs["action_mask"]))
        if seat == 0 and (found := holds_live_objects(agent, env)):
            break
    return found


@pytest.mark.parametrize(("env_name", "name"), list(cases()))
def test_agents_hold_no_reference_to_the_env_or_its_state(env_name, name):
    options = settings(env_name, name)[0]
    assert _play_holding(env_name, name, options, seed=3) == []


def test_the_reference_walk_finds_an_env_a_state_or_an_oracle():
    from cardzoo.agents.oracles import RopeTeamOracle

    env = rope_team_v0.env(level="hard")
    env.reset(seed=1)
    for leak in (lambda a: setattr(a, "peek", lambda: env.unwrapped.game),  # a closure over the env
                 lambda a: setattr(a, "table", env.unwrapped.game),  # the live state
                 lambda a: setattr(a, "memory", [{"hands": env.unwrapped.game.hands}]),  # a part of it
                 lambda a: setattr(a, "dealer", env.unwrapped.game.rng),  # the generator of the later deals
                 lambda a: setattr(a, "helper", RopeTeamOracle())):  # an oracle
        agent = build("search", "rope_team_v0", 1)
        assert holds_live_objects(agent, env) == []
        leak(agent)
        assert holds_live_objects(agent, env) != []
