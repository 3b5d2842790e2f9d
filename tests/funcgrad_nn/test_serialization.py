"""save/load: safetensors round trip, PyTorch interchange, old .npz files, atomic writes under
kill, orphaned temp files, and clear errors for files that are not (or no longer) checkpoints."""

import collections
import io
import json
import os
import signal
import struct
import subprocess
import sys
import time
import types
import typing
import warnings

import numpy as np
import pytest
import safetensors
import safetensors.numpy

import funcgrad_nn as nn
from funcgrad_nn.serialization import CheckpointError
from tests.helpers import DEVICE, dev, host

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_round_trip_state_dict_and_nested(tmp_path):
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    path = tmp_path / "ckpt.safetensors"
    nn.save(m.state_dict(), path)
    sd = nn.load(path)
    assert list(sd) == list(m.state_dict())
    m2 = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    m2.load_state_dict(sd)
    for a, b in zip(m.state_dict().values(), m2.state_dict().values()):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    assert all(a.flags.writeable for a in sd.values())
    obj = {"state": {0: {"step": 3, "exp_avg": np.ones(2, np.float32)}},
           "param_groups": [{"lr": 0.1, "params": [0, 1], "name": None}], "t": (1, 2.5)}
    nn.save(obj, str(path))
    back = nn.load(path)
    assert back["state"][0]["step"] == 3 and back["t"] == (1, 2.5)
    assert back["param_groups"][0] == {"lr": 0.1, "params": [0, 1], "name": None}
    assert back["state"][0]["exp_avg"].dtype == np.float32


def test_round_trip_of_every_storable_kind():
    rng_state = np.random.default_rng(7).bit_generator.state  # 128-bit ints
    obj = collections.OrderedDict(
        c128=np.array([1 + 2j, -3.5j]), c64=np.array([1j], np.complex64),
        f16=np.arange(3, dtype=np.float16), u8=np.arange(4, dtype=np.uint8).reshape(2, 2),
        b=np.array([True, False]), empty=np.zeros((0, 3)), zero_d=np.array(2.5),
        big_endian=np.arange(3, dtype=">i4"), strided=np.arange(10.0)[::3],
        scalar=np.float32(1.5), inf=float("inf"), nan=float("nan"), rng=rng_state,
        nested={"a.b": np.ones(1), "a": {"b": np.zeros(1)}}, text="héllo", none=None)
    buf = io.BytesIO()
    nn.save(obj, buf)
    back = nn.load(buf.getvalue())
    assert type(back) is collections.OrderedDict and list(back) == list(obj)
    for k in ("c128", "c64", "f16", "u8", "b", "empty", "zero_d", "strided"):
        assert back[k].dtype == obj[k].dtype and back[k].shape == obj[k].shape, k
        assert np.array_equal(back[k], obj[k]), k
    assert np.array_equal(back["big_endian"], [0, 1, 2]) and back["big_endian"].dtype == np.int32
    assert back["scalar"] == np.float32(1.5) and type(back["scalar"]) is np.float32
    assert back["inf"] == float("inf") and np.isnan(back["nan"])
    assert back["rng"] == rng_state
    assert back["nested"]["a.b"][0] == 1 and back["nested"]["a"]["b"][0] == 0
    assert back["text"] == "héllo" and back["none"] is None


def test_unstorable_values_name_their_place():
    with pytest.raises(TypeError, match=r"builtin_function_or_method at 'opt.lr_fn'"):
        nn.save({"opt": {"lr_fn": len}}, io.BytesIO())
    with pytest.raises(TypeError, match=r"'w'.*dtype <U1"):
        nn.save({"w": np.array(["a"])}, io.BytesIO())


Point = collections.namedtuple("Point", ["x", "y"])


class AdamState(typing.NamedTuple):
    count: int
    mu: typing.Any


