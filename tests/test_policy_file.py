"""Policy files are untrusted input: every rule of cardzoo.agents.policy_file on a hand-made bad file, random
corruption of a shipped file (refused by name or loaded unchanged, never another exception), the CLI's one-line
error, and every shipped policy loading and playing as before."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardzoo.agents import policy_file
from cardzoo.agents.features import FEATURES
from cardzoo.agents.learned import NumpyPolicy, shipped_policy
from cardzoo.envs import make_env
from cardzoo.envs.common.errors import PolicyError
from cardzoo.evaluation.cli import main

SHIPPED = sorted(Path(shipped_policy("rope_team")).parent.glob("*.npz"))
# and the policies the committed training results report on
SHIPPED += sorted((Path(__file__).parents[1] / "evaluation" / "results" / "training").glob("*/policy.npz"))
BASE = "rope_team_plain"  # the smallest shipped file, no features


def contents(stem: str = BASE) -> tuple[dict[str, np.ndarray], dict]:
    with np.load(shipped_policy(stem)) as data:  # a shipped file is trusted: numpy's own reader
        arrays = dict(data)
    return arrays, json.loads(str(arrays.pop("meta")))


def write(path: Path, arrays: dict[str, np.ndarray], meta, compressed: bool = True) -> Path:
    save = np.savez_compressed if compressed else np.savez
    save(path, meta=np.array(meta if isinstance(meta, str) else json.dumps(meta)), **arrays)
    return path


def reference_logits(path: Path, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The logits as the loader before validation computed them (np.load, no checks)."""
    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        x = observation if not meta.get("features") else FEATURES[meta["features"]][0](observation, mask)
        x = x.astype(np.float32)
        for i in range(meta["layers"]):
            x = np.tanh(x @ data[f"w{i}"] + data[f"b{i}"])
        return x @ data["action_w"] + data["action_b"]


