"""Reading a policy file as untrusted input: everything is checked before any array is used.

A policy file (written by ``cardzoo.training.export``) is numpy's ``.npz``, a zip of ``.npy`` arrays: ``meta`` (a
JSON object in a 0-d unicode array), ``w0``..``w{n-1}`` and ``b0``..``b{n-1}`` (the hidden layers, ``n`` =
``meta["layers"]``), ``action_w`` and ``action_b`` (the action layer). :func:`read_policy` refuses, with a
:class:`PolicyError` naming the file and the first problem:

- a file over 64 MiB, or a zip directory over 64 entries (counted in the bytes, before zipfile builds them);
- any member but the expected ones (the writer makes no others, so an extra one is refused, not ignored), one that is
  encrypted or compressed other than stored/deflated, or whose uncompressed size in the zip directory is over 32 MiB
  (1 MiB for ``meta``) or 64 MiB in all -- a small file that would inflate to gigabytes is refused without inflating
  it, and zipfile reads no further than that size and checks the CRC;
- an array whose ``.npy`` header is not numpy's plain form (parsed here: numpy's own parser evaluates the header text
  and lets ``MemoryError`` or ``TokenError`` out of a crafted one), whose dtype is not float16/32/64 (no strings, no
  objects: nothing is unpickled), or whose data is not exactly the size its header promises;
- a ``meta`` over 65,536 characters or 16 levels of nesting (counted before parsing, so no ``RecursionError``), not a
  JSON object, or without ``layers`` (0..16), a known ``activation``, ``observation_size`` and, if present, known
  ``features``, a string ``env`` and an integer ``actions``;
- shapes that do not chain (``w0`` rows = ``observation_size``, each layer's rows = the previous layer's outputs,
  each bias = its layer's outputs), an action layer whose width is not that of a variant of ``meta["env"]`` (read from
  the env modules, when the env is one of cardzoo's) or of ``meta["actions"]``, and NaN or infinite values.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import math
import os
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from cardzoo.envs.common.errors import PolicyError

ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}

MiB = 1 << 20
MAX_FILE_BYTES = 64 * MiB  # the shipped files are 0.3-2.1 MB
MAX_TOTAL_BYTES = 64 * MiB  # uncompressed, all members
MAX_ARRAY_BYTES = 32 * MiB  # uncompressed, one array
MAX_META_BYTES = 1 * MiB
MAX_META_CHARS = 65_536  # the shipped metas are 3-5 k
MAX_META_DEPTH = 16  # the shipped ones nest 3 deep
MAX_LAYERS = 16
MAX_ENTRIES = 64
MAX_HEADER_BYTES = 4096  # numpy writes 128

FLOATS = ("float16", "float32", "float64")
_CENTRAL_DIRECTORY = b"PK\x01\x02"  # zipfile parses one entry per signature, so their count bounds its work
_NPY_MAGIC = b"\x93NUMPY"
_HEADER = re.compile(r"\{\s*'descr':\s*'([^']{1,40})',\s*'fortran_order':\s*(True|False),\s*"
                     r"'shape':\s*\(\s*((?:\d{1,12}\s*,\s*)*(?:\d{1,12})?)\s*\),?\s*\}\s*")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
# What zipfile, zlib and a bad header can raise on bytes that are not a sound zip (a flipped compression method gives
# NotImplementedError, an encryption bit RuntimeError, a lying size zlib.error or EOFError, ...).
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, EOFError, ValueError, NotImplementedError,
                RuntimeError, struct.error, OverflowError)


class Policy(NamedTuple):
    meta: dict[str, Any]
    weights: list[tuple[np.ndarray, np.ndarray]]  # the hidden layers' (w, b)
    action: tuple[np.ndarray, np.ndarray]
    digest: str  # of the file's bytes, which are the bytes read


def action_sizes(env: str) -> frozenset[int] | None:
    """The sizes of ``env``'s action space over its variants (the registry's; None for an env that is not
    cardzoo's)."""
    from cardzoo.envs.registry import by_env_id

    game = by_env_id().get(env)
    return None if game is None else game.action_sizes


def expected_arrays(layers: int) -> list[str]:
    return ["meta", *(f"{k}{i}" for i in range(layers) for k in "wb"), "action_w", "action_b"]