def test_namedtuples_load_back_as_their_class_as_torch_load():
    # torch.save/torch.load round-trip namedtuples by class (pickle); here by import path
    obj = {"opt": AdamState(3, Point(np.ones(2, np.float32), None)),
           "seq": [Point(1, "a")], Point(0, 1): "a namedtuple key"}
    buf = io.BytesIO()
    nn.save(obj, buf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = nn.load(buf.getvalue())
    assert type(back["opt"]) is AdamState and type(back["opt"].mu) is Point
    assert back["opt"].count == 3 and back["opt"].mu.x.dtype == np.float32
    assert type(back["seq"][0]) is Point and back["seq"][0] == (1, "a")
    assert back[Point(0, 1)] == "a namedtuple key"
    # the tensors are named by field, for readers of the plain safetensors file
    assert list(safetensors.numpy.load(buf.getvalue())) == ["opt.mu.x"]


def test_a_namedtuple_whose_class_cannot_be_found_comes_back_with_its_fields_and_a_warning():
    module = types.ModuleType("fg_saved_types")
    module.Pair = collections.namedtuple("Pair", "a b", module="fg_saved_types")
    sys.modules["fg_saved_types"] = module
    try:
        buf = io.BytesIO()
        nn.save([module.Pair(1, np.arange(2))], buf)
        data = buf.getvalue()
        assert type(nn.load(data)[0]) is module.Pair
        module.Pair = collections.namedtuple("Pair", "a b c", module="fg_saved_types")
        with pytest.warns(UserWarning, match=r"fg_saved_types:Pair .* not a namedtuple of 2"):
            (back,) = nn.load(data)
        del module.Pair
        with pytest.warns(UserWarning, match="has no 'Pair'"):
            nn.load(data)
    finally:
        del sys.modules["fg_saved_types"]
    with pytest.warns(UserWarning, match="'fg_saved_types' is not imported"):
        (back,) = nn.load(data)
    assert type(back).__name__ == "Pair" and back._fields == ("a", "b") and back.a == 1
    assert "fg_saved_types" not in sys.modules  # loading never imports (no code from a file)


def test_a_parameter_and_a_counter_round_trip_as_torch_save():
    # torch.save keeps a Parameter's tensor and a Counter (weights_only loads both)
    buf = io.BytesIO()
    nn.save({"p": nn.Parameter(np.arange(3.0)), "n": collections.Counter(a=2)}, buf)
    back = nn.load(buf.getvalue())
    assert type(back["p"]) is np.ndarray and back["p"].tolist() == [0.0, 1.0, 2.0]
    assert type(back["n"]) is collections.Counter and back["n"]["a"] == 2


def test_a_corrupt_namedtuple_entry_is_a_checkpoint_error():
    buf = io.BytesIO()
    nn.save(Point(1, 2), buf)
    header = json.loads(buf.getvalue()[8:8 + struct.unpack("<Q", buf.getvalue()[:8])[0]])
    structure = json.loads(header["__metadata__"]["funcgrad_nn"])
    structure["root"]["fields"] = ["x"]
    bad = io.BytesIO()
    safetensors_meta = {"funcgrad_nn": json.dumps(structure), "format": "pt"}
    bad.write(safetensors.numpy.save({"t": np.zeros(1)}, metadata=safetensors_meta))
    with pytest.raises(CheckpointError, match="corrupt structure entry"):
        nn.load(bad.getvalue())


def test_the_other_builtins_torch_load_reads_round_trip():
    # torch 2.13: torch.save then torch.load (weights_only=True, the default) gives back
    # dicts with tuple/float/None/bool keys, complex numbers, bytes and sets; save refused
    # them ("dict keys must be str or int", "cannot store an object of type complex")
    obj = {(1, 2): np.ones(1), 0.5: "half", None: [1 + 2j, complex("nan+1j")], True: b"\x00xy",
           "s": {1, 2, 3}, "f": frozenset({"a"}), "ba": bytearray(b"z"), 3: {(0, "k"): 2}}
    buf = io.BytesIO()
    nn.save(obj, buf)
    back = nn.load(buf.getvalue())
    assert list(back) == list(obj)
    assert np.array_equal(back[(1, 2)], [1.0]) and back[0.5] == "half"
    assert back[None][0] == 1 + 2j and np.isnan(back[None][1].real) and back[None][1].imag == 1
    assert back[True] == b"\x00xy" and type(back[True]) is bytes
    assert back["s"] == {1, 2, 3} and type(back["s"]) is set
    assert back["f"] == frozenset({"a"}) and type(back["f"]) is frozenset
    assert back["ba"] == bytearray(b"z") and type(back["ba"]) is bytearray
    assert back[3] == {(0, "k"): 2}


def test_a_file_written_here_is_a_plain_safetensors_state_dict(tmp_path):
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    nn.save(m, tmp_path / "model.safetensors")  # a Module saves its state_dict
    plain = safetensors.numpy.load_file(str(tmp_path / "model.safetensors"))
    assert sorted(plain) == sorted(m.state_dict())
    assert plain["1.num_batches_tracked"].shape == ()
    assert (tmp_path / "model.safetensors").stat().st_mode & 0o777 != 0o600  # not mkstemp's mode
    # metadata "format": "pt", as safetensors.torch.save_file writes: the weights follow
    # PyTorch's layout, and Hugging Face loaders refuse a file without pt/tf/flax/mlx
    with safetensors.safe_open(str(tmp_path / "model.safetensors"), framework="numpy") as f:
        assert f.metadata()["format"] == "pt"


def test_pytorch_exported_safetensors_loads_into_the_twin():
    # fixtures/make_torch_safetensors.py: safetensors.torch.save_file(model.state_dict(), ...)
    sd = nn.load(os.path.join(FIXTURES, "torch_cnn.safetensors"))
    io_ = nn.load(os.path.join(FIXTURES, "torch_cnn_io.safetensors"))
    twin = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    assert twin.load_state_dict(sd) == ([], [])
    assert int(twin[1].num_batches_tracked) == 3
    twin.eval()
    np.testing.assert_allclose(np.asarray(twin(io_["x"])), io_["y"], rtol=1e-5, atol=1e-6)


def test_pytorch_safetensors_of_every_dtype_load_bfloat16_as_float32(tmp_path):
    # fixtures/make_torch_safetensors.py: bfloat16 (NumPy has none) loads as its exact float32
    path = os.path.join(FIXTURES, "torch_dtypes.safetensors")
    with open(path, "rb") as fh:
        raw = fh.read()
    for source in (path, raw):
        sd = nn.load(source)
        assert sd["bfloat16"].dtype == np.float32 and sd["bfloat16"].shape == (2, 3)
        np.testing.assert_array_equal(sd["bfloat16"], sd["bfloat16_as_float32"])
        assert sd["bfloat16_scalar"].shape == () and float(sd["bfloat16_scalar"]) == -2.75
        assert sd["bfloat16_empty"].shape == (0, 2)
        assert sd["float16"].dtype == np.float16 and sd["float16"].tolist() == [0.5, -1.25, 65504.0]
        assert sd["float64"].tolist() == [1.0 / 3.0]
        assert sd["int8"].dtype == np.int8 and sd["int8"].tolist() == [-128, 127]
        assert sd["int16"].tolist() == [-300, 300] and sd["int32"].tolist() == [2**31 - 1]
        assert sd["int64"].tolist() == [-(2**40)] and sd["uint8"].tolist() == [0, 255]
        assert sd["bool"].dtype == np.bool_ and sd["bool"].tolist() == [True, False]
        assert all(a.flags.writeable for a in sd.values())
    # a bfloat16 checkpoint loads into a float32 model
    lin = nn.Linear(3, 2)
    lin.load_state_dict({"weight": sd["bfloat16"], "bias": sd["bfloat16"][0, :2]})
    np.testing.assert_array_equal(np.asarray(lin.weight), sd["bfloat16"])
    header = json.dumps({"w": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]},
                         "v": {"dtype": "BF16", "shape": [1], "data_offsets": [1, 3]}}).encode()
    (tmp_path / "f8.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"abc")
    with pytest.raises(CheckpointError, match="F8_E4M3, which NumPy cannot hold"):
        nn.load(tmp_path / "f8.safetensors")


def _old_npz(path, obj_structure, arrays):
    payload = {f"a{i}": a for i, a in enumerate(arrays)}
    payload["__structure__"] = np.array(json.dumps(
        {"format": "funcgrad_nn.save/1", "root": obj_structure}))
    np.savez(path, **payload)


def test_old_npz_checkpoints_still_load(tmp_path):
    p = tmp_path / "old.npz"
    _old_npz(p, {"t": "odict", "items": [["weight", {"t": "array", "i": 0}],
                                         ["step", {"t": "scalar", "i": 1}],
                                         ["meta", {"t": "tuple", "items": [{"t": "py", "v": 1}]}]]},
             [np.ones((2, 2), np.float32), np.int64(4)])
    back = nn.load(p)
    assert list(back) == ["weight", "step", "meta"]
    assert back["weight"].dtype == np.float32 and back["step"] == 4 and back["meta"] == (1,)
    np.savez(tmp_path / "x.npz", a=np.ones(1))
    with pytest.raises(CheckpointError, match=r"x\.npz.*not a funcgrad_nn checkpoint"):
        nn.load(tmp_path / "x.npz")


@pytest.mark.parametrize("case", ["text", "empty", "short", "truncated_header",
                                  "truncated_data", "corrupt_header", "truncated_npz"])
def test_unreadable_files_raise_naming_the_file_and_the_fault(tmp_path, case):
    good = tmp_path / "good.safetensors"
    nn.save({"w": np.arange(100.0)}, good)
    data = good.read_bytes()
    p = tmp_path / f"{case}.bin"
    expected = {"text": "not a checkpoint", "empty": "truncated or empty",
                "short": "truncated or empty", "truncated_header": "is truncated",
                "truncated_data": "is truncated: tensor 'w'", "corrupt_header": "corrupt",
                "truncated_npz": "truncated or corrupt .npz"}[case]
    if case == "text":
        p.write_text("hello, this is a text file\n" * 3)
    elif case == "empty":
        p.write_bytes(b"")
    elif case == "short":
        p.write_bytes(data[:5])
    elif case == "truncated_header":
        p.write_bytes(data[:40])
    elif case == "truncated_data":
        p.write_bytes(data[:-100])
    elif case == "corrupt_header":
        n = int.from_bytes(data[:8], "little")
        p.write_bytes(data[:9] + b"!" * (n - 1) + data[8 + n:])
    else:
        np.savez(tmp_path / "n.npz", a=np.arange(1000.0))
        p.write_bytes((tmp_path / "n.npz").read_bytes()[:500])
    with pytest.raises(CheckpointError, match=expected) as info:
        nn.load(p)
    assert str(p) in str(info.value)
    with pytest.raises(CheckpointError, match=expected):  # also from a file object
        with open(p, "rb") as fh:
            nn.load(fh)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        nn.load(tmp_path / "nope.safetensors")


def test_save_writes_through_a_symlink_as_torch_save(tmp_path):
    # torch.save opens the path for writing, so a 'latest' link keeps pointing at the file,
    # which gets the new contents; the atomic rename happens next to the real file.
    (tmp_path / "run").mkdir()
    target = tmp_path / "run" / "ckpt.safetensors"
    nn.save({"w": np.zeros(2)}, target)
    link = tmp_path / "latest.safetensors"
    os.symlink(os.path.join("run", "ckpt.safetensors"), link)
    nn.save({"w": np.ones(2)}, link)
    assert os.path.islink(link)
    assert np.array_equal(nn.load(target)["w"], np.ones(2))
    assert sorted(os.listdir(tmp_path / "run")) == ["ckpt.safetensors"]


def test_save_into_a_missing_directory_names_it(tmp_path):
    with pytest.raises(RuntimeError, match="parent directory .*nodir.* does not exist"):
        nn.save({"w": np.zeros(2)}, tmp_path / "nodir" / "x.safetensors")
    with pytest.raises(FileNotFoundError):
        nn.save({"w": np.zeros(2)}, tmp_path / "nodir" / "x.safetensors")


def test_a_failed_save_leaves_the_previous_checkpoint_and_no_temp_file(tmp_path):
    path = tmp_path / "model.safetensors"
    nn.save({"w": np.zeros(2)}, path)
    with pytest.raises(TypeError, match="cannot store"):
        nn.save({"w": np.ones(2), "bad": object()}, path)
    assert np.array_equal(nn.load(path)["w"], np.zeros(2))
    assert os.listdir(tmp_path) == ["model.safetensors"]


def test_orphaned_temp_files_are_removed_by_the_next_save(tmp_path):
    path = tmp_path / "model.safetensors"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    orphan = tmp_path / f".tmp-model.safetensors-{dead}-abc123"
    orphan.write_bytes(b"partial")
    live = tmp_path / f".tmp-model.safetensors-{os.getpid()}-inflight"  # a writer still alive
    live.write_bytes(b"partial")
    other = tmp_path / f".tmp-other.safetensors-{dead}-abc123"  # another target's
    other.write_bytes(b"partial")
    nn.save({"w": np.ones(1)}, path)
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["model.safetensors", live.name, other.name])