def observations(meta: dict, n: int = 6) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` decisions of a random game of the policy's env and variant."""
    config = meta.get("config", {})
    options = {}
    if meta["env"] == "summit_rush_v0":
        options = {"level": config["levels"][0], "talk": bool(config.get("talk", False))}
    env = make_env(meta["env"], **options)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    seen = []
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated or len(seen) == n:
            break
        seen.append((obs["observation"], obs["action_mask"]))
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return seen


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem if p.stem != "policy" else p.parent.name for p in SHIPPED])
def test_every_shipped_policy_loads_and_plays_as_before(path):
    policy = NumpyPolicy(path)
    assert policy.digest == hashlib.sha1(path.read_bytes()).hexdigest()[:12]  # result caches stay valid
    for observation, mask in observations(policy.meta):
        assert observation.shape == (policy.observation_size,)
        assert np.array_equal(policy.logits(observation, mask), reference_logits(path, observation, mask))


def test_action_widths_are_the_env_modules_action_spaces():
    variants = {"rope_team_v0": [{}], "rook_v0": [{}],
                "summit_rush_v0": [dict(solo=True, talk=t) for t in (False, True)]
                + [dict(players=p, talk=t) for p in (2, 3) for t in (False, True)]}
    for env_name, options in variants.items():
        sizes = set()
        for o in options:
            env = make_env(env_name, **o)
            sizes.add(env.action_space(env.possible_agents[0]).n)
        assert policy_file.action_sizes(env_name) == sizes, env_name
    assert policy_file.action_sizes("chess_v6") is None


def _set(name, value):
    return lambda arrays, meta: arrays.__setitem__(name, value)


def _meta(**changes):
    return lambda arrays, meta: meta.update(changes)


def _nan(name, at, value):
    def edit(arrays, meta):
        arrays[name] = arrays[name].copy()
        arrays[name][at] = value
    return edit


def _drop(name):
    return lambda arrays, meta: arrays.pop(name)


def _wider_actions(arrays, meta):
    arrays["action_w"] = np.zeros((128, 53), np.float32)
    arrays["action_b"] = np.zeros(53, np.float32)
    del meta["actions"]


def _nested(depth):  # as text: json.dumps would recurse too
    return lambda arrays, meta: json.dumps(meta)[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"


BAD = {
    "wrong_hidden_shape": (_set("w1", np.zeros((64, 3), np.float32)), r": w1 has shape \(64, 3\), but layer 0 gives "
                                                                       r"128 outputs$"),
    "wrong_input_rows": (_set("w0", np.zeros((463, 128), np.float32)), r"w0 has shape \(463, 128\), but meta's "
                                                                       r"observation_size is 464$"),
    "wrong_bias": (_set("b0", np.zeros(127, np.float32)), r"b0 has shape \(127,\), but w0 gives 128 outputs"),
    "vector_weights": (_set("w1", np.zeros(128, np.float32)), r"w1 has shape \(128,\); a layer's weights are a matrix"),
    "empty_layer": (_set("w1", np.zeros((128, 0), np.float32)), r"w1 has shape \(128, 0\)"),
    "string_weights": (_set("w1", np.full((128, 128), "0.5")), r"w1 has dtype '<U3'; weights must be float16, float32, "
                                                                r"float64"),
    "object_weights": (_set("b0", np.array([0.5] * 127 + [None], dtype=object)), r"b0 has dtype '\|O'"),
    "integer_weights": (_set("action_b", np.zeros(52, np.int64)), r"action_b has dtype '<i8'"),
    "complex_weights": (_set("b1", np.zeros(128, np.complex64)), r"b1 has dtype '<c8'"),
    "nan": (_nan("w1", (3, 4), np.nan), r"w1 holds nan at \(3, 4\); weights must be finite"),
    "inf": (_nan("action_b", 7, -np.inf), r"action_b holds -inf at \(7,\)"),
    "wrong_action_width": (_wider_actions, r"action_w gives 53 actions, but rope_team_v0 has 52$"),
    "width_of_another_game": (_meta(env="summit_rush_v0"), r"action_w gives 52 actions, but summit_rush_v0 has "
                                                           r"30 or 58 or 86 or 1710 or 3306 or 4902$"),
    "actions_disagree": (_meta(actions=51), r"action_w gives 52 actions, but meta says 51"),
    "missing_array": (_drop("w1"), r"is missing an entry \(w1\): not a cardzoo policy file\?"),
    "unexpected_array": (_set("w2", np.zeros((128, 128), np.float32)), r"holds an unexpected array 'w2' \(a policy of "
                                                                       r"2 layers holds meta, w0, b0, w1, b1, "),
    "deep_meta": (_nested(30_000), r"meta nests 30001 levels deep; at most 16$"),
    "huge_meta": (_meta(notes="x" * 70_000), r"meta is 7\d,\d{3} characters long; at most 65,536$"),
    "layers_text": (_meta(layers="2"), r"meta's layers is '2'; it must be a whole number"),
    "layers_bool": (_meta(layers=True), r"meta's layers is True"),
    "layers_many": (_meta(layers=17), r"meta's layers is 17"),
    "layers_fewer": (_meta(layers=1), r"holds an unexpected array 'b1'"),
    "observation_size_float": (_meta(observation_size=464.0), r"meta's observation_size is 464.0"),
    "activation_list": (_meta(activation=["tanh"]), r"uses activation \['tanh'\]; known: tanh, relu"),
    "features_unknown": (_meta(features="telepathy"), r"reads features 'telepathy'; known: "),
    "features_too_wide": (_meta(features="rope_team_scores", observation_size=104), r"meta's observation_size 104 "
                                                                                    r"leaves no room"),
    "env_number": (_meta(env=5), r"meta's env is 5; it must be an env name"),
    "actions_text": (_meta(actions="52"), r"meta's actions is '52'"),
    "no_observation_size": (lambda arrays, meta: meta.pop("observation_size"), r"meta has no 'observation_size'"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_policy_file_is_refused_by_name(tmp_path, case):
    edit, message = BAD[case]
    arrays, meta = contents()
    text = edit(arrays, meta)  # the meta's text, if the edit made it
    path = write(tmp_path / "x.npz", arrays, text if isinstance(text, str) else meta)
    with pytest.raises(PolicyError, match=r"^policy file '.*x\.npz'") as caught:
        NumpyPolicy(path)
    assert caught.match(message)


@pytest.mark.parametrize("meta,message", [("[1, 2]", "meta must be a JSON object, not list"),
                                          ("{", "meta is not JSON: "), ('{"a": 1}', "meta has no 'layers'")])
def test_meta_must_be_a_json_object(tmp_path, meta, message):
    arrays, _ = contents()
    with pytest.raises(PolicyError, match=message):
        NumpyPolicy(write(tmp_path / "x.npz", arrays, meta))
    np.savez(tmp_path / "y.npz", meta=np.zeros(3), **arrays)
    with pytest.raises(PolicyError, match=r"meta must be one JSON string \(a 0-d unicode array\), not a \(3,\) '<f8'"):
        NumpyPolicy(tmp_path / "y.npz")


def test_other_floats_and_plain_zips_are_accepted(tmp_path):
    """float16/float64 weights, a stored (not deflated) zip and relu are what the schema allows."""
    arrays, meta = contents()
    arrays["w1"] = arrays["w1"].astype(np.float64)
    arrays["b1"] = arrays["b1"].astype(np.float16)
    policy = NumpyPolicy(write(tmp_path / "x.npz", arrays, {**meta, "activation": "relu"}, compressed=False))
    assert policy.weights[1][0].dtype == np.float64 and policy.weights[1][1].dtype == np.float16
    assert policy.weights[1][0].flags.writeable  # as np.load gave them (torch.as_tensor warns on read-only arrays)


def _zip(path: Path, members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _members(stem: str = BASE) -> dict[str, bytes]:
    with zipfile.ZipFile(shipped_policy(stem)) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_bad_zip_members_are_refused(tmp_path):
    members = _members()
    with pytest.raises(PolicyError, match=r"holds 'notes.txt', which is not a .npy array"):
        NumpyPolicy(_zip(tmp_path / "a.npz", {**members, "notes.txt": b"hello"}))
    with pytest.raises(PolicyError, match=r"meta is compressed with method 12; policy files are stored or deflated"):
        NumpyPolicy(_zip(tmp_path / "b.npz", members, zipfile.ZIP_BZIP2))
    with pytest.warns(UserWarning, match="Duplicate name"):
        _zip(tmp_path / "c.npz", members)
        with zipfile.ZipFile(tmp_path / "c.npz", "a") as z:
            z.writestr("w0.npy", members["w0.npy"])
    with pytest.raises(PolicyError, match=r"holds 'w0.npy' twice"):
        NumpyPolicy(tmp_path / "c.npz")
    many = {**members, **{f"x{i}.npy": b"" for i in range(60)}}
    with pytest.raises(PolicyError, match=r"is a zip of more than 64 entries"):
        NumpyPolicy(_zip(tmp_path / "d.npz", many))
    short = members["w1.npy"][:-4]  # the header promises 128 x 128 float32, the data is 4 bytes short
    with pytest.raises(PolicyError, match=r"w1 holds 65,532 bytes of data, but its header says \(128, 128\) float32 "
                                          r"\(65,536 bytes\)"):
        NumpyPolicy(_zip(tmp_path / "e.npz", {**members, "w1.npy": short}))


_START = "{'descr': '<f4', 'fortran_order': False, 'shape': "


@pytest.mark.parametrize("header,message", [(_START + "[" * 3000 + "}", "w1 has an array header that is not numpy's"),
                                            (_START + "(" + "-" * 5000 + "1,)}", "w1 has a header of 5,")])
def test_crafted_npy_headers_never_reach_numpys_parser(tmp_path, header, message):
    """numpy's own header parser lets these out as TokenError and MemoryError."""
    text = header.encode("latin-1") + b"\n"
    npy = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text
    with pytest.raises(PolicyError, match=message):
        NumpyPolicy(_zip(tmp_path / "x.npz", {**_members(), "w1.npy": npy}))


def test_a_zip_bomb_is_refused_without_inflating_it(tmp_path):
    arrays, meta = contents()
    arrays["w0"] = np.zeros((70_000, 128), np.float32)  # 35.8 MB of zeros, 123 kB compressed
    bomb = write(tmp_path / "bomb.npz", arrays, meta)
    assert bomb.stat().st_size < 200_000  # deflate's ratio is at most ~1000:1
    tracemalloc.start()
    try:
        with pytest.raises(PolicyError, match=r": w0 inflates to 35,840,128 bytes; at most 33,554,432 are allowed$"):
            NumpyPolicy(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # the file's bytes, not the inflated array


def test_a_zip_directory_that_understates_a_size_is_refused_without_inflating_more(tmp_path):
    """A member whose directory says 65,664 bytes but which inflates to 36 MB: read up to the stated size, then the
    CRC of what was read does not match."""
    members = _members()
    w1 = members["w1.npy"]
    path = _zip(tmp_path / "liar.npz", {**members, "w1.npy": w1 + bytes(36_000_000)})
    data = bytearray(path.read_bytes())
    true_size = (len(w1) + 36_000_000).to_bytes(4, "little")
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local header, central directory
        headers = [m.start() for m in re.finditer(re.escape(signature), data)
                   if data[m.start() + offset:m.start() + offset + 4] == true_size]
        assert len(headers) == 1
        data[headers[0] + offset:headers[0] + offset + 4] = len(w1).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    assert zipfile.ZipFile(path).getinfo("w1.npy").file_size == len(w1)
    tracemalloc.start()
    try:
        with pytest.raises(PolicyError, match=r"not a cardzoo policy file: BadZipFile: Bad CRC-32 for file 'w1.npy'"):
            NumpyPolicy(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000


def test_size_limits_in_all(tmp_path, monkeypatch):
    path = shipped_policy(BASE)
    monkeypatch.setattr(policy_file, "MAX_TOTAL_BYTES", 330_000)
    with pytest.raises(PolicyError, match=r"inflates to 334,748 bytes in all; at most 330,000 are allowed"):
        NumpyPolicy(path)
    monkeypatch.setattr(policy_file, "MAX_FILE_BYTES", 1000)
    with pytest.raises(PolicyError, match=r"is 309,784 bytes; policy files are at most 1,000"):
        NumpyPolicy(path)


def test_only_regular_files_are_read(tmp_path):
    (tmp_path / "folder.npz").mkdir()
    with pytest.raises(PolicyError, match=r"policy file '.*folder.npz' is not a regular file"):
        NumpyPolicy(tmp_path / "folder.npz")
    os.mkfifo(tmp_path / "fifo.npz")  # opening it would wait for a writer forever
    with pytest.raises(PolicyError, match=r"policy file '.*fifo.npz' is not a regular file"):
        NumpyPolicy(tmp_path / "fifo.npz")


def _bad_file(tmp_path: Path) -> Path:
    arrays, meta = contents()
    arrays["w1"] = np.zeros((64, 3), np.float32)
    return write(tmp_path / "bad.npz", arrays, meta)


@pytest.mark.parametrize("argv", [["play", "rope_team_v0", "--agents", "{bad}", "random", "--seed", "1"],
                                  ["race", "--agents", "{bad}", "--series", "1", "--length", "1", "--workers", "1"]])
def test_the_cli_says_one_line(tmp_path, capsys, argv):
    bad = _bad_file(tmp_path)
    with pytest.raises(SystemExit) as ended:
        main([a.replace("{bad}", str(bad)) for a in argv])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err == (f"cardzoo {argv[0]}: PolicyError: policy file {str(bad)!r}: w1 has shape (64, 3), but layer 0 "
                   "gives 128 outputs\n")


# -- random corruption of a shipped file -----------------------------------------------------------------------

_ORIGINAL = {}


def _original():
    """The shipped file's bytes, the policy and its logits on a few real decisions (computed once)."""
    if not _ORIGINAL:
        path = shipped_policy(BASE)
        policy = NumpyPolicy(path)
        seen = observations(policy.meta, n=4)
        _ORIGINAL.update(data=path.read_bytes(), seen=seen, logits=[policy.logits(o, m) for o, m in seen])
    return _ORIGINAL


_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 600) | st.floats(allow_nan=False)
                     | st.text(max_size=8) | st.sampled_from(["tanh", "rook_v0", "summit_rush_v0"]),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=6)
_dtypes = st.sampled_from(["float16", "float32", "float64", "int8", "int64", "bool", "complex64", "U3", "object"])


@st.composite
def corruptions(draw):
    original = _original()["data"]
    kind = draw(st.sampled_from(["flip", "truncate", "array", "meta"]))
    if kind == "flip":
        data = bytearray(original)
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(data) - 1) | st.integers(len(data) - 400, len(data) - 1))  # the directory too
            data[at] ^= draw(st.integers(1, 255))
        return "bytes", bytes(data)
    if kind == "truncate":
        return "bytes", original[:draw(st.integers(0, len(original) - 1))]
    arrays, meta = contents()
    if kind == "array":
        name = draw(st.sampled_from(sorted(arrays)))
        shape = draw(st.lists(st.integers(0, 5), max_size=3).map(tuple))
        dtype = draw(_dtypes)
        if shape == arrays[name].shape and dtype.startswith("float"):
            shape = (*shape, 1)  # another shape or another kind of dtype: never the same array
        arrays[name] = np.ones(shape, dtype=dtype)
        return "arrays", (arrays, meta)
    key = draw(st.sampled_from(sorted(meta) + ["features", "new"]))
    if draw(st.booleans()) and key in meta:
        del meta[key]
    else:
        meta[key] = draw(_json)
    return "arrays", (arrays, meta)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corruptions())
def test_a_corrupted_policy_file_is_refused_by_name_or_plays_identically(tmp_path, corruption):
    kind, value = corruption
    path = tmp_path / "corrupt.npz"
    if kind == "bytes":
        path.write_bytes(value)
    else:
        write(path, *value)
    try:
        policy = NumpyPolicy(path)
    except PolicyError as err:
        assert str(err).startswith(f"policy file {str(path)!r}")
        return
    original = _original()
    for (observation, mask), logits in zip(original["seen"], original["logits"], strict=True):
        assert np.array_equal(policy.logits(observation, mask), logits)
