"""numpy's default_rng(seed) for many seeds at once (cardzoo.envs.common.generators) equals numpy's own."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.envs.common import generators

# one- and two-word seeds, the word boundary, the largest seed, and the seeds the report and training use
SEEDS = [0, 1, 2, 7, 12345, 2**31, 2**32 - 1, 2**32, 2**32 + 7, 2**40 + 3, 2**62, 2**63 - 1, 10_000_000,
         987_654_321_987]


def test_seed_state_and_outputs_equal_numpy():
    state = generators.seed_state(np.array(SEEDS))
    gens = generators.PCG64Array(np.array(SEEDS))
    raw = np.stack([gens.next_uint64() for _ in range(5)], axis=1)
    for i, seed in enumerate(SEEDS):
        assert (state[i] == np.random.SeedSequence(seed).generate_state(4, np.uint64)).all(), seed
        reference = np.random.default_rng(seed)
        assert (raw[i] == reference.bit_generator.random_raw(5)).all(), seed
        # integers(2**63), which Summit Rush draws after its deck, is the next 64-bit output shifted right by one
        first = np.random.default_rng(seed).bit_generator.random_raw()
        assert np.random.default_rng(seed).integers(2**63) == first >> 1


def _numpy_path(seeds: np.ndarray, n: int, count: int, then_uint64: bool = False):
    out, after = np.empty((len(seeds), count, n), np.int8), np.zeros(len(seeds), np.uint64)
    generators._permutations_numpy(seeds, out, after)
    return (out, after) if then_uint64 else out


@pytest.mark.parametrize("n, count", [(52, 3), (45, 2), (1, 2), (2, 3), (3, 5), (33, 4)])
@pytest.mark.parametrize("implementation", ["numba", "numpy"])
def test_permutations_equal_numpy(n, count, implementation):
    assert generators._shuffle is not None  # numba comes with the train extra, which CI installs
    seeds = np.array(SEEDS + list(range(200)))
    perms = (generators.permutations if implementation == "numba" else _numpy_path)(seeds, n, count)
    for i, seed in enumerate(seeds):
        rng = np.random.default_rng(int(seed))
        for c in range(count):
            assert (perms[i, c] == rng.permutation(n)).all(), (seed, c)


@settings(max_examples=30, deadline=None)
@given(seeds=st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=40))
def test_permutations_equal_numpy_any_seeds(seeds):
    seeds = np.array(seeds, dtype=np.int64)
    perms, after = generators.permutations(seeds, 52, 3, then_uint64=True)
    numpy_perms, numpy_after = _numpy_path(seeds, 52, 3, then_uint64=True)
    assert np.array_equal(perms, numpy_perms) and np.array_equal(after, numpy_after)
    for i, seed in enumerate(seeds.tolist()):
        rng = np.random.default_rng(seed)
        assert all((perms[i, c] == rng.permutation(52)).all() for c in range(3))
        assert int(after[i]) == int(rng.bit_generator.random_raw())  # the generator's next output after the deals


def test_long_rejection_runs_extend_the_stream():
    """A generator whose draws are rejected more often than the first stream allows still gets numpy's shuffle:
    with 20,000 seeds some exceed the stream drawn for one permutation of 52."""
    seeds = np.arange(20_000)
    perms = _numpy_path(seeds, 52, 1)
    for seed in range(0, 20_000, 7):
        assert (perms[seed, 0] == np.random.default_rng(seed).permutation(52)).all(), seed