_WRITER = """
import sys, numpy as np
sys.path.insert(0, {repo!r})
import funcgrad_nn as nn
path = sys.argv[1]
i = 0
print("ready", flush=True)
while True:
    i += 1
    nn.save({{"i": np.full(1, i), "big": np.full(2_000_000, float(i))}}, path)
"""


def test_killing_a_writer_mid_save_leaves_a_loadable_checkpoint(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    nn.save({"i": np.zeros(1), "big": np.zeros(2_000_000)}, path)
    script = tmp_path / "writer.py"
    script.write_text(_WRITER.format(repo=REPO))
    rng = np.random.default_rng(0)
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, str(script), str(path)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.2 + 0.4 * rng.random())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        ck = nn.load(path)  # whole: the old one or a complete new one, never a torn file
        assert ck["big"].shape == (2_000_000,) and ck["big"][-1] == ck["i"][0]
    nn.save({"i": np.zeros(1)}, path)  # the next save removes the killed writers' temp files
    assert sorted(os.listdir(tmp_path)) == ["ckpt.safetensors", "writer.py"]


def test_map_location_and_weights_only_are_accepted(tmp_path):
    nn.save({"w": np.ones(2)}, tmp_path / "m.safetensors")
    back = nn.load(tmp_path / "m.safetensors", map_location="cpu", weights_only=True)
    assert isinstance(back["w"], np.ndarray)


