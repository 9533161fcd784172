"""One description per game: what every command, trainer, study, report and page needs to know about it.

A game is its folder ``envs/<name>/`` (``rules.py`` with ``deal(config, seed)`` and, if it has levels, ``LEVELS``;
``env.py`` with ``ENV_OPTIONS``), its public module ``envs/<env_id>.py`` and one :func:`register` call below. Facts
the game's own modules hold (its levels, its options) are read from them, never retyped here. Everything that
belongs to another folder (an agent, an engine loop, a trainer's choice) is a string: an agent's registry name or
``"module:attr"`` that :meth:`GameSpec.load` imports when asked, so ``cardzoo.envs`` imports no other folder.

Adding a game: see ``docs/contributing.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .common.errors import OptionError

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class GameSpec:
    """The facts of one game. ``name`` is the CLI argument and the key of trainers, pages and the play page;
    ``env_id`` names the env in records, ``make_env``, ``make_agent`` and policy files."""

    name: str  # "rope_team": folder envs/<name>/
    env_id: str  # "rope_team_v0": module envs/<env_id>.py
    title: str  # "Rope Team"
    parallel: bool  # natural form is a ParallelEnv (records of kind "parallel", tick loops)
    cooperative: bool  # one team scored by its win rate; False: two sides (Rook)
    rules_doc: str  # seeds/<rules_doc>
    doc_attr: str  # the env module's object whose docstring is the game's page
    baseline: str  # registry agent: imitation warm start, the report's baseline, Rook's training opponent
    win: str | None = "win"  # info["outcome"] of a won game (None: decided by "winner")
    talk: bool = False  # has the message channel (the ``talk`` option)
    per_level_policy: bool = False  # observation length differs between levels: a policy per level
    default_level: str | None = None  # what the env plays without a ``level`` option
    train_levels: tuple[str, ...] = ()  # a training run's default levels; (): every level
    policy_levels: tuple[str, ...] = ()  # levels with shipped distilled policies; (): every level
    # env options every trainer adds (Rook: single rounds)
    train_options: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    reward_scale: float = 1.0  # trainers' reward scale (Rook's rounds pay hundreds of points)
    # The benchmark's settings: one per level with ``benchmark_options`` added, or (if given) ``benchmark_variants``
    # (name, options), the settings instead
    benchmark_options: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    benchmark_variants: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    extra_variants: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # play page: variants after one per level
    default_variant: str = "normal"
    # "module:attr" of the seat's text view class, TextView(config, legal_moves) (cardzoo.envs.text; language seats)
    text_view: str | None = None
    # "module:attr" of the seat view class of the play page and terminal (cardzoo.play.views.SeatView: at_table,
    # result, outcome_text, named, typing_help)
    seat_view: str | None = None
    pool: str | None = None  # "module:attr" of the benchmark's partner (or opponent) pool (cardzoo.agents.pools)
    # "module:attr": how a learned agent picks, among its policy files, the one for an observation
    policy_choice: str = "cardzoo.agents.policy_choice:ExactChoice"
    engine: str | None = None  # "module:attr" of the batched engine class
    fast_loop: str | None = None  # "module:attr": the runner's game loop for bit-level agents
    # "module:attr": the runner's tick-by-tick game (Parallel games), a generator function (env, seed) that yields
    # each move it needs as (seat, observation, action_mask), is sent the move, and returns the game's record
    tick_steps: str | None = None
    record_version: str | None = None  # part of the evaluation cache key of games played by ``tick_steps``
    ceilings: str | None = None  # file name pattern of the ceilings under evaluation/results/ ("{variant}")
    # "module:attr" of a function giving the game's symmetries as array tables (observation gathers, action maps):
    # relabellings the rules leave invariant, which other-play training draws from
    symmetries: str | None = None

    @property
    def module(self) -> str:
        """The public env module, ``cardzoo.envs.<env_id>``."""
        return f"cardzoo.envs.{self.env_id}"

    def rules(self):
        return importlib.import_module(f"cardzoo.envs.{self.name}.rules")

    @property
    def levels(self) -> tuple[str, ...]:
        """The level presets of the rules module, in its order; () for a game without levels."""
        return tuple(getattr(self.rules(), "LEVELS", {}))

    @property
    def action_sizes(self) -> frozenset[int]:
        """The sizes of the env's action space over its variants (``ACTION_SIZES`` of its env module): what a
        policy file's output layer must have."""
        sizes = getattr(importlib.import_module(f"cardzoo.envs.{self.name}.env"), "ACTION_SIZES", None)
        if not sizes:
            raise OptionError(f"{self.name}'s env module states no ACTION_SIZES")
        return frozenset(sizes)

    @property
    def options(self) -> tuple[str, ...]:
        """The env's option names (``ENV_OPTIONS`` of its env module)."""
        return tuple(importlib.import_module(f"cardzoo.envs.{self.name}.env").ENV_OPTIONS)

    def variants(self) -> dict[str, dict[str, Any]]:
        """The play page's variants, name -> env options: one per level, then ``extra_variants``."""
        return {**{level: {"level": level} for level in self.levels},
                **{name: dict(options) for name, options in self.extra_variants}}

    def load(self, field: str):
        """The object a ``"module:attr"`` field names; OptionError if this game has none."""
        target = getattr(self, field)
        if target is None:
            raise OptionError(f"{self.name} has no {field.replace('_', ' ')}")
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def make(self, parallel: bool | None = None, **options):
        """The env with ``options``: its natural form, or the Parallel (``parallel=True``) or AEC form."""
        module = importlib.import_module(self.module)
        if parallel is None:
            parallel = self.parallel
        return module.parallel_env(**options) if parallel else module.env(**options)

    def deal(self, config, seed):
        """The game ``env.reset(seed=seed)`` starts with ``config`` (the rules module's ``deal``)."""
        return self.rules().deal(config, seed)


