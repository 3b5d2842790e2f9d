"""Data-loading cases run on both ``torch.utils.data`` and ``funcgrad_nn.data``.

Each case is ``fn(data, array)`` (``array(numpy_array)`` makes that library's array) and
returns :func:`describe` of its result (arrays as kind, dtype, shape and values; containers
by type). ``fixtures/make_data_fixtures.py`` (needs torch) stores torch's results in
``fixtures/data_parity.json``; ``test_data_parity.py`` compares funcgrad_nn.data with them.
"""

import collections

import numpy as np

Pair = collections.namedtuple("Pair", "a b")


def describe(x):
    if hasattr(x, "dtype") and hasattr(x, "shape") and hasattr(x, "tolist") \
            and not isinstance(x, np.generic):
        return ["array", str(x.dtype).replace("torch.", ""), list(x.shape), x.tolist()]
    if isinstance(x, dict):
        return ["dict", type(x).__name__, {k: describe(v) for k, v in x.items()}]
    if isinstance(x, (list, tuple)):
        kind = type(x).__name__ if not hasattr(x, "_fields") else "namedtuple"
        return [kind, [describe(v) for v in x]]
    if isinstance(x, np.generic):
        return ["numpy scalar", str(x.dtype), x.item()]
    return [type(x).__name__, x.decode() if isinstance(x, bytes) else x]


_SAMPLES = {
    "ints": [1, 2, 3],
    "floats": [1.0, 2.5],
    "bools": [True, False],
    "strings": ["a", "b"],
    "f32_arrays": [np.zeros(2, np.float32), np.ones(2, np.float32)],
    "i32_arrays": [np.zeros(2, np.int32), np.ones(2, np.int32)],
    "f64_scalars": [np.float64(1), np.float64(2)],
    "f32_scalars": [np.float32(1), np.float32(2)],
    "i16_scalars": [np.int16(1), np.int16(2)],
    "bool_arrays": [np.array([True]), np.array([False])],
    "zero_d_arrays": [np.array(1.0), np.array(2.0)],
    "dicts": [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}],
    "tuples": [(1, 2.0), (3, 4.0)],
    "lists": [[1, 2], [3, 4]],
    "namedtuples": [Pair(1, 2.0), Pair(3, 4.0)],
    "nested": [{"a": (np.zeros(2), [1, "x"])}, {"a": (np.ones(2), [2, "y"])}],
    "ordered_dicts": [collections.OrderedDict(b=1, a=2), collections.OrderedDict(b=3, a=4)],
    "bytes": [b"a", b"b"],
}

CASES = {}
for _name, _batch in _SAMPLES.items():
    CASES["collate_" + _name] = (lambda b: lambda data, array: describe(
        data.default_collate(b)))(_batch)
    CASES["convert_" + _name] = (lambda b: lambda data, array: describe(
        data.default_convert(b[0])))(_batch)
CASES["collate_none"] = lambda data, array: data.default_collate([None, None])
CASES["collate_ragged_arrays"] = lambda data, array: data.default_collate(
    [np.zeros(2), np.zeros(3)])
CASES["collate_ragged_lists"] = lambda data, array: data.default_collate([[1, 2], [3]])


def _tensor_dataset(data, array):
    return data.TensorDataset(array(np.arange(10.0, dtype=np.float32).reshape(10, 1)),
                              array(np.arange(10)))


for _kw in [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
            {"batch_size": 4, "num_workers": 2}, {"batch_size": None, "num_workers": 2},
            {"batch_size": 20, "drop_last": True}]:
    _key = "loader_" + "_".join(f"{k}={v}" for k, v in _kw.items())
    CASES[_key] = (lambda kw: lambda data, array: [
        describe(b) for b in data.DataLoader(_tensor_dataset(data, array), **kw)])(_kw)
    CASES[_key + "_len"] = (lambda kw: lambda data, array: len(
        data.DataLoader(_tensor_dataset(data, array), **kw)))(_kw)
CASES["loader_dict_samples"] = lambda data, array: [describe(b) for b in data.DataLoader(
    [{"a": i, "b": float(i)} for i in range(4)], batch_size=2)]
CASES["tensor_dataset_size_mismatch"] = lambda data, array: data.TensorDataset(
    array(np.zeros(3)), array(np.zeros(4)))
CASES["concat_dataset_empty"] = lambda data, array: data.ConcatDataset([])
CASES["weighted_negative"] = lambda data, array: list(data.WeightedRandomSampler(
    [-1, 1, 1.0], 2))
CASES["weighted_too_many_without_replacement"] = lambda data, array: list(
    data.WeightedRandomSampler([1, 1, 1.0], 5, replacement=False))


def run_case(fn, data, array):
    """The case's result, or ``{"raises": ExceptionTypeName}``."""
    try:
        return {"value": fn(data, array)}
    except Exception as e:  # noqa: BLE001 - the exception type is the result
        return {"raises": type(e).__name__}