@pytest.mark.parametrize("fmt", ["safetensors", "npz"])
def test_map_location_takes_torchs_forms(tmp_path, fmt):
    # torch.load's map_location: a device string or device object, a dict from the saved
    # location, a callable (storage, location) -> storage (None: the default placement)
    ck = {"w": np.arange(3.0), "opt": {"step": 2, "m": [np.ones(2, np.float32)]}}
    if fmt == "npz":
        path = tmp_path / "old.npz"
        _old_npz(path, {"t": "dict", "items": [
            ["w", {"t": "array", "i": 0}],
            ["opt", {"t": "dict", "items": [["step", {"t": "py", "v": 2}], [
                "m", {"t": "list", "items": [{"t": "array", "i": 1}]}]]}]]},
            [ck["w"], ck["opt"]["m"][0]])
    else:
        path = tmp_path / "m.safetensors"
        nn.save(ck, path)

    class Device:  # what torch.device("cpu") looks like to load: it prints as "cpu"
        def __str__(self):
            return "cpu"

    for where in ("cpu", "cpu:0", Device(), {"cpu": "cpu"}, {"cuda:0": "cpu"}):
        back = nn.load(path, map_location=where)
        assert repr(back) == repr(ck)
    seen = []

    def tag(storage, location):
        seen.append(location)
        return storage * 2

    doubled = nn.load(path, map_location=tag)
    ck_arrays = _arrays(ck)
    assert seen == ["cpu"] * len(ck_arrays)
    for got, want in zip(_arrays(doubled), ck_arrays, strict=True):
        np.testing.assert_array_equal(got, want * 2)
    assert repr(nn.load(path, map_location=lambda storage, loc: None)) == repr(ck)
    with pytest.raises(ValueError, match="unknown device"):
        nn.load(path, map_location="tpu")
    assert repr(nn.load(path, weights_only=False, mmap=True)) == repr(ck)


