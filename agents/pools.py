"""The partner and opponent pools of the benchmark: who a submitted agent plays with (Rope Team, Summit Rush) or
against (Rook), split into a **dev** part, a **test** part and a **weak** part.

The dev part is for tuning: look at an agent's results with it as often as you like. The test part is held out:
never train with it, never tune against it (not its members' policies, not its results); report it beside dev.
A member is a registry agent name (``agents/registry.py`` AGENTS), acting on observations only like every agent.

**Competent strangers.** The headline measures coordination with partners who play well by conventions of their
own, not survival beside a partner who plays at random. So dev and test hold only competent members, and the weak
part (a robustness row, reported apart, never in the headline mean or the worst partner) holds the rest. The rule,
read off the pool study (``evaluation/results/pools/diversity.json``; the tests check every member against it):

- a partner is competent if its self-play win rate is at least the simple strategy's minus :data:`MARGIN`
  (15 points: the study's 60 games a pair and setting leave each rate about ±9 points);
- an opponent is competent if it wins at least :data:`OPPONENT_MIN_WINS` of its rounds against the heuristic.

Each pool mixes conventions on purpose, and each convention family sits on both sides of the split where it can,
so that a dev result predicts the test result: the document's simple strategy and rule variants that each change
one convention of it, and independently trained policies (different seeds, different inputs). :data:`VERSION` is
the version the benchmark's protocol names; changing a member changes the version (``pools_v1`` had the weak
members in dev and test).

Every member plays at about numpy speed, since the benchmark plays every member with every agent it scores. So the
search agents are not in the cooperative pools: at their registry budget a decision takes them far longer than a
member's (the pool page, ``evaluation/results/pools/summary.md``, gives both). Rook's opponent pool has the search
at the small budget of the no-peeking tests (``search_small``), whose time is on that page too.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardzoo.envs.common.errors import OptionError

VERSION = "pools_v2"
PARTS = ("dev", "test", "weak")
MARGIN = 0.15  # a competent partner's self-play rate is at least the simple strategy's minus this
OPPONENT_MIN_WINS = 0.25  # a competent opponent wins at least this share of its rounds against the heuristic


@dataclass(frozen=True)
class Pool:
    """One game's pool: ``dev`` for tuning, ``test`` held out, ``weak`` the robustness row (agent specs, registry
    names; dev and test competent, see the module docstring)."""

    version: str
    dev: tuple[str, ...]
    test: tuple[str, ...]
    weak: tuple[str, ...] = ()

    def __post_init__(self):
        for part in PARTS:
            names = getattr(self, part)
            if not isinstance(names, tuple) or not all(isinstance(n, str) and n for n in names):
                raise OptionError(f"a pool's {part} part must be a tuple of agent names, got {names!r}")
            if len(set(names)) != len(names):
                raise OptionError(f"a pool's {part} part names an agent twice: {names!r}")
        seen: dict[str, str] = {}
        for part in PARTS:
            for name in getattr(self, part):
                if name in seen:
                    raise OptionError(f"a pool's parts must be disjoint; {seen[name]} and {part} both hold {name!r}")
                seen[name] = part

    def members(self) -> tuple[str, ...]:
        """Every member: dev, then test, then weak."""
        return self.dev + self.test + self.weak

    def part(self, name: str) -> tuple[str, ...]:
        """The part called ``name`` ("dev", "test" or "weak")."""
        if name not in PARTS:
            raise OptionError(f"a pool has the parts {', '.join(map(repr, PARTS))}, not {name!r}")
        return getattr(self, name)


# Each game's registry entry names its pool (``pool``); the pools are written here.

# Partners. Families split across the parts: the simple strategy's convention variants (the trump pair and the
# lead-expectation pair one on each side), the two learned_v1 seeds, the trained policies of learned's recipe
# (learned itself, seed 0, is a benchmarked agent, not a partner: seed 1 in test, the entropy-bonus run in dev),
# the policy that reads the observation alone. Weak: random play, and the simple strategy with a third of its
# cards random.
ROPE_TEAM = Pool(
    VERSION,
    dev=("simple", "simple_lead_long", "simple_trump_eager", "simple_trusting", "learned_v1", "learned_entropy",
         "learned_plain"),
    test=("simple_signal", "simple_high_follow", "simple_trump_shy", "simple_wary", "learned_v1_seed1",
          "learned_seed1"),
    weak=("random", "simple_careless"),
)

# Partners, in the benchmark's talking games (a silent member says nothing). The simple strategy (silent in dev,
# talking in test), its convention variants (agents/summit_rush_partners.py; the two "which card" variants one
# on each side; what a call means, in dev), a talking and a silent trained policy. Weak: random play, the slow
# partner and the one that waits too long to turn the stock.
SUMMIT_RUSH = Pool(
    VERSION,
    dev=("simple", "summit_partner_pile", "summit_uncover", "summit_eager_turn", "summit_talk_deliver",
         "learned_talk"),
    test=("simple_talk", "summit_leftmost", "summit_down", "learned_v1", "summit_random_card"),
    weak=("random", "summit_slow", "summit_patient_turn"),
)

# Opponents: the heuristic and its bidding tempers, a trained policy, a cheap search. Weak: random play.
ROOK = Pool(
    VERSION,
    dev=("heuristic", "heuristic_bold"),
    test=("heuristic_timid", "learned_v1", "search_small"),
    weak=("random",),
)


def _registered() -> dict[str, Pool]:
    from cardzoo.envs.registry import GAMES

    return {name: spec.load("pool") for name, spec in GAMES.items() if spec.pool}


POOLS: dict[str, Pool] = _registered()  # game name -> its pool, in the registry's order


def pool(game) -> Pool:
    """The pool of ``game``: a name ("rope_team"), an env id ("rope_team_v0"), a ``GameSpec`` or an env object,
    as ``cardzoo.envs.registry.spec`` accepts. A game without a pool raises ``OptionError`` naming the pools."""
    from cardzoo.envs.registry import spec

    game = spec(game)
    if not game.pool:
        raise OptionError(f"{game.name} has no partner or opponent pool (its registry entry names none); pools: "
                          f"{', '.join(POOLS)}")
    return game.load("pool")