def read_policy(path: str | Path) -> Policy:
    """The checked contents of the policy file at ``path`` (see the module's docstring for the checks)."""
    where = f"policy file {str(path)!r}"
    data = _read_bytes(path, where)
    if data.count(_CENTRAL_DIRECTORY) > MAX_ENTRIES:
        raise PolicyError(f"{where} is a zip of more than {MAX_ENTRIES} entries; a policy file has at most "
                          f"{2 * MAX_LAYERS + 3}")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = _directory(archive, where)
            if "meta" not in members:
                raise PolicyError(f"{where} is missing an entry (meta): not a cardzoo policy file?")
            meta = _parse_meta(_read_npy(archive, members["meta"], "meta", where), where)
            names = expected_arrays(meta["layers"])
            missing = [n for n in names if n not in members]
            if missing:
                raise PolicyError(f"{where} is missing an entry ({missing[0]}): not a cardzoo policy file?")
            extra = sorted(set(members) - set(names))
            if extra:
                raise PolicyError(f"{where} holds an unexpected array {extra[0]!r} (a policy of {meta['layers']} "
                                  f"layers holds {', '.join(names)})")
            arrays = {n: _read_npy(archive, members[n], n, where) for n in names[1:]}
    except PolicyError:
        raise
    except _READ_ERRORS as err:
        raise PolicyError(f"{where} is not a cardzoo policy file: {type(err).__name__}: {err}") from None
    _check_shapes(meta, arrays, where)
    for name, array in arrays.items():
        bad = ~np.isfinite(array)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise _bad(where, f"{name} holds {array[at]} at {at}; weights must be finite")
    n = meta["layers"]
    return Policy(meta, [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in range(n)],
                  (arrays["action_w"], arrays["action_b"]), hashlib.sha1(data).hexdigest()[:12])


def _bad(where: str, problem: str) -> PolicyError:
    return PolicyError(f"{where}: {problem}")


