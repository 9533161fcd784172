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

The range and its guards are defined in :mod:`cardzoo.envs.common.seeding`, below the trainers and the benchmark
alike, and read here.
"""

from __future__ import annotations

import hashlib
import hmac

from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.common.seeding import (  # noqa: F401 (the range and its guards live below training and evaluation)
    BENCHMARK,
    FIRST,
    SIZE,
    STREAM,
    benchmark_seeds,
    check_benchmark_seeds,
    refuse_benchmark_seeds,
    refuse_benchmark_stream,
    training_seed,
    training_stream_start,
)


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