def _arrays(tree):
    if isinstance(tree, dict):
        return [a for v in tree.values() for a in _arrays(v)]
    if isinstance(tree, (list, tuple)):
        return [a for v in tree for a in _arrays(v)]
    return [tree] if isinstance(tree, np.ndarray) else []


def test_load_state_dict_takes_a_one_element_array_for_a_0d_buffer_as_torch():
    # torch 2.13's backward compatibility for old checkpoints: a 1-d entry for a 0-d
    # parameter or buffer gives its first element; the other way round is a size mismatch
    bn = nn.BatchNorm1d(2)
    sd = {k: np.asarray(v) for k, v in bn.state_dict().items()}
    sd["num_batches_tracked"] = np.array([7])
    assert bn.load_state_dict(sd) == ([], [])
    assert bn.num_batches_tracked.shape == () and int(bn.num_batches_tracked) == 7
    sd["running_mean"] = np.array(1.0)
    with pytest.raises(RuntimeError, match="size mismatch for running_mean"):
        bn.load_state_dict(sd)


@pytest.mark.parametrize("name", ["torch_checkpoint.pt", "torch_checkpoint_legacy.pt"])
def test_a_torch_save_checkpoint_loads_into_the_twin_model_and_optimizer(name):
    # fixtures/make_torch_checkpoint.py: torch.save of a training checkpoint (torch 2.13's
    # zip archive, and its legacy format), read without torch by a restricted reader, as
    # torch.load(weights_only=True)
    ck = nn.load(os.path.join(FIXTURES, name), map_location=DEVICE)
    assert list(ck) == ["model", "optimizer", "epoch", "x", "y", "bf16", "bf16_as_float32",
                        "tied", "strided", "device", "size", "dtype", "param", "uint32"]
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    assert isinstance(ck["model"], collections.OrderedDict)
    assert model.to(DEVICE).load_state_dict(ck["model"]) == ([], [])
    assert int(model[1].num_batches_tracked) == 2
    np.testing.assert_allclose(host(model.eval()(ck["x"])), host(ck["y"]), rtol=1e-6, atol=1e-6)
    opt = nn.optim.Adam(model.parameters(), lr=0.5)
    opt.load_state_dict(ck["optimizer"])
    assert opt.param_groups[0]["lr"] == 0.01 and float(opt.state_dict()["state"][0]["step"]) == 2
    assert ck["epoch"] == 3 and ck["device"] == "cpu" and ck["size"] == (2, 3)
    assert ck["dtype"] == np.float16
    assert ck["bf16"].dtype == np.float32 and np.array_equal(host(ck["bf16"]),
                                                              host(ck["bf16_as_float32"]))
    assert ck["tied"][0] is ck["tied"][1]  # one storage, as torch.load shares it
    assert host(ck["tied"][0]).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert host(ck["strided"]).tolist() == [1, 4, 7] and ck["strided"].dtype == np.int64
    assert ck["param"].dtype == np.float64 and host(ck["param"]).tolist() == [1.0, 1.0]
    assert ck["uint32"].dtype == np.uint32 and host(ck["uint32"]).tolist() == [2**31 + 5]


