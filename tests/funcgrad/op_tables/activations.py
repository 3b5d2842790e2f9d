"""Op table: the activation primitives (``funcgrad.ops.activations``) against NumPy.

Derivative checks use inputs away from the kink at 0 (``grad_args``); the value at the kink,
NaN handling and ``relu_grad``'s exact ``where`` semantics are in
tests/funcgrad/ops/test_activations.py.
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, rand

from funcgrad.ops.activations import relu, relu_grad

F64, F32 = np.float64, np.float32


def _away_from_zero(shape, dtype, seed):
    x = np.asarray(rand(shape, dtype, 0.2, 2.0, seed))
    return x * np.where(np.arange(x.size).reshape(shape) % 2 == 0, 1, -1).astype(dtype)


def _relu_grad_ref(g, x):
    return np.where(x > 0, g, 0).astype(np.result_type(g))


CASES: list[OpCase] = [
    OpCase("relu", relu, lambda x: np.maximum(x, 0),
           [(np.array([-1.5, 0.0, 2.0, -0.0]),), (np.asarray(rand((2, 3), F32, -2, 2, 1)),),
            (np.array([-2, 0, 3], np.int32),), (1.5,)],
           grad_args=[(_away_from_zero((2, 3), F64, 0),), (_away_from_zero((4,), F32, 1),)]),
    OpCase("relu_grad", relu_grad, _relu_grad_ref,
           [(np.asarray(rand((2, 3), F64, -2, 2, 2)), np.asarray(rand((2, 3), F64, -2, 2, 3))),
            (np.asarray(rand((3,), F32, -2, 2, 4)), np.asarray(rand((2, 3), F32, -2, 2, 5)))],
           grad_args=[(np.asarray(rand((2, 3), F64, -2, 2, 2)),
                       _away_from_zero((2, 3), F64, 3))],
           diff_argnums=(0,)),
]
