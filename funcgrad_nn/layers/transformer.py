"""Transformer layers as ``torch.nn``: encoder/decoder layers, stacks and ``Transformer``.

Built on :class:`MultiheadAttention`, :class:`Linear`, :class:`LayerNorm` and
:class:`Dropout` with PyTorch's submodule names (``self_attn``, ``multihead_attn``,
``linear1``, ``linear2``, ``norm1``..``norm3``, ``dropout``..``dropout3``), so a PyTorch
``state_dict`` loads as is. Post-norm by default, pre-norm with ``norm_first=True``.
Masks: ``*_mask`` ``(L, S)`` or ``(N * nhead, L, S)`` and ``*_key_padding_mask`` ``(N, S)``,
bool (True = may not attend) or float (added to the scores);
:meth:`Transformer.generate_square_subsequent_mask` gives the causal mask.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn.autograd.grad_mode import is_grad_enabled
from funcgrad_nn.containers import ModuleList
from funcgrad_nn.init import default_generator, get_default_dtype
from funcgrad_nn.layers._util import place
from funcgrad_nn.layers.attention import MultiheadAttention
from funcgrad_nn.layers.dropout import Dropout
from funcgrad_nn.layers.linear import Linear
from funcgrad_nn.layers.normalization import LayerNorm
from funcgrad_nn.module import Module, bad_input

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer",
           "generate_square_subsequent_mask"]


def generate_square_subsequent_mask(sz: int, device: str | None = None,
                                    dtype: Any = None) -> Any:
    """The causal mask ``(sz, sz)``: ``-inf`` above the diagonal, ``0`` elsewhere (float, the
    default dtype unless ``dtype``), on ``device`` (the default device when None, as
    PyTorch's mask is made on its default device), so it meets activations there.

    >>> generate_square_subsequent_mask(3).tolist()
    [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
    """
    dt = numpy.dtype(get_default_dtype() if dtype is None else dtype)
    return funcgrad.device_put(numpy.triu(numpy.full((sz, sz), -numpy.inf, dtype=dt), k=1),
                               device)


def _activation(activation: Any, owner: str) -> Any:
    if isinstance(activation, str):
        table = {"relu": F.relu, "gelu": F.gelu}
        if activation not in table:
            raise RuntimeError(f"{owner}: activation should be relu/gelu, not {activation}")
        return table[activation]
    if not callable(activation):
        raise TypeError(f"{owner}: activation must be 'relu', 'gelu' or a callable, got "
                        f"{type(activation).__name__}")
    return activation


def _check_heads(owner: str, d_model: int, nhead: int) -> None:
    if nhead <= 0 or d_model % nhead:
        raise ValueError(f"{owner}: nhead ({nhead}) must divide d_model ({d_model}); fix: "
                         f"pick nhead among the divisors of {d_model} (e.g. "
                         f"{max(k for k in range(1, max(nhead, 1) + 1) if d_model % k == 0)})")


def _check_seq(mod: Module, name: str, x: Any, d_model: int, batch_first: bool) -> None:
    layout = "(batch, seq, d_model)" if batch_first else "(seq, batch, d_model)"
    if not hasattr(x, "ndim") or x.ndim not in (2, 3):
        got = tuple(x.shape) if hasattr(x, "shape") else type(x).__name__
        raise bad_input(mod, f"{name}: expected a 3-D array {layout} or 2-D (seq, d_model), "
                        f"got {got}", f"reshape {name} to {layout}")
    if x.shape[-1] != d_model:
        raise bad_input(mod, f"{name}: expected the last dim to be d_model = {d_model}, got "
                        f"shape {tuple(x.shape)}", f"project {name} to {d_model} features "
                        "first (e.g. with an nn.Linear or nn.Embedding)")


def _seq_batch(x: Any, batch_first: bool) -> tuple[int, int | None]:
    if x.ndim == 2:
        return x.shape[0], None
    return (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])


def _check_mask(mod: Module, name: str, mask: Any, shapes: list[tuple[int, ...]],
                fix: str) -> None:
    if mask is None:
        return
    if not hasattr(mask, "dtype"):
        raise bad_input(mod, f"{name}: expected a bool or float array, got "
                        f"{type(mask).__name__}", fix)
    kind = numpy.dtype(mask.dtype).kind
    if kind not in "bf":
        raise bad_input(mod, f"{name}: only bool and floating masks are supported, got dtype "
                        f"{mask.dtype}", f"pass {name}.astype(bool) (True = may not attend) "
                        "or a float mask (added to the scores)")
    if tuple(mask.shape) not in shapes:
        want = " or ".join(str(s) for s in shapes)
        raise bad_input(mod, f"{name}: expected shape {want}, got {tuple(mask.shape)}", fix)


def _attn_mask_shapes(n: int | None, nhead: int, lq: int, s: int) -> list[tuple[int, ...]]:
    shapes = [(lq, s)]
    if n is not None:
        shapes.append((n * nhead, lq, s))
    return shapes


def _kpm_shapes(n: int | None, s: int) -> list[tuple[int, ...]]:
    return [(s,)] if n is None else [(n, s)]


def _clones(module: Module, n: int) -> ModuleList:
    copies = [copy.deepcopy(module) for _ in range(n)]
    # Deep copies share the dropout keys; give each its own stream.
    for c in copies:
        for m in c.modules():
            if "rng_key" in m._buffers:
                m.rng_key = default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)
    return ModuleList(copies)


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with a residual connection and
    LayerNorm (after, or before with ``norm_first``), as ``torch.nn.TransformerEncoderLayer``.

    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``; ``src``
    ``(S, N, E)`` (``(N, S, E)`` with ``batch_first``) or unbatched ``(S, E)``.

    >>> import numpy as np
    >>> layer = TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
    ...                                 batch_first=True)
    >>> layer(np.ones((3, 5, 8), np.float32)).shape
    (3, 5, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Any], Any] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_heads("TransformerEncoderLayer", d_model, nhead)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerEncoderLayer")
        # PyTorch's flag (1 relu, 2 gelu, else 0): one of its conditions for the encoder's
        # nested-tensor path (see TransformerEncoder)
        act = self.activation
        self.activation_relu_or_gelu = (
            1 if act is F.relu or type(act).__name__ == "ReLU" else
            2 if act is F.gelu or type(act).__name__ == "GELU" else 0)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        place(self, device)

    def forward(self, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Any:
        _check_seq(self, "src", src, self.d_model, self.batch_first)
        s, n = _seq_batch(src, self.batch_first)
        _check_mask(self, "src_mask", src_mask, _attn_mask_shapes(n, self.nhead, s, s),
                    f"pass a ({s}, {s}) mask, e.g. generate_square_subsequent_mask({s})")
        _check_mask(self, "src_key_padding_mask", src_key_padding_mask, _kpm_shapes(n, s),
                    f"pass one row per sequence: shape {_kpm_shapes(n, s)[0]}, True at "
                    "padded positions")
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Any, mask: Any, kpm: Any, is_causal: bool) -> Any:
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                           is_causal=bool(is_causal))[0]
        return self.dropout1(x)

    def _ff_block(self, x: Any) -> Any:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over ``memory`` and a feed-forward block, as
    ``torch.nn.TransformerDecoderLayer``.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``.

    >>> import numpy as np
    >>> layer = TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> layer(np.ones((4, 3, 8), np.float32), np.ones((6, 3, 8), np.float32)).shape
    (4, 3, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Any], Any] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_heads("TransformerDecoderLayer", d_model, nhead)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerDecoderLayer")
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        place(self, device)

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Any:
        _check_seq(self, "tgt", tgt, self.d_model, self.batch_first)
        _check_seq(self, "memory", memory, self.d_model, self.batch_first)
        t, n = _seq_batch(tgt, self.batch_first)
        s, nm = _seq_batch(memory, self.batch_first)
        if tgt.ndim != memory.ndim or n != nm:
            raise bad_input(self, f"memory: expected the batch layout of tgt (shape "
                            f"{tuple(tgt.shape)}), got shape {tuple(memory.shape)}",
                            "pass tgt and memory with the same batch size and batch_first "
                            "layout")
        h = self.nhead
        _check_mask(self, "tgt_mask", tgt_mask, _attn_mask_shapes(n, h, t, t),
                    f"pass a ({t}, {t}) mask, e.g. generate_square_subsequent_mask({t})")
        _check_mask(self, "memory_mask", memory_mask, _attn_mask_shapes(n, h, t, s),
                    f"pass a (tgt_len, src_len) = ({t}, {s}) mask")
        _check_mask(self, "tgt_key_padding_mask", tgt_key_padding_mask, _kpm_shapes(n, t),
                    f"pass shape {_kpm_shapes(n, t)[0]}, True at padded target positions")
        _check_mask(self, "memory_key_padding_mask", memory_key_padding_mask,
                    _kpm_shapes(n, s),
                    f"pass shape {_kpm_shapes(n, s)[0]}, True at padded source positions")
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Any, mask: Any, kpm: Any, is_causal: bool) -> Any:
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                           is_causal=bool(is_causal))[0]
        return self.dropout1(x)

    def _mha_block(self, x: Any, mem: Any, mask: Any, kpm: Any, is_causal: bool) -> Any:
        x = self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm,
                                need_weights=False, is_causal=bool(is_causal))[0]
        return self.dropout2(x)

    def _ff_block(self, x: Any) -> Any:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _is_causal(mask: Any, is_causal: bool | None, size: int | None) -> bool:
    # PyTorch's _detect_is_causal_mask: an explicit flag wins; otherwise a concrete mask
    # equal to the causal one counts as causal (a hint only: the mask itself is applied).
    if is_causal is not None:
        return bool(is_causal)
    if mask is None or size is None or F._host_value(mask) is None:
        return False
    m = F._host_value(mask)
    if m.shape != (size, size):
        return False
    causal = generate_square_subsequent_mask(size, "cpu", dtype=m.dtype if m.dtype.kind == "f"
                                             else None)
    if m.dtype.kind == "b":
        return bool(numpy.array_equal(m, numpy.isinf(causal)))
    return bool(numpy.array_equal(m, causal))


def _why_no_nested_path(layer: Any) -> str:
    """Why PyTorch's TransformerEncoder cannot use its nested-tensor path with ``layer``
    (its __init__'s checks, same texts), or ""."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    checks = [(layer.norm_first, f"{name}.norm_first was True"),
              (not attn.batch_first, f"{name}.self_attn.batch_first was not True(use "
                                     "batch_first for better inference performance)"),
              (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not "
                                             "True"),
              (getattr(attn, "in_proj_bias", None) is None,
               f"{name}.self_attn was passed bias=False"),
              (not getattr(layer, "activation_relu_or_gelu", 0),
               f"{name}.activation_relu_or_gelu was not True"),
              (layer.norm1.eps != layer.norm2.eps,
               f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
              (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd")]
    return next((why for bad, why in checks if bad), "")


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of ``encoder_layer`` (``layers.0``, ``layers.1``,
    ...) and an optional final ``norm``.

    ``forward(src, mask=None, src_key_padding_mask=None, is_causal=None)``.

    >>> import numpy as np
    >>> enc = TransformerEncoder(TransformerEncoderLayer(8, 2, 16), num_layers=2)
    >>> enc(np.ones((5, 3, 8), np.float32)).shape, len(enc.layers)
    ((5, 3, 8), 2)
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder: encoder_layer must be a Module, got "
                            f"{type(encoder_layer).__name__}")
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        why_not = _why_no_nested_path(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
        self.use_nested_tensor = bool(enable_nested_tensor) and not why_not

    def forward(self, src: Any, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Any:
        size = src.shape[0 if src.ndim == 2 or not getattr(self.layers[0], "batch_first",
                                                            False) else 1] \
            if hasattr(src, "ndim") and src.ndim in (2, 3) else None
        causal = _is_causal(mask, is_causal, size)
        out = src
        for mod in self.layers:
            out = mod(out, src_mask=mask, is_causal=causal,
                      src_key_padding_mask=src_key_padding_mask)
        if self._takes_nested_path(src, mask, src_key_padding_mask):
            # PyTorch then runs the layers on the unpadded tokens only and pads the result
            # with zeros (before the final norm): the kept positions are the same values.
            kpm = F._host_value(src_key_padding_mask)[..., None]
            where = device_of(out)
            if where not in (None, "cpu"):
                kpm = funcgrad.device_put(kpm, where)
            out = fnp.where(kpm, 0, out).astype(out.dtype)
        if self.norm is not None:
            out = self.norm(out)
        return out

    def _takes_nested_path(self, src: Any, mask: Any, kpm: Any) -> bool:
        # PyTorch's TransformerEncoder fast-path conditions (torch 2.13): the nested-tensor
        # layout, eval mode, a batched input with a left-aligned padding mask and no other
        # mask, and no gradient wanted (grad mode off, or layer 0's weights frozen).
        first = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or first.training or mask is not None \
                or kpm is None or getattr(src, "ndim", None) != 3:
            return False
        host = F._host_value(kpm)
        if host is None or host.dtype != numpy.bool_ or host.ndim != 2:
            return False  # (a traced mask: PyTorch's compiled path skips it too)
        if numpy.any(host[:, :-1] & ~host[:, 1:]):
            return False  # padding not only at the end (PyTorch's mask_check)
        names = ("self_attn.in_proj_weight", "self_attn.in_proj_bias",
                 "self_attn.out_proj.weight", "self_attn.out_proj.bias", "norm1.weight",
                 "norm1.bias", "norm2.weight", "norm2.bias", "linear1.weight", "linear1.bias",
                 "linear2.weight", "linear2.bias")
        trainable = {n for n, _ in first.named_parameters()}
        return not (is_grad_enabled() and any(n in trainable for n in names))


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of ``decoder_layer`` and an optional final ``norm``.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False)``.

    >>> import numpy as np
    >>> dec = TransformerDecoder(TransformerDecoderLayer(8, 2, 16), num_layers=2)
    >>> dec(np.ones((4, 3, 8), np.float32), np.ones((6, 3, 8), np.float32)).shape
    (4, 3, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        if not isinstance(decoder_layer, Module):
            raise TypeError(f"TransformerDecoder: decoder_layer must be a Module, got "
                            f"{type(decoder_layer).__name__}")
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Any:
        size = tgt.shape[0 if tgt.ndim == 2 or not getattr(self.layers[0], "batch_first",
                                                            False) else 1] \
            if hasattr(tgt, "ndim") and tgt.ndim in (2, 3) else None
        causal = _is_causal(tgt_mask, tgt_is_causal, size)
        out = tgt
        for mod in self.layers:
            out = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            out = self.norm(out)
        return out


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need", as
    ``torch.nn.Transformer``: ``encoder`` (a :class:`TransformerEncoder` with a final
    LayerNorm) and ``decoder``; every parameter with more than one dim is xavier-uniform
    initialised.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)``.

    >>> import numpy as np
    >>> model = Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                     dim_feedforward=16, batch_first=True)
    >>> src, tgt = np.ones((2, 5, 8), np.float32), np.ones((2, 3, 8), np.float32)
    >>> model(src, tgt, tgt_mask=Transformer.generate_square_subsequent_mask(3)).shape
    (2, 3, 8)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Any], Any] = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_heads("Transformer", d_model, nhead)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, dtype=dtype)
            self.encoder = TransformerEncoder(
                layer, num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, dtype=dtype)
            self.decoder = TransformerDecoder(
                layer, num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self._reset_parameters()
        place(self, device)

    def _reset_parameters(self, generator: Any = None) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p, generator=generator)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Any:
        _check_seq(self, "src", src, self.d_model, self.batch_first)
        _check_seq(self, "tgt", tgt, self.d_model, self.batch_first)
        if src.ndim != tgt.ndim or (src.ndim == 3 and _seq_batch(src, self.batch_first)[1]
                                    != _seq_batch(tgt, self.batch_first)[1]):
            raise bad_input(self, f"the batch number of src and tgt must be equal: src shape "
                            f"{tuple(src.shape)}, tgt shape {tuple(tgt.shape)}",
                            f"pass src and tgt with the same batch size (batch_first="
                            f"{self.batch_first})")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

