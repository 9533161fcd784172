"""Random generators: copying one so that a copied game state deals the same later deals without touching the
original's stream; and the one place a command draws a fresh game seed or key."""

from __future__ import annotations

import secrets

import numpy as np

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
