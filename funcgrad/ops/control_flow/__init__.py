"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``.

Branches and loop bodies are traced once to closed jaxprs (params of the primitives ``cond``,
``while`` and ``scan``); values they close over, tracers of enclosing transformations included,
become explicit operands. Every construct is differentiable in forward and reverse mode (to any
order) and batchable; reverse mode works through ``while_loop`` too, whose trip count is known
only at run time (see :mod:`funcgrad.ops.control_flow.while_loops`).

Example:
    >>> import numpy as np
    >>> from funcgrad.ops.control_flow import fori_loop
    >>> float(fori_loop(0, 3, lambda i, x: x * 2.0, 1.0))
    8.0
"""

from funcgrad.ops.control_flow._tape import Tape, TapeAval
from funcgrad.ops.control_flow.conditionals import cond, cond_p, switch
from funcgrad.ops.control_flow.linear_solve import custom_linear_solve, linear_solve_p
from funcgrad.ops.control_flow.scans import map, scan, scan_p
from funcgrad.ops.control_flow.while_loops import fori_loop, while_loop, while_p

__all__ = [
    "cond",
    "switch",
    "while_loop",
    "fori_loop",
    "scan",
    "map",
    "custom_linear_solve",
    "linear_solve_p",
    "cond_p",
    "while_p",
    "scan_p",
    "Tape",
    "TapeAval",
]
