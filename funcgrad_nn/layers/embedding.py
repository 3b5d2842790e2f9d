"""Embedding lookup table and EmbeddingBag (reduced bags of rows)."""

from __future__ import annotations

from typing import Any

import funcgrad
from funcgrad.backend import is_writeable
from funcgrad.core import is_tracer
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.module import Module, Parameter, record_parameter_write

__all__ = ["Embedding", "EmbeddingBag"]


def _reset_table(module: Module, generator: Any = None) -> None:
    """An embedding table as initialised: N(0, 1), the ``padding_idx`` row zero."""
    init.normal_(module.weight, generator=generator)
    _zero_padding_row(module)


def _zero_padding_row(module: Module) -> None:
    if module.padding_idx is not None:
        module.weight[module.padding_idx] = 0


def _renormalise_in_place(module: Module, input: Any, rows: Any = None) -> None:
    """PyTorch's ``embedding_renorm_``: with ``max_norm``, a call writes the looked-up rows
    renormalised back into the module's weight (duplicates write equal values); ``rows`` are
    the renormalised rows when the caller has them already. Eagerly the weight array is
    written in place (unless read-only). With a traced weight (the module is a transform's
    copy) the new table is recorded for the module-aware transforms (``funcgrad_nn.jit``,
    ``grad``, ``value_and_grad``, ``vjp``, ``Module.compile``), which write it into the
    caller's weight afterwards, so a training step renormalises the weight the optimizer
    then updates, as in PyTorch."""
    w = module.weight
    if module.max_norm is None:
        return
    if is_tracer(w):
        if rows is None:
            rows = F.embedding(input, w, None, module.max_norm, module.norm_type)
        # (on top of an earlier call's write in the same forward pass: both stay, as
        # PyTorch's in-place writes do)
        base = module.__dict__.get("_parameter_writes", {}).get("weight", w)
        new = base.at[input].set(funcgrad.stop_gradient(rows))
        record_parameter_write(module, "weight", funcgrad.stop_gradient(new))
        return
    if is_tracer(input) or is_tracer(rows) or not is_writeable(w):
        return
    if rows is None:
        rows = F.embedding(input, w, None, module.max_norm, module.norm_type)
    w[input] = funcgrad.stop_gradient(rows)


class Embedding(Module):
    """Table of ``num_embeddings`` vectors of size ``embedding_dim``, N(0, 1) init; the
    ``padding_idx`` row starts at zero and gets no gradient.

    With ``max_norm``, looked-up rows whose ``norm_type``-norm exceeds it are renormalised
    to ``max_norm`` (see :func:`funcgrad_nn.functional.embedding`). When the weight and the
    indices are concrete arrays (an eager call) the renormalised rows are also written into
    ``weight`` in place, as PyTorch does, and so do the module-aware transforms
    (``funcgrad_nn.jit``, ``grad``, ``value_and_grad``, ``vjp``, ``Module.compile``) after
    the call; under a plain ``funcgrad.jit``/``vmap`` with traced indices, or ``nn.vmap``,
    only the returned rows are renormalised.

    >>> import numpy as np
    >>> e = Embedding(10, 3, padding_idx=0)
    >>> e(np.array([[0, 4]])).shape, bool((e.weight[0] == 0).all())
    ((1, 2, 3), True)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Any = None, _freeze: bool = False, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        # sparse=True only changes PyTorch's storage of weight.grad; gradients here are
        # dense arrays with the same values.
        self.scale_grad_by_freq, self.sparse = bool(scale_grad_by_freq), bool(sparse)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm = None if max_norm is None else float(max_norm)
        self.norm_type = float(norm_type)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within "
                                 f"num_embeddings {num_embeddings}")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight shape {tuple(_weight.shape)} does not "
                                 f"match ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        place(self, device)

    def reset_parameters(self, generator: Any = None) -> None:
        _reset_table(self, generator)

    def _fill_padding_idx_with_zero(self) -> None:
        """Zero the ``padding_idx`` row in place (PyTorch's helper, which a custom
        ``reset_parameters`` calls after its own initialiser).

        >>> import numpy as np
        >>> e = Embedding(3, 2, padding_idx=1)
        >>> e.weight[...] = 1.0; e._fill_padding_idx_with_zero(); e.weight[:, 0].tolist()
        [1.0, 0.0, 1.0]
        """
        _zero_padding_row(self)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """Wrap an existing ``(num, dim)`` array (frozen by default).

        >>> import numpy as np
        >>> e = Embedding.from_pretrained(np.eye(2, dtype=np.float32))
        >>> len(list(e.parameters()))
        0
        """
        if len(getattr(embeddings, "shape", ())) != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D (num, dim), "
                             f"got shape {tuple(getattr(embeddings, 'shape', ()))}")
        n, d = embeddings.shape
        return cls(n, d, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, input: Any) -> Any:
        w = self.weight
        out = F.embedding(input, w, self.padding_idx, self.max_norm, self.norm_type,
                          self.scale_grad_by_freq, self.sparse)
        _renormalise_in_place(self, input, out)
        return out

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2.0:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings without materialising the rows per bag:
    ``forward(input, offsets=None, per_sample_weights=None)`` as PyTorch (2-D input: one bag
    per row; 1-D input: bags start at ``offsets``).

    >>> import numpy as np
    >>> bag = EmbeddingBag(10, 3, mode="sum")
    >>> bag(np.array([1, 2, 4, 5, 4]), np.array([0, 2])).shape
    (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Any = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, float(norm_type)
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset = include_last_offset
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx {padding_idx} must be within "
                                 f"num_embeddings {num_embeddings}")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), dtype))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)
        place(self, device)

    def reset_parameters(self, generator: Any = None) -> None:
        _reset_table(self, generator)

    def _fill_padding_idx_with_zero(self) -> None:
        """Zero the ``padding_idx`` row in place (PyTorch's helper, which a custom
        ``reset_parameters`` calls after its own initialiser).

        >>> import numpy as np
        >>> e = Embedding(3, 2, padding_idx=1)
        >>> e.weight[...] = 1.0; e._fill_padding_idx_with_zero(); e.weight[:, 0].tolist()
        [1.0, 0.0, 1.0]
        """
        _zero_padding_row(self)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """Wrap an existing ``(num, dim)`` array (frozen by default).

        >>> import numpy as np
        >>> EmbeddingBag.from_pretrained(np.eye(3), mode="sum")(np.array([[0, 1]]))
        array([[1., 1., 0.]])
        """
        n, d = embeddings.shape
        bag = cls(n, d, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        if freeze:
            bag.requires_grad_(False)
        return bag

    def forward(self, input: Any, offsets: Any = None, per_sample_weights: Any = None) -> Any:
        _renormalise_in_place(self, input)
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2.0:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
