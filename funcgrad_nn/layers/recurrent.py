"""Recurrent layers as ``torch.nn``: RNN, LSTM (with ``proj_size``), GRU and their cells.

PyTorch's parameter names, layouts, gate order (LSTM i, f, g, o; GRU r, z, n with the reset
gate applied to ``W_hn h + b_hn``), default init U(-1/sqrt(hidden), 1/sqrt(hidden)) and
return values. Each layer and direction runs as one :func:`funcgrad.scan` over time: the
input projection of all steps is one matrix product before the loop, the loop body holds
only the recurrent product and the gates, so ``jit`` compiles one loop and reverse mode
keeps O(T) residuals. Variable lengths: pass a
:class:`~funcgrad_nn.utils.rnn.PackedSequence`; each sequence's final state is taken at its
own last step (a masked scan).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn._convolution import dtype_mismatch
from funcgrad_nn.amp import autocast_inputs, casts
from funcgrad_nn.init import default_generator
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.module import BadInputError, Module, Parameter, bad_input
from funcgrad_nn.utils.rnn import PackedSequence, packed_positions, padded_index

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]


def _check_dtype(mod: Module, x: Any) -> None:
    """An integer/bool input to a floating RNN is refused, as PyTorch (its ValueError "RNN
    input dtype (torch.int64) does not match weight dtype"); the scan would fail obscurely.
    Under autocast a floating input meets the weights in the dtype autocast picks."""
    weight = next(iter(mod.parameters()), None)  # the raw array: no parametrization runs
    problem = None if weight is None else dtype_mismatch(x, weight)
    if problem is not None and not casts(mod._autocast_op(), x, weight):
        raise bad_input(mod, *problem.split(". Fix: "))


_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
#: the autocast op (PyTorch's ATen name, see amp.AUTOCAST_POLICIES) of each mode
_AUTOCAST_OPS = {"RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu", "LSTM": "lstm", "GRU": "gru"}


# -- one time step (shared by the cells and the scans) -----------------------------------------


def _rnn_step(act: Any) -> Any:
    def step(xw: Any, h: Any, w_hh: Any) -> Any:
        # xw already holds x @ W_ih.T + b_ih + b_hh.
        return act(xw + fnp.matmul(h, w_hh.T))
    return step


def _lstm_step(xw: Any, h: Any, c: Any, w_hh: Any, w_hr: Any) -> tuple[Any, Any]:
    # Gate order here is i, f, o, g (the caller permuted PyTorch's i, f, g, o rows, see
    # _lstm_gate_order): one sigmoid over three contiguous gates, one tanh.
    gates = xw + fnp.matmul(h, w_hh.T)
    n = c.shape[-1]
    s = F.sigmoid(gates[..., :3 * n])
    g = fnp.tanh(gates[..., 3 * n:])
    c = s[..., n:2 * n] * c + s[..., :n] * g
    h = s[..., 2 * n:] * fnp.tanh(c)
    if w_hr is not None:
        h = fnp.matmul(h, w_hr.T)
    return h, c


def _lstm_gate_order(w: Any) -> Any:
    """PyTorch's gate rows i, f, g, o reordered to i, f, o, g (for :func:`_lstm_step`)."""
    if w is None:
        return None
    n = w.shape[0] // 4
    return fnp.concatenate([w[:2 * n], w[3 * n:], w[2 * n:3 * n]], axis=0)


def _gru_step(xw: Any, h: Any, w_hh: Any, b_hh: Any) -> Any:
    # xw holds x @ W_ih.T + b_ih; b_hn stays inside the reset gate's product, as PyTorch.
    hw = fnp.matmul(h, w_hh.T)
    if b_hh is not None:
        hw = hw + b_hh
    n = h.shape[-1]
    rz = F.sigmoid(xw[..., :2 * n] + hw[..., :2 * n])  # r and z are contiguous: one call
    r, z = rz[..., :n], rz[..., n:]
    cand = fnp.tanh(xw[..., 2 * n:] + r * hw[..., 2 * n:])
    return cand + z * (h - cand)  # (1 - z) * n + z * h, in PyTorch's kernel's form


def _input_projection(mode: str, x: Any, w_ih: Any, b_ih: Any, b_hh: Any) -> Any:
    xw = fnp.matmul(x, w_ih.T)
    if b_ih is not None:
        xw = xw + b_ih
        if mode != "GRU":
            xw = xw + b_hh
    return xw


def _run_direction(mode: str, x: Any, state: tuple[Any, ...], weights: tuple[Any, ...],
                   reverse: bool, mask: Any) -> tuple[Any, tuple[Any, ...]]:
    """One layer, one direction over time-major ``x`` ``(T, N, I)``: ``(outputs, final
    state)``. ``mask`` ``(T, N, 1)`` (True = a real step) freezes the state and zeroes the
    output at padded steps."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    if mode == "LSTM":
        w_ih, w_hh, b_ih, b_hh = (_lstm_gate_order(w) for w in (w_ih, w_hh, b_ih, b_hh))
    xw = _input_projection(mode, x, w_ih, b_ih, b_hh)
    if mode == "LSTM":
        def cell(carry: Any, xw_t: Any) -> Any:
            return _lstm_step(xw_t, carry[0], carry[1], w_hh, w_hr)
    elif mode == "GRU":
        def cell(carry: Any, xw_t: Any) -> Any:
            return (_gru_step(xw_t, carry[0], w_hh, b_hh),)
    else:
        rnn = _rnn_step(fnp.tanh if mode == "RNN_TANH" else F.relu)

        def cell(carry: Any, xw_t: Any) -> Any:
            return (rnn(xw_t, carry[0], w_hh),)

    if mask is None:
        def body(carry: Any, xw_t: Any) -> Any:
            new = cell(carry, xw_t)
            return new, new[0]
        final, ys = funcgrad.scan(body, tuple(state), xw, reverse=reverse)
    else:
        def body(carry: Any, inp: Any) -> Any:
            xw_t, m = inp
            new = tuple(fnp.where(m, a, b) for a, b in zip(cell(carry, xw_t), carry))
            return new, fnp.where(m, new[0], 0)
        final, ys = funcgrad.scan(body, tuple(state), (xw, mask), reverse=reverse)
    return ys, final


# -- the multi-layer modules -------------------------------------------------------------------


class RNNBase(Module):
    """Shared machinery of :class:`RNN`, :class:`LSTM` and :class:`GRU` (PyTorch's
    ``RNNBase``): parameters ``weight_ih_l{k}[_reverse]``, ``weight_hh_l{k}[_reverse]``,
    ``bias_ih_l{k}[_reverse]``, ``bias_hh_l{k}[_reverse]`` (and ``weight_hr_l{k}[_reverse]``
    for an LSTM with ``proj_size``), in that order per layer and direction.

    >>> lstm = LSTM(4, 3, num_layers=2, bidirectional=True)
    >>> [n for n, _ in lstm.named_parameters()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
        if mode not in _GATES:
            raise ValueError(f"{name}: unrecognized RNN mode {mode!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) \
                or not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] "
                             f"representing the probability of an element being zeroed, "
                             f"got {dropout!r}")
        for what, v, low in (("input_size", input_size, 0), ("hidden_size", hidden_size, 1),
                             ("num_layers", num_layers, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, numpy.integer)):
                # (PyTorch: "hidden_size should be of type int, got: float")
                raise TypeError(f"{name}: {what} should be of type int, got: "
                                f"{type(v).__name__} ({v!r})")
            if v < low:
                raise ValueError(f"{name}: {what} must be an integer >= {low}, got {v!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout option adds dropout after all but last recurrent "
                          "layer, so non-zero dropout expects num_layers greater than 1, but "
                          f"got dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if proj_size < 0:
            raise ValueError(f"{name}: proj_size should be a positive integer or zero to "
                             f"disable projections, got {proj_size}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, "
                             "not RNN or GRU")
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size ({proj_size}) has to be smaller than "
                             f"hidden_size ({hidden_size})")
        self.mode = mode
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.bias = int(num_layers), bool(bias)
        self.batch_first, self.dropout = bool(batch_first), float(dropout)
        self.bidirectional, self.proj_size = bool(bidirectional), int(proj_size)
        dirs = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        names = []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else real_hidden * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate, layer_in)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for base, shape in shapes:
                    setattr(self, base + sfx, Parameter(empty(shape, dtype)))
                    names.append(base + sfx)
        self._flat_weights_names = names
        if dropout > 0:
            seed = default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)
            self.register_buffer("rng_key", seed, persistent=False)
        self.reset_parameters()
        place(self, device)

    def reset_parameters(self, generator: Any = None) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv, generator=generator)

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch compacts cuDNN weights here); kept so ported code runs."""

    # PyTorch's public argument checks, which subclasses of its RNNs call and override; the
    # forward pass makes its own (fuller) checks, so these are for such code only.
    def check_input(self, input: Any, batch_sizes: Any) -> None:
        """PyTorch's check: the weights' dtype, 2 dims when packed (``batch_sizes`` given)
        else 3, and ``input_size`` features.

        >>> import numpy as np
        >>> RNN(3, 4).check_input(np.ones((5, 2, 3), np.float32), None)
        """
        dtype, got = self.weight_ih_l0.dtype, fnp.result_type(input)
        if got != dtype:
            raise BadInputError(f"{self.mode} input dtype ({got}) does not match weight dtype "
                                f"({dtype}). Convert input: input.astype({dtype}), or convert "
                                f"model: model.to({got})")
        want = 2 if batch_sizes is not None else 3
        if fnp.ndim(input) != want:
            raise BadInputError(f"input must have {want} dimensions, got {fnp.ndim(input)}")
        if fnp.shape(input)[-1] != self.input_size:
            raise BadInputError(f"input.size(-1) must be equal to input_size. Expected "
                                f"{self.input_size}, got {fnp.shape(input)[-1]}")

    def get_expected_hidden_size(self, input: Any, batch_sizes: Any) -> tuple[int, int, int]:
        """``(num_layers * num_directions, batch, proj_size or hidden_size)``.

        >>> import numpy as np
        >>> LSTM(3, 4, proj_size=2).get_expected_hidden_size(np.ones((5, 7, 3)), None)
        (1, 7, 2)
        """
        if batch_sizes is not None:
            batch = int(numpy.asarray(batch_sizes)[0])
        else:
            batch = fnp.shape(input)[0 if self.batch_first else 1]
        return (self.num_layers * (1 + self.bidirectional), batch,
                self.proj_size or self.hidden_size)

    def check_hidden_size(self, hx: Any, expected_hidden_size: tuple[int, ...],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """Raise ``msg.format(expected, got)`` unless ``hx`` has the expected shape."""
        if tuple(fnp.shape(hx)) != tuple(expected_hidden_size):
            raise BadInputError(msg.format(tuple(expected_hidden_size), list(fnp.shape(hx))))

    def check_forward_args(self, input: Any, hidden: Any, batch_sizes: Any) -> None:
        """:meth:`check_input` then the hidden state's shape (both of an LSTM's states)."""
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        if self.mode != "LSTM":
            self.check_hidden_size(hidden, expected)
            return
        self.check_hidden_size(hidden[0], expected, "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Any) -> Any:
        """``hx`` (an LSTM's pair too) with its batch axis (1) reordered by ``permutation``
        (None: unchanged), as PyTorch's packed sequences reorder the states."""
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(self.permute_hidden(h, permutation) for h in hx)
        return fnp.take(hx, F._on_device_of(permutation, hx), axis=1)

    @property
    def all_weights(self) -> list[list[Any]]:
        per = len(self._flat_weights_names) // (self.num_layers * (1 + self.bidirectional))
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    @property
    def _flat_weights(self) -> list[Any]:
        """The weights in ``_flat_weights_names`` order, as read now (PyTorch's list, which
        code reaching into an RNN reads; a parametrized weight is computed).

        >>> [w.shape for w in RNN(2, 3)._flat_weights]
        [(3, 2), (3, 3), (3,), (3,)]
        """
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def _all_weights(self) -> list[list[str]]:
        """``_flat_weights_names`` per layer and direction (PyTorch's names list).

        >>> RNN(2, 3, bias=False)._all_weights
        [['weight_ih_l0', 'weight_hh_l0']]
        """
        names = self._flat_weights_names
        per = len(names) // (self.num_layers * (1 + self.bidirectional))
        return [names[i:i + per] for i in range(0, len(names), per)]

    def _autocast_op(self) -> str:
        return _AUTOCAST_OPS[self.mode]

    def _weights(self, layer: int, d: int) -> tuple[Any, ...]:
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        # read as attributes, not from _parameters: a parametrized or pruned weight
        # (weight_norm(lstm, "weight_hh_l0")) is computed on access; absent ones are None
        return tuple(getattr(self, n + sfx, None)
                     for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _state_shapes(self, n: int | None) -> list[tuple[int, ...]]:
        lead = (self.num_layers * (1 + self.bidirectional),) + (() if n is None else (n,))
        shapes = [lead + (self.proj_size or self.hidden_size,)]
        if self.mode == "LSTM":
            shapes.append(lead + (self.hidden_size,))
        return shapes

    def _check_states(self, hx: Any, n: int | None, batched: bool, like: Any) -> list[Any]:
        shapes = self._state_shapes(n)
        names = ["h_0", "c_0"][:len(shapes)]
        lay = "(num_layers * num_directions, " + ("batch, " if batched else "")
        if hx is None:
            # On the input's device, in its dtype.
            return [fnp.zeros_like(like, shape=s) for s in shapes]
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise bad_input(self, f"hx: expected a tuple (h_0, c_0), got "
                                f"{type(hx).__name__}", "pass hx=(h_0, c_0) or None")
            states = list(hx)
        else:
            if isinstance(hx, (tuple, list)):
                raise bad_input(self, f"hx: expected one array h_0, got a "
                                f"{type(hx).__name__}", "pass h_0 alone (only LSTM takes "
                                "a tuple (h_0, c_0))")
            states = [hx]
        for nm, s, shape in zip(names, states, shapes):
            if not hasattr(s, "shape"):
                raise bad_input(self, f"{nm}: expected an array of shape {shape}, got "
                                f"{type(s).__name__}", f"pass {nm} as an array")
            if tuple(s.shape) != shape:
                what = "hidden" if nm == "h_0" else "cell"
                kind = ("2-D for unbatched input" if not batched else "3-D for batched input")
                raise bad_input(
                    self, f"{nm}: expected {what} state of shape {shape} (it must be "
                    f"{kind}), got {tuple(s.shape)}",
                    f"give {nm} the shape {lay}{what}_size) = {shape}")
        return states

    def forward(self, input: Any, hx: Any = None, *, lengths: Any = None) -> tuple[Any, Any]:
        """``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``) for a padded batch, an unbatched
        sequence or a PackedSequence.

        ``lengths=`` (an integer array ``(batch,)``, may be traced: one compiled program
        serves every length pattern) gives the same results as packing the padded input:
        each sequence's final state is taken at its own last step and the outputs beyond
        its length are zero.
        """
        packed = isinstance(input, PackedSequence)
        mask = None
        if lengths is not None and (packed or getattr(input, "ndim", 0) != 3):
            raise bad_input(self, "lengths= needs a padded batched 3-D input, got "
                            + ("a PackedSequence" if packed else
                               f"shape {tuple(getattr(input, 'shape', ()))}"),
                            "pass either a PackedSequence or a padded batch with lengths=")
        if packed:
            seq = input
            lens = seq.lengths()
            t_max = len(seq._batch_sizes)
            data = seq.data
            if data.ndim != 2 or data.shape[1] != self.input_size:
                raise bad_input(self, f"packed input data: expected shape (*, "
                                f"{self.input_size}), got {tuple(data.shape)}",
                                f"pack sequences with {self.input_size} features per step")
            idx = F._on_device_of(padded_index(seq, t_max), data)
            x = fnp.concatenate([data, fnp.zeros_like(data[:1])], axis=0)[idx]
            mask = F._on_device_of((numpy.arange(t_max)[:, None] < lens[None, :])[..., None],
                                   data)
            batched = True
        else:
            x = input
            if not hasattr(x, "ndim") or x.ndim not in (2, 3):
                got = f"{x.ndim}-D input of shape {tuple(x.shape)}" if hasattr(x, "ndim") \
                    else type(x).__name__
                raise bad_input(self, f"input: expected 2-D (seq, features) or 3-D "
                                f"{'(batch, seq, features)' if self.batch_first else '(seq, batch, features)'}"  # noqa: E501
                                f", got {got}",
                                "reshape the input (or pack it with pack_padded_sequence)")
            if x.shape[-1] != self.input_size:
                raise bad_input(self, f"input: expected input.size(-1) == input_size = "
                                f"{self.input_size}, got input shape {tuple(x.shape)}",
                                f"feed {self.input_size} features per step or build the layer "
                                f"with input_size={x.shape[-1]}")
            batched = x.ndim == 3
            seq_axis = 1 if batched and self.batch_first else 0
            if x.shape[seq_axis] == 0:
                raise bad_input(self, f"input: expected sequence length to be larger than 0, "
                                f"got input shape {tuple(x.shape)}",
                                "give every batch at least one time step (PyTorch's rule)")
            if not batched:
                x = fnp.expand_dims(x, 1)
            elif self.batch_first:
                x = fnp.swapaxes(x, 0, 1)
        _check_dtype(self, x)
        n = x.shape[1]
        if lengths is not None:
            mask = self._length_mask(lengths, x.shape[0], n, x)
        states = self._check_states(hx, n if batched else None, batched, x)
        op = self._autocast_op()
        x, *states = autocast_inputs(op, x, *states)
        if not batched:
            states = [fnp.expand_dims(st, 1) for st in states]
        dirs = 2 if self.bidirectional else 1
        m = None if mask is None else fnp.asarray(mask)
        finals: list[list[Any]] = [[] for _ in states]
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                init_state = tuple(s[k] for s in states)
                weights = autocast_inputs(op, layer_in, *self._weights(layer, d))[1:]
                ys, fin = _run_direction(self.mode, layer_in, init_state, weights, bool(d), m)
                outs.append(ys)
                for lst, f in zip(finals, fin):
                    lst.append(f)
            layer_in = outs[0] if dirs == 1 else fnp.concatenate(outs, axis=-1)
            if self.training and self.dropout > 0 and layer < self.num_layers - 1:
                key, nxt = F.split_key(self.rng_key)
                self.rng_key = funcgrad.stop_gradient(nxt)
                layer_in = F.dropout(layer_in, self.dropout, True, key=key)
        out = layer_in
        h_n = [fnp.stack(f, axis=0) for f in finals]
        if packed:
            ts, bs = (F._on_device_of(i, out) for i in packed_positions(seq))
            out = PackedSequence(out[ts, bs], seq._batch_sizes, seq._sorted, seq._unsorted)
        elif not batched:
            out = out[:, 0]
            h_n = [h[:, 0] for h in h_n]
        elif self.batch_first:
            out = fnp.swapaxes(out, 0, 1)
        return out, (tuple(h_n) if self.mode == "LSTM" else h_n[0])

    def _length_mask(self, lengths: Any, t_len: int, n: int, like: Any) -> Any:
        lens = fnp.asarray(F._on_device_of(lengths, like))
        if tuple(lens.shape) != (n,) or numpy.dtype(lens.dtype).kind not in "iu":
            raise bad_input(self, f"lengths: expected {n} integers (one per sequence), got "
                            f"{lens.dtype} array of shape {tuple(lens.shape)}",
                            "pass the true length of each sequence in the batch")
        host = F._host_value(lens)
        if host is not None and host.size and (host.min() < 0 or host.max() > t_len):
            raise bad_input(self, f"lengths: expected values in [0, {t_len}] (the padded "
                            f"length), got {host.tolist()}", "check the lengths and the "
                            "batch_first layout of the input")
        steps = F._iota_like(lens, t_len, lens.dtype)
        return (steps[:, None] < lens[None, :])[..., None]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu.

    ``forward(input, h_0=None)`` returns ``(output, h_n)``: input ``(T, N, input_size)``
    (``(N, T, ...)`` with ``batch_first``), unbatched ``(T, input_size)``, or a
    PackedSequence; output ``(T, N, D * hidden_size)``, h_n ``(D * num_layers, N, hidden)``.

    >>> import numpy as np
    >>> rnn = RNN(3, 5, num_layers=2, nonlinearity="relu", batch_first=True)
    >>> out, h = rnn(np.ones((4, 7, 3), np.float32))
    >>> out.shape, h.shape
    ((4, 7, 5), (2, 4, 5))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: str | None = None,
                 dtype: Any = None, proj_size: int = 0) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; select from "
                             "'tanh' or 'relu'")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)  # (a proj_size raises, as PyTorch's)


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o, as PyTorch), optionally with a projection
    ``proj_size`` (h_t = W_hr (o_t * tanh(c_t))).

    ``forward(input, (h_0, c_0)=None)`` returns ``(output, (h_n, c_n))``; h has
    ``proj_size or hidden_size`` features, c ``hidden_size``.

    >>> import numpy as np
    >>> lstm = LSTM(3, 8, proj_size=4, bidirectional=True)
    >>> out, (h, c) = lstm(np.ones((6, 2, 3), np.float32))
    >>> out.shape, h.shape, c.shape
    ((6, 2, 8), (2, 2, 4), (2, 2, 8))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def get_expected_cell_size(self, input: Any, batch_sizes: Any) -> tuple[int, int, int]:
        """``(num_layers * num_directions, batch, hidden_size)``: the cell state's shape."""
        return self.get_expected_hidden_size(input, batch_sizes)[:2] + (self.hidden_size,)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
    h' = (1 - z) * n + z * h, as PyTorch).

    >>> import numpy as np
    >>> out, h = GRU(3, 5)(np.ones((6, 3), np.float32))      # unbatched
    >>> out.shape, h.shape
    ((6, 5), (1, 5))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: str | None = None,
                 dtype: Any = None, proj_size: int = 0) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)  # (raises if set)