def test_a_torch_float8_tensor_is_a_checkpoint_error_naming_the_file():
    path = os.path.join(FIXTURES, "torch_checkpoint_float8.pt")
    with pytest.raises(CheckpointError, match=r"torch_checkpoint_float8\.pt.*torch\.float8_e4m3fn"
                       r", which NumPy cannot hold"):
        nn.load(path)


def _torch_zip(path, pickled):
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("model/data.pkl", pickled)
        z.writestr("model/version", b"3\n")


def test_a_torch_checkpoint_naming_other_globals_is_refused_without_running_them(tmp_path):
    # torch.save(model) pickles the module's class; a crafted file names os.system: neither is
    # called (torch.load(weights_only=True) refuses both too)
    marker = tmp_path / "ran"
    _torch_zip(tmp_path / "evil.pt", b"cos\nsystem\n(S'touch " + str(marker).encode()
               + b"'\ntR.")
    with pytest.raises(CheckpointError, match=r"names os\.system.*state_dict"):
        nn.load(tmp_path / "evil.pt")
    assert not marker.exists()
    _torch_zip(tmp_path / "model.pt", b"\x80\x02ctorch.nn.modules.linear\nLinear\n)\x81.")
    with pytest.raises(CheckpointError, match=r"torch\.nn\.modules\.linear\.Linear"):
        nn.load(tmp_path / "model.pt")
    _torch_zip(tmp_path / "cut.pt", b"\x80\x02}q\x00X\x01")
    with pytest.raises(CheckpointError, match=r"corrupt PyTorch checkpoint"):
        nn.load(tmp_path / "cut.pt")


def test_weights_only_false_loads_other_objects_as_stand_ins_without_running_them(tmp_path):
    # torch.save({"args": argparse.Namespace(...), "acc": np.float64, ...}): the default
    # refuses the Namespace, as torch.load(weights_only=True); weights_only=False gives a
    # stand-in (its class never imported nor called); NumPy scalars and arrays load as such
    import argparse
    import pickle

    from funcgrad_nn.serialization import UnpickledObject

    obj = {"args": argparse.Namespace(lr=0.1, name="run"), "acc": np.float64(0.5),
           "hist": np.arange(3)}
    _torch_zip(tmp_path / "misc.pt", pickle.dumps(obj, protocol=2))
    with pytest.raises(CheckpointError, match=r"names argparse\.Namespace.*weights_only=False"):
        nn.load(tmp_path / "misc.pt")
    with pytest.warns(UserWarning, match=r"argparse\.Namespace\): they load as UnpickledObject"):
        ck = nn.load(tmp_path / "misc.pt", weights_only=False)
    assert isinstance(ck["args"], UnpickledObject) and ck["args"].path == "argparse.Namespace"
    assert (ck["args"].lr, ck["args"].name) == (0.1, "run")
    assert type(ck["acc"]) is np.float64 and ck["acc"] == 0.5
    assert host(ck["hist"]).tolist() == [0, 1, 2]
    marker = tmp_path / "ran"
    _torch_zip(tmp_path / "evil.pt", b"cos\nsystem\n(S'touch " + str(marker).encode()
               + b"'\ntR.")
    with pytest.warns(UserWarning, match=r"os\.system"):
        stand_in = nn.load(tmp_path / "evil.pt", weights_only=False)
    assert not marker.exists() and stand_in.path == "os.system"
    assert stand_in.args == (f"touch {marker}",)


