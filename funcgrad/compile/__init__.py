"""jaxpr -> optimised straight-line Python over the backend's array module.

:func:`compile_jaxpr` runs the passes of :mod:`funcgrad.compile.passes` (inlining, constant
folding, simplification, CSE, DCE) and generates one Python function
(:mod:`funcgrad.compile.codegen`), compiled once and cached on the closed jaxpr.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.ops.elementwise import sin
    >>> exe = compile_jaxpr(funcgrad.make_jaxpr(sin)(np.zeros(2)))
    >>> exe(np.zeros(2))[0].tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence

from funcgrad._gc import paused_gc
from funcgrad.compile.codegen import (
    REUSE_MIN_SIZE,
    Executable,
    call_module,
    compile_by_structure,
    compile_executable,
    device_scalars,
    generate_code,
)
from funcgrad.compile.emit import Context
from funcgrad.compile.fusion import (
    FUSION_CHUNK_BYTES,
    FUSION_MIN_SIZE,
    FusionConfig,
    fusion_config,
    fusion_options,
    set_fusion,
)
from funcgrad.compile.passes import FOLD_MAX_SIZE, optimize_jaxpr
from funcgrad.compile.rules import Emission, emitters, inline_primitives, simplification_rules
from funcgrad.ir import ClosedJaxpr

__all__ = [
    "compile_jaxpr",
    "optimize_jaxpr",
    "generate_code",
    "Executable",
    "call_module",
    "device_scalars",
    "Emission",
    "Context",
    "emitters",
    "inline_primitives",
    "simplification_rules",
    "FOLD_MAX_SIZE",
    "REUSE_MIN_SIZE",
    "FusionConfig",
    "fusion_config",
    "set_fusion",
    "fusion_options",
    "FUSION_MIN_SIZE",
    "FUSION_CHUNK_BYTES",
]


def compile_jaxpr(
    closed: ClosedJaxpr, donated_invars: Sequence[bool] | None = None, name: str = "jitted",
    by_structure: bool = False,
) -> Executable:
    """The compiled, cached :class:`Executable` of ``closed`` (``exe(*args) -> list``).

    ``donated_invars`` marks inputs whose buffers the code may overwrite (checked at each call:
    only writeable contiguous arrays that share memory with no other argument qualify).
    Elementwise chains over big arrays are fused as :func:`fusion_config` says now
    (:mod:`funcgrad.compile.fusion`). ``by_structure`` caches the executable also on the
    jaxpr's structure, for jaxprs traced anew on every call (eager loop bodies).

    Example:
        >>> import numpy as np, funcgrad
        >>> exe = compile_jaxpr(funcgrad.make_jaxpr(lambda x: x)(np.zeros(1)), name="ident")
        >>> exe.source.splitlines()[0]
        'def ident(xp, v0):'
    """
    donated = tuple(bool(d) for d in donated_invars) if donated_invars is not None else None
    if donated is not None and not any(donated):
        donated = None
    with paused_gc():  # the passes and code generation only allocate (funcgrad._gc)
        if by_structure and donated is None:
            return compile_by_structure(closed, name, fusion_config())
        return compile_executable(closed, donated, name, fusion_config())
