"""The benchmark's deals: a range of game seeds reserved for it, which no training command plays.

Game ``i`` of ``benchmark_v2`` is ``env.reset(seed=s_i)`` with ``s_i`` drawn inside the range from the run's secret
key (:func:`keyed_deals`: HMAC-SHA256 of ``i``), so an agent that knows the range and its own cards cannot find
its deal among the benchmark's; the key is recorded in the result once the run is over, and a run given the same
key plays the same deals (``cardzoo benchmark --deal-key``). ``benchmark_v1`` played ``FIRST + i``
(:func:`benchmark_seeds`). Both sides refuse the other's range:

- the benchmark plays only seeds inside :data:`BENCHMARK` (:func:`check_benchmark_seeds`): everything outside it
  is where training, its held-out evaluation (``EVAL_BASE_SEED`` ...), distillation and the report play;
- every training command keeps out of it: seeds drawn at random are drawn again if they land inside
  (:func:`training_seed`), and fixed seed streams (a base seed plus a game counter, which a large ``--seed`` can push
  anywhere) are checked before training starts (:func:`refuse_benchmark_seeds`), naming the range.

The range sits far above every training stream a ``--seed`` below 2**17 makes (the batched trainer's is the
farthest, ``seed * 2**45``), and holds 10**9 deals, far more than any budget plays.
"""

from __future__ import annotations

import hashlib
import hmac

from cardzoo.envs.common.errors import OptionError

FIRST = 7_000_000_000_000_000_000  # 7e18 < 2**63: every engine's int64 seeds hold it
SIZE = 1_000_000_000
BENCHMARK = range(FIRST, FIRST + SIZE)


def _overlaps(first: int, count: int) -> bool:
    return first < BENCHMARK.stop and first + count > BENCHMARK.start


def benchmark_seeds(games: int) -> list[int]:
    """The seeds of the first ``games`` deals of the benchmark."""
    if not 0 < games <= SIZE:
        raise OptionError(f"the benchmark plays 1..{SIZE:,} deals per cell, not {games}")
    return list(range(FIRST, FIRST + games))


def keyed_deals(key: bytes, games: int) -> list[int]:
    """The seeds of a run's ``games`` deals under its secret ``key``: distinct, inside the reserved range."""
    benchmark_seeds(games)  # the count's check
    out: list[int] = []
    seen: set[int] = set()
    i = 0
    while len(out) < games:
        mac = hmac.new(key, f"deal:{i}".encode(), hashlib.sha256).digest()
        seed = FIRST + int.from_bytes(mac[:8], "big") % SIZE
        if seed not in seen:  # a repeat (about once in 10**9 / games² runs) is drawn again
            seen.add(seed)
            out.append(seed)
        i += 1
    return out


def parse_key(text: str) -> bytes:
    """A deal key as the result records it (64 hex digits)."""
    try:
        key = bytes.fromhex(text)
    except (TypeError, ValueError):
        key = b""
    if len(key) != 32:
        raise OptionError(f"a deal key is 64 hex digits (as a benchmark result's deals.key records it), got "
                          f"{str(text)[:80]!r}")
    return key


def check_benchmark_seeds(seeds) -> None:
    """Refuse seeds outside the benchmark's range: those deals are training's (and the report's)."""
    outside = [s for s in seeds if s not in BENCHMARK]
    if outside:
        raise OptionError(f"the benchmark plays only deals in its reserved range {FIRST}..{BENCHMARK.stop - 1}; "
                          f"seed {outside[0]} is outside it, where training plays ({len(outside)} such seeds)")


def refuse_benchmark_seeds(first: int, count: int, who: str) -> None:
    """Refuse a training seed stream ``first .. first + count - 1`` that reaches into the benchmark's deals."""
    if _overlaps(first, count):
        raise OptionError(f"{who} would play game seeds {first}..{first + count - 1}, which reach into the "
                          f"benchmark's reserved deals {FIRST}..{BENCHMARK.stop - 1}; choose another seed")


STREAM = 2**40  # games a training seed stream is checked for: far more than any run plays (~1.1e12)


def refuse_benchmark_stream(first: int, who: str) -> None:
    """Refuse a training stream of games ``first, first + 1, ...`` (checked for :data:`STREAM` games) that reaches
    into the benchmark's deals."""
    refuse_benchmark_seeds(first, STREAM, who)


def training_stream_start(rng, high: int) -> int:
    """The first seed of a training stream drawn from ``rng`` in 0 .. high - 1, never one that reaches the
    benchmark's deals within :data:`STREAM` games."""
    while True:
        first = int(rng.integers(high))
        if not _overlaps(first, STREAM):
            return first


def training_seed(rng) -> int:
    """A game seed for training drawn from ``rng`` (a numpy Generator) in 0 .. 2**63 - 1, never a benchmark deal:
    a draw inside the range (chance 1 in 9e9) is drawn again."""
    while True:
        seed = int(rng.integers(2**63))
        if seed not in BENCHMARK:
            return seed
