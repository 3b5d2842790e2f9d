"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``.

A :class:`PackedSequence` stores the steps of a batch of sequences of different lengths
time-major and without padding: first the first step of every sequence (longest sequence
first), then the second step of those that have one, and so on; ``batch_sizes[t]`` says how
many sequences have a step ``t``. The recurrent layers accept one and return one (their
final states are those at each sequence's own last step). The lengths are static (host
values), the data may be traced: packing is a gather, so it is differentiable and jit-able.

>>> import numpy as np
>>> from funcgrad_nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
>>> x = np.arange(6.0).reshape(3, 2)            # (T=3, batch=2), second sequence has 2 steps
>>> p = pack_padded_sequence(x, [3, 2])
>>> p.data.tolist(), p.batch_sizes.tolist()
([0.0, 1.0, 2.0, 3.0, 4.0], [2, 2, 1])
>>> y, lengths = pad_packed_sequence(p)
>>> y.tolist(), lengths.tolist()
([[0.0, 1.0], [2.0, 3.0], [4.0, 0.0]], [3, 2])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.core import is_tracer
from funcgrad_nn import functional as F
from funcgrad_nn.module import BadInputError

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "packed_positions", "padded_index", "unpack_sequence",
           "unpad_sequence"]


class PackedSequence:
    """Packed steps of variable-length sequences (see the module docstring).

    Fields as PyTorch's: ``data`` ``(sum(lengths), *)``, ``batch_sizes`` (int64, one per
    step), ``sorted_indices`` / ``unsorted_indices`` (int64 permutations between the caller's
    batch order and longest-first order; ``None`` when the batch was already sorted). It
    unpacks like PyTorch's namedtuple and is a pytree whose only leaf is ``data``.

    >>> import numpy as np
    >>> p = pack_sequence([np.ones(1), np.ones(3)], enforce_sorted=False)
    >>> p.batch_sizes.tolist(), p.sorted_indices.tolist(), p.unsorted_indices.tolist()
    ([2, 1, 1], [1, 0], [1, 0])
    """

    __slots__ = ("_batch_sizes", "_sorted", "_unsorted", "data")
    #: the namedtuple's field names, as PyTorch's (code iterates them to rebuild one)
    _fields = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")

    def __init__(self, data: Any, batch_sizes: Any, sorted_indices: Any = None,
                 unsorted_indices: Any = None) -> None:
        if is_tracer(batch_sizes) or is_tracer(sorted_indices) or is_tracer(unsorted_indices):
            raise TypeError("PackedSequence: batch_sizes and the indices must be concrete "
                            "(host) integers, not traced values: under jit (nn.jit, or "
                            "Trainer/fit, which compile the step by default) run eagerly "
                            "(Trainer(..., jit=False)) or give the recurrent layer the "
                            "padded batch and lengths= instead of a PackedSequence")
        self.data = data
        self._batch_sizes = tuple(int(b) for b in numpy.asarray(batch_sizes).reshape(-1))
        if sorted_indices is not None and unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        self._sorted = _int_tuple(sorted_indices)
        self._unsorted = _int_tuple(unsorted_indices)

    @property
    def batch_sizes(self) -> numpy.ndarray:
        return numpy.array(self._batch_sizes, dtype=numpy.int64)

    @property
    def sorted_indices(self) -> numpy.ndarray | None:
        return None if self._sorted is None else numpy.array(self._sorted, numpy.int64)

    @property
    def unsorted_indices(self) -> numpy.ndarray | None:
        return None if self._unsorted is None else numpy.array(self._unsorted, numpy.int64)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.data, self.batch_sizes, self.sorted_indices, self.unsorted_indices))

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> Any:
        return tuple(self)[i]

    def _asdict(self) -> dict[str, Any]:
        """The fields by name, as PyTorch's namedtuple ``_asdict``.

        >>> import numpy as np
        >>> list(pack_sequence([np.ones(2), np.ones(1)])._asdict())
        ['data', 'batch_sizes', 'sorted_indices', 'unsorted_indices']
        """
        return dict(zip(self._fields, self))

    def to(self, device: str | None = None, dtype: Any = None) -> PackedSequence:
        """A PackedSequence with ``data`` moved to ``device`` and/or cast to ``dtype`` (the
        indices stay host integers); ``to(dtype)`` works too, as PyTorch's.

        >>> import numpy as np
        >>> pack_sequence([np.ones(2), np.ones(1)]).to(np.float32).data.dtype
        dtype('float32')
        """
        if device is not None and not isinstance(device, str):
            dtype, device = device, None
        data = self.data
        if device is not None:
            data = funcgrad.device_put(data, device)
        if dtype is not None:
            data = data.astype(numpy.dtype(dtype))
        return PackedSequence(data, self._batch_sizes, self._sorted, self._unsorted)

    def cpu(self) -> PackedSequence:
        """``to("cpu")``."""
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> PackedSequence:
        """``to("cuda")`` (needs CuPy)."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    def double(self) -> PackedSequence:
        """``data`` as float64."""
        return self.to(dtype=numpy.float64)

    def float(self) -> PackedSequence:
        """``data`` as float32."""
        return self.to(dtype=numpy.float32)

    def half(self) -> PackedSequence:
        """``data`` as float16."""
        return self.to(dtype=numpy.float16)

    def byte(self) -> PackedSequence:
        """``data`` as uint8."""
        return self.to(dtype=numpy.uint8)

    def char(self) -> PackedSequence:
        """``data`` as int8."""
        return self.to(dtype=numpy.int8)

    def short(self) -> PackedSequence:
        """``data`` as int16."""
        return self.to(dtype=numpy.int16)

    def int(self) -> PackedSequence:
        """``data`` as int32."""
        return self.to(dtype=numpy.int32)

    def long(self) -> PackedSequence:
        """``data`` as int64, as PyTorch's ``PackedSequence.long()``.

        >>> import numpy as np
        >>> pack_sequence([np.ones(2), np.ones(1)]).long().data.dtype
        dtype('int64')
        """
        return self.to(dtype=numpy.int64)

    def is_pinned(self) -> bool:
        """False: there is no pinned host memory here."""
        return False

    def _replace(self, **fields: Any) -> PackedSequence:
        """A copy with some fields replaced, as PyTorch's namedtuple ``_replace``
        (``packed._replace(data=dropout(packed.data))``).

        >>> import numpy as np
        >>> p = pack_sequence([np.ones(2), np.ones(1)])
        >>> p._replace(data=p.data * 2).data.tolist()
        [2.0, 2.0, 2.0]
        """
        unknown = set(fields) - {"data", "batch_sizes", "sorted_indices", "unsorted_indices"}
        if unknown:
            raise ValueError(f"Got unexpected field names: {sorted(unknown)!r}")
        return PackedSequence(fields.get("data", self.data),
                              fields.get("batch_sizes", self._batch_sizes),
                              fields.get("sorted_indices", self._sorted),
                              fields.get("unsorted_indices", self._unsorted))

    @property
    def is_cuda(self) -> bool:
        return funcgrad.backend.device_of(self.data) not in (None, "cpu", "strict")

    def lengths(self) -> numpy.ndarray:
        """Each sequence's length, in the caller's batch order.

        >>> import numpy as np
        >>> pack_sequence([np.ones(1), np.ones(3)], enforce_sorted=False).lengths().tolist()
        [1, 3]
        """
        bs = numpy.array(self._batch_sizes, numpy.int64)
        n = int(bs[0]) if bs.size else 0
        by_rank = (bs[None, :] > numpy.arange(n)[:, None]).sum(axis=1)  # longest first
        order = numpy.arange(n) if self._sorted is None else numpy.array(self._sorted)
        out = numpy.empty(n, numpy.int64)
        out[order] = by_rank
        return out

    def __repr__(self) -> str:
        return (f"PackedSequence(data=<shape {tuple(self.data.shape)}>, "
                f"batch_sizes={list(self._batch_sizes)}, sorted_indices={self._sorted}, "
                f"unsorted_indices={self._unsorted})")


def _int_tuple(x: Any) -> tuple[int, ...] | None:
    if x is None:
        return None
    return tuple(int(i) for i in numpy.asarray(x).reshape(-1))


tree_util.register_pytree_node(
    PackedSequence,
    lambda p: ([p.data], (p._batch_sizes, p._sorted, p._unsorted)),
    lambda aux, ch: PackedSequence(ch[0], *aux),
)


def _host_lengths(lengths: Any, fname: str) -> numpy.ndarray:
    # A list of Python ints passed through jit arrives as a list of traced scalars.
    if is_tracer(lengths) or (isinstance(lengths, (list, tuple))
                              and any(is_tracer(v) for v in lengths)):
        raise TypeError(f"{fname}: lengths must be concrete host integers (a list or a NumPy "
                        "array), not a traced value: they fix the shapes of the packed data. "
                        "Under jit (nn.jit, or Trainer/fit, which compile the step by "
                        "default), either run eagerly (Trainer(..., jit=False), "
                        "fit(..., jit=False)) or pack outside the jitted function, or give "
                        "the recurrent layer the padded batch and lengths= instead of "
                        "packing (traced lengths are fine there: one compiled program)")
    lens = numpy.asarray(funcgrad.to_numpy(lengths) if hasattr(lengths, "shape") else lengths)
    # whole-numbered floats (a float lengths tensor) are counts too, as PyTorch casts them;
    # a fractional one is refused rather than truncated
    integral = lens.dtype.kind in "iu" or (
        lens.dtype.kind == "f" and bool(numpy.all(numpy.floor(lens) == lens)))
    if lens.ndim != 1 or (lens.size and not integral):
        raise ValueError(f"{fname}: lengths must be a 1-D sequence of integers, got "
                         f"{lens.dtype} array of shape {lens.shape}"
                         + (f" with values {lens.tolist()}" if lens.ndim == 1 else ""))
    return lens.astype(numpy.int64)


def _packed_positions(lens: numpy.ndarray, order: numpy.ndarray) -> tuple[numpy.ndarray,
                                                                           numpy.ndarray]:
    """Time and batch index (caller's order) of each packed row, and the batch sizes."""
    sorted_lens = lens[order]
    t_max = int(sorted_lens[0]) if lens.size else 0
    batch_sizes = (sorted_lens[None, :] > numpy.arange(t_max)[:, None]).sum(axis=1)
    ts = numpy.repeat(numpy.arange(t_max), batch_sizes)
    bs = numpy.concatenate([order[:k] for k in batch_sizes]) if t_max else numpy.zeros(0, int)
    return numpy.stack([ts, bs]).astype(numpy.int64), batch_sizes.astype(numpy.int64)


def pack_padded_sequence(input: Any, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    with the given lengths.

    With ``enforce_sorted`` (the default) the lengths must be in decreasing order; pass
    ``enforce_sorted=False`` to have them sorted (stably) for you.

    >>> import numpy as np
    >>> p = pack_padded_sequence(np.ones((2, 4, 3)), [2, 4], batch_first=True,
    ...                          enforce_sorted=False)
    >>> p.data.shape, p.batch_sizes.tolist(), p.sorted_indices.tolist()
    ((6, 3), [2, 2, 1, 1], [1, 0])
    """
    fname = "pack_padded_sequence"
    lens = _host_lengths(lengths, fname)
    if input.ndim < 2:
        raise ValueError(f"{fname}: input must be at least 2-D ((T, B, *) or (B, T, *) with "
                         f"batch_first), got shape {tuple(input.shape)}")
    b_axis = 0 if batch_first else 1
    t_len, n = input.shape[1 - b_axis], input.shape[b_axis]
    if lens.shape[0] != n:
        raise ValueError(f"{fname}: expected {n} lengths (the batch size of input shape "
                         f"{tuple(input.shape)}), got {lens.shape[0]}")
    if n and lens.min() <= 0:
        raise RuntimeError(f"{fname}: Length of all samples has to be greater than 0, but "
                           f"got lengths {lens.tolist()}")
    if n and lens.max() > t_len:
        raise ValueError(f"{fname}: a length ({int(lens.max())}) exceeds the padded sequence "
                         f"length {t_len} of input shape {tuple(input.shape)}")
    if enforce_sorted:
        if numpy.any(numpy.diff(lens) > 0):
            raise RuntimeError(
                f"{fname}: `lengths` array must be sorted in decreasing order when "
                f"`enforce_sorted` is True (got {lens.tolist()}). You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                "sidestep this requirement if you do not need ONNX exportability.")
        order, sorted_indices = numpy.arange(n), None
    else:
        order = numpy.argsort(-lens, kind="stable")
        sorted_indices = order
    (ts, bs), batch_sizes = _packed_positions(lens, order)
    ts, bs = F._on_device_of(ts, input), F._on_device_of(bs, input)
    if batch_first:
        data = input[bs, ts] if ts.size else input[:0, 0]
    else:
        data = input[ts, bs] if ts.size else input[0, :0]
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Any, numpy.ndarray]:
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)`` in the caller's batch order,
    padded with ``padding_value`` to the longest length (or ``total_length``).

    >>> import numpy as np
    >>> p = pack_sequence([np.ones(2), np.ones(1)])
    >>> y, lens = pad_packed_sequence(p, batch_first=True, padding_value=-1.0, total_length=3)
    >>> y.tolist(), lens.tolist()
    ([[1.0, 1.0, -1.0], [1.0, -1.0, -1.0]], [2, 1])
    """
    fname = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{fname}: expected a PackedSequence, got {type(sequence).__name__}")
    lens = sequence.lengths()
    t_max = len(sequence._batch_sizes)
    if total_length is not None:
        if total_length < t_max:
            raise ValueError(f"{fname}: Expected total_length to be at least the length of "
                             f"the longest sequence in input, but got total_length="
                             f"{total_length} and max sequence length being {t_max}")
        t_max = total_length
    data = sequence.data
    idx = F._on_device_of(padded_index(sequence, t_max), data)
    pad = fnp.full_like(data, padding_value, shape=(1,) + tuple(data.shape[1:]))
    out = fnp.concatenate([data, pad], axis=0)[idx]
    if batch_first:
        out = fnp.swapaxes(out, 0, 1)
    return out, lens


def padded_index(sequence: PackedSequence, t_max: int) -> numpy.ndarray:
    """``(t_max, B)`` rows of ``sequence.data`` for each padded (step, batch) slot; the index
    ``len(data)`` marks padding (callers append a padding row).

    >>> import numpy as np
    >>> padded_index(pack_sequence([np.ones(2), np.ones(1)]), 3).tolist()
    [[0, 1], [2, 3], [3, 3]]
    """
    lens = sequence.lengths()
    n = lens.shape[0]
    order = numpy.arange(n) if sequence._sorted is None else numpy.array(sequence._sorted)
    (ts, bs), _ = _packed_positions(lens, order)
    idx = numpy.full((t_max, n), ts.shape[0], numpy.int64)
    idx[ts, bs] = numpy.arange(ts.shape[0])
    return idx


def packed_positions(sequence: PackedSequence) -> tuple[numpy.ndarray, numpy.ndarray]:
    """(step, batch index in caller's order) of each row of ``sequence.data``.

    >>> import numpy as np
    >>> [a.tolist() for a in packed_positions(pack_sequence([np.ones(1), np.ones(2)], False))]
    [[0, 0, 1], [1, 0, 1]]
    """
    lens = sequence.lengths()
    order = numpy.arange(lens.shape[0]) if sequence._sorted is None else \
        numpy.array(sequence._sorted)
    (ts, bs), _ = _packed_positions(lens, order)
    return ts, bs


def invert_permutation(permutation: Any) -> numpy.ndarray | None:
    """The inverse of a permutation of ``0..n-1`` (``None`` stays ``None``), int64, as
    ``torch.nn.utils.rnn.invert_permutation`` (how ``unsorted_indices`` is made).

    >>> invert_permutation([2, 0, 1]).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    perm = numpy.asarray(funcgrad.to_numpy(permutation) if hasattr(permutation, "shape")
                         else permutation).astype(numpy.int64)
    out = numpy.empty_like(perm)
    out[perm] = numpy.arange(perm.shape[0], dtype=numpy.int64)
    return out


def pad_sequence(sequences: Sequence[Any], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Any:
    """Stack sequences ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``),
    padding each with ``padding_value`` on ``padding_side`` ("right" or "left"). The result
    has the first sequence's dtype, as PyTorch's.

    >>> import numpy as np
    >>> pad_sequence([np.ones(2), np.ones(1)], batch_first=True).tolist()
    [[1.0, 1.0], [1.0, 0.0]]
    """
    # the errors are BadInputError: ValueError, and RuntimeError as PyTorch raises here
    fname = "pad_sequence"
    if padding_side not in ("right", "left"):
        raise BadInputError(f"{fname}: padding_side must be 'left' or 'right', got "
                            f"{padding_side!r}")
    seqs = list(sequences)
    if not seqs:
        raise BadInputError(f"{fname}: received an empty list of sequences")
    trailing = tuple(seqs[0].shape[1:])
    for i, s in enumerate(seqs):
        if s.ndim < 1 or tuple(s.shape[1:]) != trailing:
            raise BadInputError(f"{fname}: all sequences must have the same trailing shape "
                                f"{trailing}, but sequence {i} has shape {tuple(s.shape)}")
    t_max = max(s.shape[0] for s in seqs)
    dtype = seqs[0].dtype  # as PyTorch: the first sequence's dtype, the others cast to it
    padded = []
    for s in seqs:
        extra = t_max - s.shape[0]
        width = [(0, extra) if padding_side == "right" else (extra, 0)] + \
            [(0, 0)] * len(trailing)
        padded.append(fnp.pad(fnp.asarray(s).astype(dtype), width,
                              constant_values=padding_value))
    return fnp.stack(padded, axis=0 if batch_first else 1)


def unpad_sequence(padded_sequences: Any, lengths: Any, batch_first: bool = False
                   ) -> list[Any]:
    """Split a padded batch back into a list of sequences of the given lengths.

    >>> import numpy as np
    >>> [s.tolist() for s in unpad_sequence(np.arange(4.0).reshape(2, 2), [2, 1])]
    [[0.0, 2.0], [1.0]]
    """
    lens = _host_lengths(lengths, "unpad_sequence")
    x = padded_sequences if batch_first else fnp.swapaxes(padded_sequences, 0, 1)
    return [x[i, :int(n)] for i, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Any], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (longest first unless ``enforce_sorted=False``).

    >>> import numpy as np
    >>> pack_sequence([np.arange(3.0), np.arange(2.0)]).data.tolist()
    [0.0, 0.0, 1.0, 1.0, 2.0]
    """
    lens = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lens, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Any]:
    """The list of sequences in a :class:`PackedSequence` (caller's order).

    >>> import numpy as np
    >>> [s.tolist() for s in unpack_sequence(pack_sequence([np.ones(1), np.ones(2)], False))]
    [[1.0], [1.0, 1.0]]
    """
    padded, lens = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lens, batch_first=True)
