"""Random generators: copying one so that a copied game state deals the same later deals without touching the
original's stream; the one place a command draws a fresh game seed or key; and the benchmark's reserved range of
deals, with the guards that keep every training command out of it (here, below both the trainers and the
benchmark, which ``cardzoo.evaluation.protocol.seeds`` describes).

The range sits far above every training stream a ``--seed`` below 2**17 makes (the batched trainer's is the
farthest, ``seed * 2**45``), and holds 10**9 deals, far more than any budget plays.
"""

from __future__ import annotations

import secrets

import numpy as np

from .errors import OptionError

SEED_BITS = 64


def fresh_seed() -> int:
    """A new game seed for a command that was given none (``cardzoo play``, ``serve``): 64 bits of OS randomness.
    Fewer bits would let a player who knows the engine find the deal from their own cards by trying every seed."""
    return secrets.randbits(SEED_BITS)


def fresh_key() -> bytes:
    """A new secret key (32 bytes of OS randomness): the benchmark's per-run key its deals and agent seeds come
    from."""
    return secrets.token_bytes(32)


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    clone = np.random.Generator(type(rng.bit_generator)())
    clone.bit_generator.state = rng.bit_generator.state
    return clone


# ---------------------------------------------------------------------------- the benchmark's reserved deals
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