def test_a_plain_pickle_gets_a_clear_error_naming_the_conversion(tmp_path):
    # pickle.dump's file is never unpickled; a legacy torch.save file cut short is corrupt
    import pickle

    data = pickle.dumps({"a": [1.0]})
    (tmp_path / "dump.pkl").write_bytes(data)
    with pytest.raises(CheckpointError, match=r"plain pickle checkpoint.*safetensors.torch"):
        nn.load(tmp_path / "dump.pkl")
    with pytest.raises(CheckpointError, match=r"plain pickle checkpoint"):
        nn.load(io.BytesIO(data))
    legacy = open(os.path.join(FIXTURES, "torch_checkpoint_legacy.pt"), "rb").read()
    with pytest.raises(CheckpointError, match=r"truncated|corrupt"):
        nn.load(io.BytesIO(legacy[:-100]))
    with pytest.raises(CheckpointError, match=r"truncated|corrupt"):
        nn.load(io.BytesIO(legacy[:200]))


def test_saving_a_module_or_optimizer_inside_a_checkpoint_names_the_state_dict_fix():
    # torch.save({"model": model}) pickles the module; here its state_dict() is the way
    model = nn.Linear(2, 2)
    for obj, where in (({"model": model}, "'model'"),
                       ([nn.optim.SGD(model.parameters(), lr=0.1)], "'0'")):
        with pytest.raises(TypeError, match=f"at {where} .*save its state_dict\\(\\) instead"):
            nn.save(obj, io.BytesIO())


def test_an_array_saved_under_two_keys_loads_as_one_object_as_torch(tmp_path):
    # torch.load gives tensors saved twice (tied weights, the same tensor in two places)
    # back sharing their storage; here the same array object comes back for both keys, while
    # the plain safetensors file still holds every key for other readers
    w, other = np.arange(6.0).reshape(2, 3), np.ones(2, np.float32)
    obj = {"enc": {"weight": w}, "dec": [w, other], "copy": w.copy(), "again": other}
    path = tmp_path / "tied.safetensors"
    nn.save(obj, path)
    back = nn.load(path, map_location=lambda storage, loc: storage.copy())
    assert back["enc"]["weight"] is back["dec"][0] and back["dec"][1] is back["again"]
    assert back["copy"] is not back["enc"]["weight"]
    np.testing.assert_array_equal(back["dec"][0], w)
    assert sorted(safetensors.numpy.load_file(str(path))) == [
        "again", "copy", "dec.0", "dec.1", "enc.weight"]


