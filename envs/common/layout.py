"""Named pieces of a flat 0/1 observation vector.

An observer lists its pieces once (name and length); the layout gives each piece its slice, splits a vector back
into pieces for people and tests, and writes the table of slices that env docstrings show. Because every piece is
0/1, an observer can assemble the whole vector as one Python int (bit ``i`` = entry ``i``) and convert it once.
"""

from __future__ import annotations

import numpy as np

from .cards import _BYTE_BITS


class Layout:
    def __init__(self, *pieces: tuple[str, int, str]):
        self.pieces = pieces
        self.offsets: dict[str, int] = {}
        self.sizes: dict[str, int] = {}
        offset = 0
        for name, size, _ in pieces:
            self.offsets[name] = offset
            self.sizes[name] = size
            offset += size
        self.size = offset
        self._n_bytes = (offset + 7) // 8

    def __getitem__(self, name: str) -> slice:
        start = self.offsets[name]
        return slice(start, start + self.sizes[name])

    def to_array(self, bits: int) -> np.ndarray:
        """The vector whose entry ``i`` is bit ``i`` of ``bits``, as a new ``int8`` array."""
        raw = np.frombuffer(bits.to_bytes(self._n_bytes, "little"), dtype=np.uint8)
        return _BYTE_BITS[raw].reshape(-1)[: self.size].view(np.int8)

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        if vector.shape != (self.size,):
            raise ValueError(f"expected an observation vector of shape ({self.size},), got {vector.shape}")
        return {name: vector[self[name]] for name in self.offsets}

    def table(self) -> str:
        """The slices as a reStructuredText-style table for docstrings."""
        rows = [f"{self.offsets[n]:>4}:{self.offsets[n] + s:<4} {n:<16} {doc}" for n, s, doc in self.pieces]
        return "\n".join(["slice     piece            meaning", *rows, f"({self.size} entries in all)"])


def to_bits(vector: np.ndarray) -> int:
    """The int whose bit ``i`` is entry ``i`` of a 0/1 vector (an observation or an action mask): the form the
    observers build and the bit-level agents read."""
    packed = np.packbits(np.asarray(vector, dtype=np.uint8), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")