# -- cells -------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """Shared parts of the cells: ``weight_ih`` ``(G * hidden, input)``, ``weight_hh``
    ``(G * hidden, hidden)``, ``bias_ih``, ``bias_hh`` ``(G * hidden,)``.

    >>> [n for n, _ in GRUCell(2, 3).named_parameters()]
    ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        for what, v, low in (("input_size", input_size, 0), ("hidden_size", hidden_size, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, numpy.integer)) or v < low:
                raise ValueError(f"{type(self).__name__}: {what} must be an integer >= {low}, "
                                 f"got {v!r}")
        self.input_size, self.hidden_size, self.bias = int(input_size), int(hidden_size), bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(empty((g, input_size), dtype))
        self.weight_hh = Parameter(empty((g, hidden_size), dtype))
        if bias:
            self.bias_ih = Parameter(empty((g,), dtype))
            self.bias_hh = Parameter(empty((g,), dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()
        place(self, device)

    def reset_parameters(self, generator: Any = None) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv, generator=generator)

    _AUTOCAST_OP = ""  # the cell's op in amp.AUTOCAST_POLICIES

    def _autocast_op(self) -> str:
        return self._AUTOCAST_OP

    def _cell_weights(self, x: Any) -> tuple[Any, ...]:
        """(weight_ih, weight_hh, bias_ih, bias_hh) as autocast has them meet ``x``."""
        return autocast_inputs(self._autocast_op(), x, self.weight_ih, self.weight_hh,
                               self.bias_ih, self.bias_hh)[1:]

    def _prepare(self, input: Any, hx: Any, n_states: int) -> tuple[Any, list[Any], bool]:
        if not hasattr(input, "ndim") or input.ndim not in (1, 2):
            got = f"{input.ndim}-D input of shape {tuple(input.shape)}" \
                if hasattr(input, "ndim") else type(input).__name__
            raise bad_input(self, f"input: expected 1-D (features) or 2-D (batch, features), "
                            f"got {got}", "pass one time step; use the multi-step layer "
                            f"({type(self).__name__[:-4]}) for sequences")
        if input.shape[-1] != self.input_size:
            raise bad_input(self, f"input: expected input.size(-1) == input_size = "
                            f"{self.input_size}, got input shape {tuple(input.shape)}",
                            f"feed {self.input_size} features or build the cell with "
                            f"input_size={input.shape[-1]}")
        _check_dtype(self, input)
        batched = input.ndim == 2
        x = input if batched else fnp.expand_dims(input, 0)
        shape = (x.shape[0], self.hidden_size) if batched else (self.hidden_size,)
        names = ("h_0", "c_0")[:n_states]
        if hx is None:
            zero = fnp.zeros_like(x, shape=(x.shape[0], self.hidden_size))
            x, zero = autocast_inputs(self._autocast_op(), x, zero)
            return x, [zero] * n_states, batched
        states = list(hx) if n_states == 2 else [hx]
        if n_states == 2 and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise bad_input(self, "hx: expected a tuple (h_0, c_0)", "pass hx=(h_0, c_0)")
        for nm, s in zip(names, states):
            if tuple(getattr(s, "shape", ())) != shape:
                raise bad_input(self, f"{nm}: expected shape {shape}, got "
                                f"{tuple(getattr(s, 'shape', ()))}",
                                f"give {nm} the shape {shape} "
                                f"({'(batch, hidden_size)' if batched else '(hidden_size,)'},"
                                f" like the input's batching)")
        if not batched:
            states = [fnp.expand_dims(s, 0) for s in states]
        x, *states = autocast_inputs(self._autocast_op(), x, *states)
        return x, states, batched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        return s + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh).

    >>> import numpy as np
    >>> RNNCell(3, 4)(np.ones((2, 3), np.float32)).shape
    (2, 4)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: str | None = None,
                 dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}; select from "
                             "'tanh' or 'relu'")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:
        x, (h,), batched = self._prepare(input, hx, 1)
        w_ih, w_hh, b_ih, b_hh = self._cell_weights(x)
        xw = _input_projection("RNN", x, w_ih, b_ih, b_hh)
        step = _rnn_step(fnp.tanh if self.nonlinearity == "tanh" else F.relu)
        out = step(xw, h, w_hh)
        return out if batched else out[0]

    def extra_repr(self) -> str:
        s = super().extra_repr()  # PyTorch prints RNNCell(3, 4, nonlinearity=relu)
        return s + (f", nonlinearity={self.nonlinearity}" if self.nonlinearity != "tanh" else "")

    def _autocast_op(self) -> str:
        return f"rnn_{self.nonlinearity}_cell"


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``.

    >>> import numpy as np
    >>> h, c = LSTMCell(3, 4)(np.ones(3, np.float32))
    >>> h.shape, c.shape
    ((4,), (4,))
    """

    _AUTOCAST_OP = "lstm_cell"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        x, (h, c), batched = self._prepare(input, hx, 2)
        w_ih, w_hh, b_ih, b_hh = (_lstm_gate_order(w) for w in self._cell_weights(x))
        xw = _input_projection("LSTM", x, w_ih, b_ih, b_hh)
        h, c = _lstm_step(xw, h, c, w_hh, None)
        return (h, c) if batched else (h[0], c[0])


class GRUCell(RNNCellBase):
    """One GRU step.

    >>> import numpy as np
    >>> GRUCell(3, 4)(np.ones((5, 3), np.float32), np.zeros((5, 4), np.float32)).shape
    (5, 4)
    """

    _AUTOCAST_OP = "gru_cell"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:
        x, (h,), batched = self._prepare(input, hx, 1)
        w_ih, w_hh, b_ih, b_hh = self._cell_weights(x)
        xw = _input_projection("GRU", x, w_ih, b_ih, b_hh)
        out = _gru_step(xw, h, w_hh, b_hh)
        return out if batched else out[0]
