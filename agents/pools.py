"""The partner and opponent pools of the benchmark: who a submitted agent plays with (Rope Team, Summit Rush) or
against (Rook), split into a **dev** part and a **test** part.

The dev part is for tuning: look at an agent's results with it as often as you like. The test part is held out:
never train with it, never tune against it (not its members' policies, not its results); report it beside dev.
A member is a registry agent name (``agents/registry.py`` AGENTS), acting on observations only like every agent.

Each pool mixes conventions on purpose, and each convention family sits on both sides of the split where it can,
so that a dev result predicts the test result: the document's simple strategy and rule variants that each change
one convention of it, independently trained policies (different seeds, different inputs), and a deliberately
weak partner. ``pools_v1`` is the version the benchmark's protocol names; changing a member changes the version.

Every member plays at about numpy speed, since the benchmark plays every member with every agent it scores. So the
search agents are not in the cooperative pools: at their registry budget a decision takes them far longer than a
member's (the pool page, ``evaluation/results/pools/summary.md``, gives both). Rook's opponent pool has the search
at the small budget of the no-peeking tests (``search_small``), whose time is on that page too.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardzoo.envs.common.errors import OptionError

VERSION = "pools_v1"


@dataclass(frozen=True)
class Pool:
    """One game's pool: ``dev`` for tuning, ``test`` held out (agent specs, registry names)."""

    version: str
    dev: tuple[str, ...]
    test: tuple[str, ...]

    def __post_init__(self):
        for part in ("dev", "test"):
            names = getattr(self, part)
            if not isinstance(names, tuple) or not all(isinstance(n, str) and n for n in names):
                raise OptionError(f"a pool's {part} part must be a tuple of agent names, got {names!r}")
            if len(set(names)) != len(names):
                raise OptionError(f"a pool's {part} part names an agent twice: {names!r}")
        both = set(self.dev) & set(self.test)
        if both:
            raise OptionError(f"a pool's dev and test parts must be disjoint; both hold {sorted(both)}")

    def members(self) -> tuple[str, ...]:
        """Every member: dev, then test."""
        return self.dev + self.test

    def part(self, name: str) -> tuple[str, ...]:
        """The part called ``name`` ("dev" or "test")."""
        if name not in ("dev", "test"):
            raise OptionError(f"a pool has the parts 'dev' and 'test', not {name!r}")
        return getattr(self, name)


POOLS: dict[str, Pool] = {
    # Partners. Families split across the parts: the simple strategy's convention variants (the trump pair and the
    # lead-expectation pair one on each side), the two learned_v1 seeds, the trained policies of learned's recipe
    # (learned itself, seed 0, is a benchmarked agent, not a partner: seed 1 in test, the entropy-bonus run in dev),
    # the policy that reads the observation alone, the weak partners.
    "rope_team": Pool(
        VERSION,
        dev=("simple", "simple_lead_long", "simple_trump_eager", "simple_trusting", "learned_v1", "learned_entropy",
             "learned_plain", "random"),
        test=("simple_signal", "simple_high_follow", "simple_trump_shy", "simple_wary", "learned_v1_seed1",
              "learned_seed1", "simple_careless"),
    ),
    # Partners, in the benchmark's talking games (a silent member says nothing). The simple strategy (silent in dev,
    # talking in test), its convention variants (agents/summit_rush_partners.py; the two "which card" and the two
    # "turn" variants one on each side; what a call means, in dev), a talking and a silent trained policy, the weak
    # partners.
    "summit_rush": Pool(
        VERSION,
        dev=("simple", "summit_partner_pile", "summit_uncover", "summit_eager_turn", "summit_slow",
             "summit_talk_deliver", "learned_talk", "random"),
        test=("simple_talk", "summit_leftmost", "summit_down", "summit_patient_turn", "learned_v1",
              "summit_random_card"),
    ),
    # Opponents: the heuristic and its bidding tempers, a trained policy, a cheap search, random play.
    "rook": Pool(
        VERSION,
        dev=("heuristic", "heuristic_bold", "random"),
        test=("heuristic_timid", "learned_v1", "search_small"),
    ),
}


def pool(game) -> Pool:
    """The pool of ``game``: a name ("rope_team"), an env id ("rope_team_v0"), a ``GameSpec`` or an env object,
    as ``cardzoo.envs.registry.spec`` accepts. A game without a pool raises ``OptionError`` naming the pools."""
    from cardzoo.envs.registry import spec

    name = spec(game).name
    if name not in POOLS:
        raise OptionError(f"{name} has no partner or opponent pool; pools: {', '.join(POOLS)}")
    return POOLS[name]
