"""Random generators: copying one so that a copied game state deals the same later deals without touching the
original's stream."""

from __future__ import annotations

import numpy as np


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    clone = np.random.Generator(type(rng.bit_generator)())
    clone.bit_generator.state = rng.bit_generator.state
    return clone