class _TiedLM(nn.Module):
    """An embedding shared with the output layer, as GPT-2's wte / lm_head."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(5, 3)
        self.ln = nn.LayerNorm(3)
        self.head = nn.Linear(3, 5, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, i):
        return self.head(self.ln(self.wte(i)))


def test_load_model_fills_tied_parameters_from_a_pytorch_save_model_file(tmp_path):
    from funcgrad_nn.serialization import load_model

    # What safetensors.torch.save_model writes for the PyTorch twin of _TiedLM: the tied
    # array once, under its first name in sorted order, the dropped name in the metadata.
    rng = np.random.default_rng(0)
    weights = {"head.weight": rng.normal(size=(5, 3)).astype(np.float32),
               "ln.bias": np.zeros(3, np.float32), "ln.weight": np.ones(3, np.float32)}
    path = str(tmp_path / "torch.safetensors")
    safetensors.numpy.save_file(weights, path, metadata={"wte.weight": "head.weight"})
    model = _TiedLM()
    with pytest.raises(RuntimeError, match='Missing key.*"wte.weight"'):
        model.load_state_dict(nn.load(path))  # as torch's load_state_dict
    assert load_model(model, path) == (set(), [])
    assert model.head.weight is model.wte.weight
    assert np.array_equal(nn.load(path)["head.weight"], np.asarray(model.wte.weight))
    # safetensors.torch.load_model's answers for a model without those names, and for a
    # file holding both names of the tied array
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "wte.weight"\n'
                                           '    Unexpected key\\(s\\) in state_dict: '
                                           '"head.weight", "ln.bias", "ln.weight"'):
        load_model(_OnlyEmbedding(), path)
    assert load_model(_OnlyEmbedding(), path, strict=False) == (
        {"wte.weight"}, ["head.weight", "ln.bias", "ln.weight"])
    both = str(tmp_path / "both.safetensors")
    safetensors.numpy.save_file({**weights, "wte.weight": weights["head.weight"]}, both)
    assert load_model(_TiedLM(), both, strict=False) == (set(), ["wte.weight"])


class _OnlyEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(5, 3)


def test_save_model_stores_a_tied_parameter_once(tmp_path):
    from funcgrad_nn.serialization import load_model, save_model

    model = _TiedLM()
    path = str(tmp_path / "lm.safetensors")
    save_model(model, path, metadata={"note": "mine", "wte.weight": "kept by the caller"})
    with safetensors.safe_open(path, "np") as f:
        assert sorted(f.keys()) == ["head.weight", "ln.bias", "ln.weight"]
        meta = f.metadata()
    assert meta["note"] == "mine" and meta["wte.weight"] == "kept by the caller"
    twin = _TiedLM()
    assert load_model(twin, path) == (set(), [])
    i = np.array([0, 3, 4])
    assert np.array_equal(np.asarray(twin(i)), np.asarray(model(i)))
    with pytest.raises(TypeError, match="metadata must map str to str"):
        save_model(model, path, metadata={"n": 1})
    # safetensors.torch.save_model's 4th parameter (a TypeError here before)
    save_model(model, path, None, True)
    assert load_model(_TiedLM(), path) == (set(), [])


def test_torch_save_and_load_arguments_are_accepted(tmp_path):
    # torch.save(obj, f, pickle_module, pickle_protocol, ...) and torch.load(f, map_location,
    # pickle_module, *, weights_only, mmap, **pickle_load_args): a ported call passing
    # pickle_protocol=4 or encoding="latin1" raised TypeError; a pickle_module is refused
    path = tmp_path / "s.safetensors"
    nn.save({"w": np.ones(2)}, path, pickle_protocol=4, _use_new_zipfile_serialization=True)
    out = nn.load(path, map_location="cpu", weights_only=False, encoding="latin1")
    np.testing.assert_array_equal(out["w"], np.ones(2))
    import pickle

    with pytest.raises(TypeError, match="never pickles"):
        nn.save({"w": np.ones(2)}, path, pickle)
    with pytest.raises(TypeError, match="never unpickles"):
        nn.load(path, None, pickle)


def test_save_file_and_load_file_as_safetensors_torch(tmp_path):
    # safetensors.torch's save_file/load_file twins: a flat dict with str metadata; the torch
    # fixture (fixtures/make_torch_safetensors.py, safetensors.torch.save_file) loads as a
    # flat dict, bfloat16 as its exact float32 values
    from funcgrad_nn.serialization import load_file, save_file

    path = str(tmp_path / "w.safetensors")
    w = dev(np.arange(6, dtype=np.float32).reshape(2, 3))
    save_file({"w": w, "i": dev(np.array([1, 2], np.int64))}, path,
              metadata={"step": "3", "format": "np"})
    out = load_file(path)
    assert sorted(out) == ["i", "w"] and out["w"].dtype == np.float32
    np.testing.assert_array_equal(host(out["w"]), host(w))
    with safetensors.safe_open(path, "numpy") as f:
        assert f.metadata()["step"] == "3" and f.metadata()["format"] == "np"  # the caller's
        np.testing.assert_array_equal(f.get_tensor("i"), [1, 2])
    dtypes = load_file(os.path.join(FIXTURES, "torch_dtypes.safetensors"))
    np.testing.assert_array_equal(host(dtypes["bfloat16"]), host(dtypes["bfloat16_as_float32"]))
    with pytest.raises(TypeError, match="not an array"):
        save_file({"w": w, "step": 3}, path)
    with pytest.raises(TypeError, match="metadata must map str to str"):
        save_file({"w": w}, path, metadata={"step": 3})
    nn.save({"model": {"w": w}, "epoch": 2}, path)
    with pytest.raises(CheckpointError, match="nested state"):
        load_file(path)