def _read_bytes(path: str | Path, where: str) -> bytes:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a folder, a FIFO that would block, a device that never ends
            raise PolicyError(f"{where} is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise PolicyError(f"{where} is {info.st_size:,} bytes; policy files are at most {MAX_FILE_BYTES:,}")
        with open(path, "rb") as f:
            data = f.read(info.st_size + 1)  # read(n) allocates n bytes first: not the limit's 64 MiB
    except FileNotFoundError:
        raise PolicyError(f"{where} does not exist") from None
    except (OSError, ValueError) as err:  # no permission; a NUL in the path
        raise PolicyError(f"{where} cannot be read: {err}") from None
    if len(data) != info.st_size:
        raise PolicyError(f"{where} changed while it was read")
    return data


def _directory(archive: zipfile.ZipFile, where: str) -> dict[str, zipfile.ZipInfo]:
    """The members by array name, checked from the zip directory alone (nothing inflated yet)."""
    members: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in archive.infolist():
        name = info.filename.removesuffix(".npy")
        if name == info.filename:
            raise PolicyError(f"{where} holds {info.filename!r}, which is not a .npy array")
        if name in members:
            raise PolicyError(f"{where} holds {info.filename!r} twice")
        if info.flag_bits & 0x1:
            raise _bad(where, f"{name} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _bad(where, f"{name} is compressed with method {info.compress_type}; policy files are stored or "
                              "deflated")
        limit = MAX_META_BYTES if name == "meta" else MAX_ARRAY_BYTES
        if info.file_size > limit:
            raise _bad(where, f"{name} inflates to {info.file_size:,} bytes; at most {limit:,} are allowed")
        total += info.file_size
        members[name] = info
    if total > MAX_TOTAL_BYTES:
        raise PolicyError(f"{where} inflates to {total:,} bytes in all; at most {MAX_TOTAL_BYTES:,} are allowed")
    return members


def _read_npy(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, where: str) -> np.ndarray:
    """One member's array, its header checked before its data is read."""
    with archive.open(info) as stream:
        magic = stream.read(8)
        if len(magic) < 8 or magic[:6] != _NPY_MAGIC or magic[6] not in (1, 2, 3):
            raise _bad(where, f"{name} is not a numpy array (.npy)")
        size_bytes = 2 if magic[6] == 1 else 4
        length = int.from_bytes(stream.read(size_bytes), "little")
        if length > MAX_HEADER_BYTES:
            raise _bad(where, f"{name} has a header of {length:,} bytes; numpy writes 128")
        header = stream.read(length).decode("utf-8" if magic[6] == 3 else "latin-1")
        match = _HEADER.fullmatch(header)
        if match is None:
            raise _bad(where, f"{name} has an array header that is not numpy's: {header[:80]!r}")
        descr, fortran, shape_text = match.groups()
        shape = tuple(int(s) for s in re.findall(r"\d+", shape_text))
        if name == "meta":
            if not re.fullmatch(r"[<>=]?U\d{1,9}", descr) or shape != ():
                raise _bad(where, f"meta must be one JSON string (a 0-d unicode array), not a {shape} {descr!r} array")
            dtype = np.dtype(descr)
            if dtype.itemsize // 4 > MAX_META_CHARS:
                raise _bad(where, f"meta is {dtype.itemsize // 4:,} characters long; at most {MAX_META_CHARS:,}")
        else:
            dtype = np.dtype(descr) if re.fullmatch(r"[<>=]?f[248]", descr) else None
            if dtype is None:
                raise _bad(where, f"{name} has dtype {descr!r}; weights must be {', '.join(FLOATS)}")
        nbytes = math.prod(shape) * dtype.itemsize
        if 8 + size_bytes + length + nbytes != info.file_size:
            data_bytes = info.file_size - 8 - size_bytes - length
            raise _bad(where, f"{name} holds {data_bytes:,} bytes of data, but its header says {shape} {dtype} "
                              f"({nbytes:,} bytes)")
        raw = stream.read(nbytes)
        if len(raw) != nbytes or stream.read(1):
            raise _bad(where, f"{name} is {len(raw):,} bytes long, not {nbytes:,}")
    # A writable copy, as np.load gives (torch.as_tensor warns on a read-only array).
    return np.frombuffer(bytearray(raw), dtype).reshape(shape, order="F" if fortran == "True" else "C")


def _parse_meta(array: np.ndarray, where: str) -> dict[str, Any]:
    text = str(array[()])
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", _JSON_STRING.sub("", text)):  # strings may hold brackets
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_META_DEPTH:
        raise _bad(where, f"meta nests {deepest} levels deep; at most {MAX_META_DEPTH}")
    try:
        meta = json.loads(text)
    except ValueError as err:
        raise _bad(where, f"meta is not JSON: {err}") from None
    if not isinstance(meta, dict):
        raise _bad(where, f"meta must be a JSON object, not {type(meta).__name__}")
    for key in ("layers", "activation", "observation_size"):
        if key not in meta:
            raise _bad(where, f"meta has no {key!r}: not a cardzoo policy file?")
    layers = meta["layers"]
    if type(layers) is not int or not 0 <= layers <= MAX_LAYERS:
        raise _bad(where, f"meta's layers is {layers!r}; it must be a whole number of hidden layers, 0..{MAX_LAYERS}")
    activation = meta["activation"]
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise PolicyError(f"{where} uses activation {activation!r}; known: {', '.join(ACTIVATIONS)}")
    size = meta["observation_size"]
    if type(size) is not int or size < 1:
        raise _bad(where, f"meta's observation_size is {size!r}; it must be a positive whole number")
    features = meta.get("features")
    if features not in (None, ""):
        from .features import FEATURES

        if not isinstance(features, str) or features not in FEATURES:
            raise PolicyError(f"{where} reads features {features!r}; known: {', '.join(FEATURES)}")
        if size <= FEATURES[features][1]:
            raise _bad(where, f"meta's observation_size {size} leaves no room for the observation before the "
                       f"{FEATURES[features][1]} entries of features {features!r}")
    if "env" in meta and not isinstance(meta["env"], str):
        raise _bad(where, f"meta's env is {meta['env']!r}; it must be an env name")
    if "actions" in meta and type(meta["actions"]) is not int:
        raise _bad(where, f"meta's actions is {meta['actions']!r}; it must be a whole number")
    return meta


def _check_shapes(meta: dict[str, Any], arrays: dict[str, np.ndarray], where: str) -> None:
    width, source = meta["observation_size"], f"meta's observation_size is {meta['observation_size']}"
    layers = [(f"w{i}", f"b{i}") for i in range(meta["layers"])] + [("action_w", "action_b")]
    for i, (w_name, b_name) in enumerate(layers):
        w, b = arrays[w_name], arrays[b_name]
        if w.ndim != 2 or 0 in w.shape:
            raise _bad(where, f"{w_name} has shape {w.shape}; a layer's weights are a matrix of at least 1 x 1")
        if w.shape[0] != width:
            raise _bad(where, f"{w_name} has shape {w.shape}, but {source}")
        if b.shape != (w.shape[1],):
            raise _bad(where, f"{b_name} has shape {b.shape}, but {w_name} gives {w.shape[1]} outputs")
        width, source = w.shape[1], f"layer {i} gives {w.shape[1]} outputs"
    if meta.get("actions", width) != width:
        raise _bad(where, f"action_w gives {width} actions, but meta says {meta['actions']}")
    sizes = action_sizes(meta.get("env", ""))
    if sizes is not None and width not in sizes:
        raise _bad(where, f"action_w gives {width} actions, but {meta['env']} has "
                   f"{' or '.join(str(n) for n in sorted(sizes))}")
