"""``np.random.default_rng(seed)`` for many seeds at once, as arrays: the same numbers, one generator per seed.

The single envs deal each game from ``np.random.default_rng(seed)``. A batched engine starts thousands of games a
second, and building one ``Generator`` per game costs ~40 µs of Python, more than the rest of a short game; so
this module reimplements, in array operations over many seeds, exactly the three pieces numpy uses there:

* ``SeedSequence(seed)`` hashing a seed into four 32-bit pool words, and ``generate_state(4, uint64)``;
* the ``PCG64`` bit generator (a 128-bit LCG with the XSL-RR output, numpy's default), seeded from that state;
* ``Generator.permutation(n)``: a Fisher-Yates shuffle of ``arange(n)`` from the last index down, drawing each
  index with ``random_interval`` (mask the next 32-bit value to the smallest all-ones mask covering the bound and
  reject values above it). 32-bit values come from the low then the high half of each 64-bit output, the high half
  buffered between calls, as numpy's ``next_uint32`` does.

Two implementations of the shuffles, tested equal to numpy and to each other: array operations over all the seeds
at once (numpy only, the core install), and, when numba is installed (the ``train`` extra), one compiled loop
over the seeds. Per game of three permutations of 52, 20,000 seeds, CPU time on this project's shared 2-core
machine: numpy ~17-19 µs, numba ~1.9 µs (and ~3 s of numba import plus ~3 s to load the compiled code from its
on-disk cache, ~12 s to compile it the first time). Random games of Rope Team last about 24 decisions, so the
numpy deals alone would cost ~0.7 µs per decision, more than the rest of a batched step; numba is worth its
weight here, and only here (the engines' steps are whole-array numpy operations already).

``integers(2**63)`` (Lemire's method on a 64-bit draw, which for that bound never rejects) is the 64-bit output
shifted right by one. Tests compare every function with numpy over many seeds, small and large.

Seeds are integers in ``0 .. 2**63 - 1``: they hash to at most two 32-bit words, and SeedSequence gives a one-word
seed the same pool as the same seed written with a zero high word, so one formula covers them all.
"""

from __future__ import annotations

import numpy as np

_U32 = np.uint32
_U64 = np.uint64
_LOW32 = _U64(0xFFFFFFFF)

# numpy's SeedSequence constants (numpy/random/bit_generator.pyx)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R, _XSHIFT = 0xCA01F9DD, 0x4973F715, 16
_POOL = 4

# PCG64's multiplier (PCG_DEFAULT_MULTIPLIER_128), high and low 64 bits
_MULT_HI, _MULT_LO = 0x2360ED051FC65DA4, 0x4385DF649FCCF645


def _hash_constants(init: int, mult: int, count: int) -> list[int]:
    """The hash constant after each multiplication: it does not depend on the seed, so it is computed once."""
    out, h = [], init
    for _ in range(count):
        h = (h * mult) & 0xFFFFFFFF
        out.append(h)
    return out


_MIX_CONSTS = _hash_constants(_INIT_A, _MULT_A, _POOL + _POOL * (_POOL - 1))
_STATE_CONSTS = _hash_constants(_INIT_B, _MULT_B, 8)


def _hashmix(value: np.ndarray, before: int, after: int) -> np.ndarray:
    value = (value ^ _U32(before)) * _U32(after)
    return value ^ (value >> _U32(_XSHIFT))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    result = _U32(_MIX_MULT_L) * x - _U32(_MIX_MULT_R) * y
    return result ^ (result >> _U32(_XSHIFT))


def seed_state(seeds: np.ndarray) -> np.ndarray:
    """``SeedSequence(seed).generate_state(4, np.uint64)`` for each seed: uint64[k, 4]."""
    seeds = np.asarray(seeds, dtype=np.int64).astype(_U64)
    words = [(seeds & _LOW32).astype(_U32), (seeds >> _U64(32)).astype(_U32)]
    consts = iter(_MIX_CONSTS)
    before = _INIT_A
    pool = []
    for i in range(_POOL):
        after = next(consts)
        entropy = words[i] if i < len(words) else np.zeros_like(words[0])
        pool.append(_hashmix(entropy, before, after))
        before = after
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                after = next(consts)
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], before, after))
                before = after
    out32 = []
    before = _INIT_B
    for i, after in enumerate(_STATE_CONSTS):
        value = (pool[i % _POOL] ^ _U32(before)) * _U32(after)
        out32.append(value ^ (value >> _U32(_XSHIFT)))
        before = after
    return np.stack([out32[2 * k].astype(_U64) | out32[2 * k + 1].astype(_U64) << _U64(32) for k in range(4)], axis=1)


