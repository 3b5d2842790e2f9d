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
    # torch.tensor(batch) infers the dtype from every sample, not the first one
    "int_then_float": [1, 2.5],
    "bool_then_int": [True, 2],
    "bool_then_float": [True, 2.5],
    "int_then_f64_scalar": [1, np.float64(2.5)],
    "int_then_f32_scalar": [1, np.float32(2.5)],
    "float_then_int": [2.5, 1],
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
CASES["collate_empty"] = lambda data, array: data.default_collate([])
CASES["collate_int_then_str"] = lambda data, array: data.default_collate([1, "a"])
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


class _Batched:
    """A map-style dataset that also fetches whole batches (``__getitems__``)."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"how": "one", "i": i}

    def __getitems__(self, indices):
        return [{"how": "batch", "i": i} for i in indices]


def _batched_loader(data, **kw):
    return [describe(b) for b in data.DataLoader(_Batched(), **kw)]


CASES["loader_getitems"] = lambda data, array: _batched_loader(data, batch_size=2)
CASES["loader_getitems_no_batching"] = lambda data, array: _batched_loader(data, batch_size=None)
CASES["loader_getitems_subset"] = lambda data, array: [describe(b) for b in data.DataLoader(
    data.Subset(_Batched(), [4, 0, 2]), batch_size=2)]
CASES["loader_getitems_stack"] = lambda data, array: [describe(b) for b in data.DataLoader(
    data.StackDataset(_Batched(), [10, 20, 30, 40, 50]), batch_size=3)]
CASES["subset_getitems"] = lambda data, array: describe(
    data.Subset([10, 20, 30], [2, 0]).__getitems__([0, 1]))
CASES["stack_getitems_tuple"] = lambda data, array: describe(
    data.StackDataset([1, 2], "ab").__getitems__([1, 0]))
CASES["stack_getitems_dict"] = lambda data, array: describe(
    data.StackDataset(x=_Batched(), y="abcde").__getitems__([3, 1]))
CASES["loader_context_without_workers"] = lambda data, array: data.DataLoader(
    [1, 2], multiprocessing_context="spawn")
CASES["loader_context_bogus"] = lambda data, array: data.DataLoader(
    [1, 2], num_workers=1, multiprocessing_context="bogus")
CASES["loader_context_not_a_context"] = lambda data, array: data.DataLoader(
    [1, 2], num_workers=1, multiprocessing_context=3)
CASES["loader_timeout_without_workers"] = lambda data, array: list(data.DataLoader(
    [1, 2], timeout=1.0))
CASES["loader_float_workers"] = lambda data, array: list(data.DataLoader(
    [1, 2], num_workers=1.0))
CASES["loader_prefetch_zero"] = lambda data, array: list(data.DataLoader(
    [1, 2], num_workers=1, prefetch_factor=0))
CASES["concat_dataset_iterable"] = lambda data, array: data.ConcatDataset([_Count(data)])
CASES["chain_dataset_map_style"] = lambda data, array: list(data.ChainDataset([[1, 2]]))
CASES["distributed_sampler_no_group"] = lambda data, array: data.DistributedSampler(
    range(4), rank=0)


def _Count(data):
    class Count(data.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    return Count()


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
