"""``torch.nn.attention``'s names: :class:`SDPBackend` and :func:`sdpa_kernel`, with the
submodules :mod:`~funcgrad_nn.attention.bias` (``causal_upper_left``/``causal_lower_right``
masks for :func:`funcgrad_nn.functional.scaled_dot_product_attention`) and
:mod:`~funcgrad_nn.attention.flex_attention` (``flex_attention``, ``create_block_mask``).

funcgrad_nn has one attention kernel, PyTorch's math formula; :func:`sdpa_kernel` accepts
PyTorch's backend choices so that ported code runs, and every choice computes the same
values (PyTorch's fused kernels differ from its math kernel only by rounding).

>>> import numpy as np
>>> import funcgrad_nn as nn
>>> from funcgrad_nn.attention import SDPBackend, sdpa_kernel
>>> q = np.ones((1, 2, 4))
>>> with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
...     out = nn.functional.scaled_dot_product_attention(q, q, q)
>>> out.shape
(1, 2, 4)
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

#: PyTorch's switch for warnings about why a fused kernel was not used (there is none here).
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """PyTorch's scaled-dot-product-attention backends, with its values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)
_enabled: ContextVar[tuple[SDPBackend, ...]] = ContextVar("sdpa_backends", default=_ALL)


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False
                ) -> Iterator[None]:
    """Select the attention backends inside the block (PyTorch's context manager): the
    argument is checked as PyTorch checks it, and :func:`enabled_backends` reports it; the
    one kernel here (the math formula) serves every choice.

    >>> with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
    ...     enabled_backends()
    (<SDPBackend.EFFICIENT_ATTENTION: 2>,)
    >>> sdpa_kernel("math").__enter__()
    Traceback (most recent call last):
    ...
    TypeError: sdpa_kernel: backends must be an SDPBackend or a list of them, got str
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise TypeError("sdpa_kernel: backends must be an SDPBackend or a list of them, got "
                        f"{type(backends).__name__}")
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    bad = [b for b in chosen if not isinstance(b, SDPBackend)]
    if bad:
        raise TypeError(f"sdpa_kernel: every backend must be an SDPBackend, got {bad!r}")
    del set_priority  # an order among kernels that all compute the same formula
    token = _enabled.set(tuple(dict.fromkeys(chosen)))
    try:
        yield
    finally:
        _enabled.reset(token)


def enabled_backends() -> tuple[SDPBackend, ...]:
    """The backends :func:`sdpa_kernel` enabled in this context (all of them outside one).

    >>> enabled_backends()[0]
    <SDPBackend.MATH: 0>
    """
    return _enabled.get()


from funcgrad_nn.attention import bias, flex_attention  # noqa: E402, F401  (submodules, as torch's)