def _mul64(a: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The full 128-bit product of uint64 ``a`` and the constant ``b``: (high, low) 64-bit halves."""
    a0, a1 = a & _LOW32, a >> _U64(32)
    b0, b1 = _U64(b & 0xFFFFFFFF), _U64(b >> 32)
    p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
    mid = (p00 >> _U64(32)) + (p01 & _LOW32) + (p10 & _LOW32)
    low = (mid << _U64(32)) | (p00 & _LOW32)
    high = a1 * b1 + (p01 >> _U64(32)) + (p10 >> _U64(32)) + (mid >> _U64(32))
    return high, low


class PCG64Array:
    """One PCG64 generator per seed, as ``np.random.default_rng(seed).bit_generator`` starts."""

    def __init__(self, seeds: np.ndarray):
        state = seed_state(seeds)
        init_hi, init_lo, seq_hi, seq_lo = state.T
        # pcg_setseq_128_srandom_r: inc = (initseq << 1) | 1; state = 0; step; state += initstate; step
        self.inc_hi = (seq_hi << _U64(1)) | (seq_lo >> _U64(63))
        self.inc_lo = (seq_lo << _U64(1)) | _U64(1)
        self.hi, self.lo = self.inc_hi.copy(), self.inc_lo.copy()
        lo = self.lo + init_lo
        self.hi = self.hi + init_hi + (lo < init_lo).astype(_U64)
        self.lo = lo
        self._step()

    def __len__(self) -> int:
        return len(self.hi)

    def _step(self) -> None:
        """state = state * MULT + inc (mod 2**128), every generator at once."""
        high, low = _mul64(self.lo, _MULT_LO)
        high = high + self.hi * _U64(_MULT_LO) + self.lo * _U64(_MULT_HI)
        lo = low + self.inc_lo
        self.hi = high + self.inc_hi + (lo < low).astype(_U64)
        self.lo = lo

    def next_uint64(self) -> np.ndarray:
        """The next 64-bit output of every generator (XSL-RR: rotate high ^ low right by the top 6 bits)."""
        self._step()
        x = self.hi ^ self.lo
        rot = self.hi >> _U64(58)
        return (x >> rot) | (x << ((_U64(64) - rot) & _U64(63)))

    def uint32_stream(self, pairs: int) -> np.ndarray:
        """uint32[2 * pairs, k]: the next ``2 * pairs`` values each generator's ``next_uint32`` gives, one column
        per generator, starting with no buffered half (the low half of each output, then its high half)."""
        out = np.empty((pairs, 2, len(self)), _U32)
        for j in range(pairs):
            value = self.next_uint64()
            out[j, 0] = value & _LOW32
            out[j, 1] = value >> _U64(32)
        return out.reshape(2 * pairs, len(self))


def _interval_masks(n: int) -> np.ndarray:
    """For each bound i (0..n-1), the smallest all-ones mask >= i (numpy's random_interval)."""
    masks = np.zeros(max(n, 1), np.uint32)
    for i in range(1, n):
        m = i
        for shift in (1, 2, 4, 8, 16):
            m |= m >> shift
        masks[i] = m
    return masks


def permutations(seeds: np.ndarray, n: int, count: int, then_uint64: bool = False):
    """int8/int16[k, count, n]: ``[default_rng(s).permutation(n) for _ in range(count)]`` for each seed ``s``, the
    ``count`` permutations drawn one after the other from the same generator (a game's successive deals). With
    ``then_uint64``, also each generator's next 64-bit output after them (uint64[k]; ``integers(2**63)`` is it
    shifted right by one). Compiled with numba when it is installed (the ``train`` extra), else in numpy array
    operations."""
    seeds = np.asarray(seeds, dtype=np.int64)
    out = np.empty((len(seeds), count, n), np.int8 if n <= 127 else np.int16)
    after = np.zeros(len(seeds), _U64)
    if len(seeds) and _shuffle is not None:
        _shuffle(seed_state(seeds), _interval_masks(n), out, after)
    elif len(seeds):
        _permutations_numpy(seeds, out, after)
    return (out, after) if then_uint64 else out


def _permutations_numpy(seeds: np.ndarray, out: np.ndarray, after: np.ndarray) -> None:
    """``permutations`` in numpy array operations: every generator steps through the shuffle together."""
    k, count, n = out.shape
    dtype = out.dtype
    gens = PCG64Array(seeds)
    masks = _interval_masks(n)
    # Each index draw takes one 32-bit value, or more when values above the bound are rejected (at most half the
    # time): draw a stream long enough for almost every generator and extend it for the rare ones that run out.
    # The stream is position-major, so the generators' reads at one step of the shuffle are close together.
    extra = n // 2 + 8
    stream = gens.uint32_stream((count * (n + extra) + 1) // 2)
    games = np.arange(k, dtype=np.int64)
    pos = games.copy()  # index into stream.ravel() of each generator's next value: position * k + generator
    cells = games * n  # index into perm.ravel() of each row's first entry
    perm = np.empty((k, n), dtype)
    flat = perm.reshape(-1)
    for c in range(count):
        perm[:] = np.arange(n, dtype=dtype)
        for i in range(n - 1, 0, -1):
            mask, bound = masks[i], np.uint32(i)
            if pos.max() >= stream.size:  # rare: a generator rejected so often that its stream ran out
                stream = np.concatenate([stream, gens.uint32_stream(extra)])
            value = stream.take(pos) & mask
            pos += k
            retry = np.flatnonzero(value > bound)
            while len(retry):
                if pos[retry].max() >= stream.size:
                    stream = np.concatenate([stream, gens.uint32_stream(extra)])
                again = stream.take(pos[retry]) & mask
                pos[retry] += k
                value[retry] = again
                retry = retry[again > bound]
            # swap entries i and j of every row
            at_j = cells + value
            held = flat.take(at_j)
            flat[at_j] = perm[:, i]
            perm[:, i] = held
        out[:, c] = perm
    # A 64-bit draw skips a buffered high half: it is output (taken + 1) // 2, counting the 32-bit values taken.
    nxt = (pos // k + 1) // 2
    while 2 * nxt.max() + 1 >= stream.shape[0]:
        stream = np.concatenate([stream, gens.uint32_stream(extra)])
    low, high = stream.take(2 * nxt * k + games), stream.take((2 * nxt + 1) * k + games)
    after[:] = low.astype(_U64) | high.astype(_U64) << _U64(32)


# ----------------------------------------------------------------------------- compiled (numba)
# The shuffles as one compiled loop over generators, when numba is installed: the same steps as above, one
# generator at a time, from the states seed_state computes. Defined at module level so numba's on-disk cache holds.
try:
    import numba
except ImportError:  # the core install: numpy only
    numba = None

_C_LOW32, _C_MULT_HI, _C_MULT_LO = np.uint64(0xFFFFFFFF), np.uint64(_MULT_HI), np.uint64(_MULT_LO)
_C_ONE, _C_ZERO, _C_32, _C_58, _C_63, _C_64 = (np.uint64(v) for v in (1, 0, 32, 58, 63, 64))

if numba is not None:
    @numba.njit(cache=True)
    def _step(hi, lo, inc_hi, inc_lo):
        """One PCG64 step: (hi, lo) * MULT + inc, mod 2**128."""
        a0, a1 = lo & _C_LOW32, lo >> _C_32
        b0, b1 = _C_MULT_LO & _C_LOW32, _C_MULT_LO >> _C_32
        p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
        mid = (p00 >> _C_32) + (p01 & _C_LOW32) + (p10 & _C_LOW32)
        high = a1 * b1 + (p01 >> _C_32) + (p10 >> _C_32) + (mid >> _C_32) + hi * _C_MULT_LO + lo * _C_MULT_HI
        low = lo * _C_MULT_LO
        new_lo = low + inc_lo
        return high + inc_hi + (_C_ONE if new_lo < low else _C_ZERO), new_lo

    @numba.njit(cache=True)
    def _shuffle(state, masks, out, after):
        k, count, n = out.shape
        for g in range(k):
            inc_hi = (state[g, 2] << _C_ONE) | (state[g, 3] >> _C_63)
            inc_lo = (state[g, 3] << _C_ONE) | _C_ONE
            lo = inc_lo + state[g, 1]
            hi = inc_hi + state[g, 0] + (_C_ONE if lo < inc_lo else _C_ZERO)
            hi, lo = _step(hi, lo, inc_hi, inc_lo)
            buffered, half = False, _C_ZERO
            for c in range(count):
                row = out[g, c]
                for i in range(n):
                    row[i] = i
                for i in range(n - 1, 0, -1):
                    mask = np.uint64(masks[i])
                    while True:  # random_interval: next_uint32 & mask until it is at most i
                        if buffered:
                            value, buffered = half, False
                        else:
                            hi, lo = _step(hi, lo, inc_hi, inc_lo)
                            x, rot = hi ^ lo, hi >> _C_58
                            word = (x >> rot) | (x << ((_C_64 - rot) & _C_63))
                            value, half, buffered = word & _C_LOW32, word >> _C_32, True
                        value &= mask
                        if value <= np.uint64(i):
                            break
                    j = np.int64(value)
                    row[i], row[j] = row[j], row[i]
            hi, lo = _step(hi, lo, inc_hi, inc_lo)  # the next 64-bit draw (a buffered half is skipped)
            x, rot = hi ^ lo, hi >> _C_58
            after[g] = (x >> rot) | (x << ((_C_64 - rot) & _C_63))
else:
    _shuffle = None