GAMES: dict[str, GameSpec] = {}  # name -> spec, in registration order (CLI choices, docs nav, report order)


def register(game: GameSpec) -> GameSpec:
    for other in GAMES.values():
        if game.name in (other.name, other.env_id) or game.env_id in (other.name, other.env_id):
            raise OptionError(f"game {game.name!r} ({game.env_id}) is already registered")
    GAMES[game.name] = game
    return game


def names() -> str:
    return ", ".join(GAMES)


def spec(game: Any) -> GameSpec:
    """The spec of ``game``: its name ("rope_team"), env id ("rope_team_v0"), a spec, or an env object (its
    ``metadata["name"]``, wrapped or not). Anything else: OptionError naming the games."""
    if isinstance(game, GameSpec):
        return game
    if not isinstance(game, str):
        metadata = getattr(game, "metadata", None)
        name = metadata.get("name") if isinstance(metadata, dict) else None
        if not isinstance(name, str):
            raise OptionError(f"expected a game name ({names()}, with or without _v0) or a cardzoo env, "
                              f"got {type(game).__name__}")
        game = name
    for candidate in GAMES.values():
        if game in (candidate.name, candidate.env_id):
            return candidate
    raise OptionError(f"unknown game {game!r}; games: {names()}")


def by_env_id() -> dict[str, GameSpec]:
    return {s.env_id: s for s in GAMES.values()}


def batched() -> list[GameSpec]:
    """The games with a batched engine."""
    return [s for s in GAMES.values() if s.engine]


register(GameSpec(
    name="rope_team", env_id="rope_team_v0", title="Rope Team", parallel=False, cooperative=True,
    rules_doc="rope_team.md", doc_attr="raw_env", baseline="simple", default_level="normal",
    extra_variants=(("normal, open hands", {"level": "normal", "open_hands": True}),
                    ("normal, two deals", {"level": "normal", "max_deals": 2})),
    text_view="cardzoo.envs.rope_team.text:RopeTeamText", seat_view="cardzoo.play.views:RopeTeamView",
    pool="cardzoo.agents.pools:ROPE_TEAM",
    engine="cardzoo.envs.rope_team.batched:RopeTeamBatched",
    fast_loop="cardzoo.agents.loops:rope_team_bits_game",
    ceilings="rope_team_ceiling_{variant}.json",
    symmetries="cardzoo.envs.rope_team.symmetry:tables",
))
register(GameSpec(
    name="summit_rush", env_id="summit_rush_v0", title="Summit Rush", parallel=True, cooperative=True,
    rules_doc="summit_rush.md", doc_attr="SummitRushEnv", baseline="simple", talk=True, per_level_policy=True,
    default_level="normal", train_levels=("normal",), policy_levels=("normal", "hard"),
    extra_variants=(("normal, silent", {"level": "normal", "talk": False}),
                    ("hard, silent", {"level": "hard", "talk": False})),
    text_view="cardzoo.envs.summit_rush.text:SummitRushText", seat_view="cardzoo.play.views:SummitRushView",
    pool="cardzoo.agents.pools:SUMMIT_RUSH", policy_choice="cardzoo.agents.policy_choice:SummitRushChoice",
    engine="cardzoo.envs.summit_rush.batched:SummitRushBatched",
    tick_steps="cardzoo.evaluation.matches.ticks:game_steps", record_version="ticks-1",
    # Every level, two players, timed, talking (the env's default: a silent agent simply says nothing). Learned
    # agents play Expert with Hard's policy on Hard's clock (agents/policy_choice.py).
    benchmark_options=MappingProxyType({"players": 2, "talk": True}),
    ceilings="summit_rush_ceiling_{variant}.json",
))
register(GameSpec(
    name="rook", env_id="rook_v0", title="Rook for Two", parallel=False, cooperative=False,
    rules_doc="rook_for_two.md", doc_attr="raw_env", baseline="heuristic", win=None,
    train_levels=("single_round",), train_options=MappingProxyType({"rounds": 1}), reward_scale=0.01,
    extra_variants=(("one round", {"rounds": 1}), ("game to 250", {"target_score": 250}), ("game to 500", {})),
    default_variant="one round",
    benchmark_variants=(("single_round", MappingProxyType({"rounds": 1})),),  # the unit trainers and the report use
    text_view="cardzoo.envs.rook.text:RookText", seat_view="cardzoo.play.views:RookView",
    pool="cardzoo.agents.pools:ROOK",
    engine="cardzoo.envs.rook.batched:RookBatched",
))
