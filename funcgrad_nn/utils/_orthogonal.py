"""The orthogonal parametrization (PyTorch's ``_Orthogonal``): the matrix exponential
(``funcgrad.scipy.linalg.expm``) and the Cayley map of a skew-symmetric matrix, and a product
of Householder reflectors, all differentiable funcgrad code over (batches of) matrices; plus
the host-side QR helpers its ``right_inverse`` uses once, outside any transform.
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad.scipy.linalg import expm
from funcgrad_nn import init
from funcgrad_nn.module import Module

MAPS = ("matrix_exp", "cayley", "householder")

def _mH(x: Any) -> Any:
    x = fnp.swapaxes(x, -1, -2)
    return fnp.conj(x) if fnp.iscomplexobj(x) else x


def _eye_like(a: Any, n: int) -> Any:
    return funcgrad.device_put(numpy.eye(n, dtype=numpy.dtype(a.dtype)), device_of(a))


def householder_product(a: Any, tau: Any) -> Any:
    """The first ``k`` columns of ``H_1 H_2 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with
    ``v_i`` the ``i``-th column of ``a`` (shape ``(..., n, k)``) below the diagonal and 1 on
    it (``torch.linalg.householder_product``, LAPACK's ``orgqr``); differentiable.

    >>> import numpy as np
    >>> householder_product(np.zeros((3, 2)), np.array([2.0, 0.0]))
    array([[-1.,  0.],
           [ 0.,  1.],
           [ 0.,  0.]])
    """
    n, k = fnp.shape(a)[-2], fnp.shape(tau)[-1]
    rows = numpy.arange(n)
    q = fnp.broadcast_to(_eye_like(a, n)[:, :k], (*fnp.shape(a)[:-2], n, k))
    for i in reversed(range(k)):
        below = funcgrad.device_put((rows > i).astype(numpy.dtype(a.dtype)), device_of(a))
        unit = funcgrad.device_put((rows == i).astype(numpy.dtype(a.dtype)), device_of(a))
        v = a[..., :, i] * below + unit  # (..., n)
        vq = fnp.matmul(fnp.conj(v)[..., None, :] if fnp.iscomplexobj(v) else v[..., None, :],
                        q)  # (..., 1, k)
        q = q - tau[..., i, None, None] * v[..., :, None] * vq
    return q


def _host(x: Any) -> numpy.ndarray:
    return numpy.asarray(funcgrad.to_numpy(x))


def _like(x: numpy.ndarray, ref: Any) -> Any:
    return funcgrad.device_put(numpy.ascontiguousarray(x).astype(ref.dtype), device_of(ref))


def _make_orthogonal(a: numpy.ndarray) -> numpy.ndarray:
    """The Q of ``a = QR`` (``a`` tall) with ``diag(R) >= 0``, as PyTorch's."""
    q, r = numpy.linalg.qr(a)
    return q * numpy.sign(numpy.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def _is_orthogonal(q: numpy.ndarray) -> bool:
    n, k = q.shape[-2:]
    eps = 10.0 * n * numpy.finfo(q.dtype).eps
    gram = numpy.swapaxes(q, -1, -2).conj() @ q
    return bool(numpy.allclose(gram, numpy.eye(k), atol=eps))


class Orthogonal(Module):
    """PyTorch's ``_Orthogonal``: maps an unconstrained array to a matrix (or batch) with
    orthonormal columns (rows when wide) by ``orthogonal_map``; with ``use_trivialization``
    the result is left-multiplied by the buffer ``base``, set by :meth:`right_inverse`."""

    def __init__(self, weight: Any, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if fnp.iscomplexobj(weight) and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = tuple(fnp.shape(weight))
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization
        if use_trivialization:
            self.register_buffer("base", None)

    def extra_repr(self) -> str:
        return (f"orthogonal_map={self.orthogonal_map!r}, "
                f"use_trivialization={self.use_trivialization}")

    def forward(self, x: Any) -> Any:
        n, k = fnp.shape(x)[-2:]
        transposed = n < k
        if transposed:
            x = fnp.swapaxes(x, -1, -2)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = fnp.tril(x)
            if n != k:  # embed the tall matrix into a square one
                zeros = fnp.zeros_like(x, shape=(*fnp.shape(x)[:-1], n - k))
                x = fnp.concatenate([x, zeros], axis=-1)
            a = x - _mH(x)  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == "matrix_exp":
                q = expm(a)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^{-1}
                eye = _eye_like(a, n)
                q = fnp.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = fnp.tril(x, -1)
            tau = 2.0 / (1.0 + fnp.sum(a * a, axis=-2))
            q = householder_product(a, tau)
            # the diagonal of x holds the signs (+-1); PyTorch truncates it to int, so it
            # gets no gradient
            signs = funcgrad.stop_gradient(fnp.trunc(fnp.diagonal(x, axis1=-2, axis2=-1)))
            q = q * signs[..., None, :]
        if self.use_trivialization:
            if self.base is None:
                raise RuntimeError("orthogonal: the trivialization's base is not set; assign "
                                   "the parametrized weight (module.weight = Q) to set it")
            q = fnp.matmul(self.base, q)
        return fnp.swapaxes(q, -1, -2) if transposed else q

    def right_inverse(self, q: Any) -> Any:
        if tuple(fnp.shape(q)) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(fnp.shape(q))}.")
        q_init = q
        h = _host(funcgrad.stop_gradient(q))
        n, k = h.shape[-2:]
        transpose = n < k
        if transpose:
            h = numpy.swapaxes(h, -1, -2)
            n, k = k, n
        if not self.use_trivialization:
            if self.orthogonal_map in ("matrix_exp", "cayley"):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            # the reflectors of QR (LAPACK geqrf) with the signs of diag(R) on the diagonal
            raw, tau = numpy.linalg.qr(h, mode="raw")
            a = numpy.swapaxes(raw, -1, -2).copy()
            diag = numpy.einsum("...ii->...i", a[..., :k, :k])
            signs = numpy.sign(diag)
            signs[tau == 0.0] *= -1  # LAPACK returns tau == 0 where it skips a reflection
            idx = numpy.arange(k)
            a[..., idx, idx] = signs
            return _like(numpy.swapaxes(a, -1, -2) if transpose else a, q_init)
        if n == k:
            base = h.copy() if _is_orthogonal(h) else _make_orthogonal(h)
        else:  # complete q to a square orthogonal matrix with random columns
            rng = init.default_generator()  # nn.manual_seed makes it repeatable
            fill = rng.standard_normal((*h.shape[:-2], n, n - k))
            if numpy.iscomplexobj(h):
                fill = fill + 1j * rng.standard_normal(fill.shape)
            base = _make_orthogonal(numpy.concatenate([h, fill.astype(h.dtype)], axis=-1))
        self.base = _like(base, q_init)
        # -I: householder(zeros) is then the identity, and so is the skew map of it
        neg_id = numpy.zeros(tuple(fnp.shape(q_init)), dtype=h.dtype)
        m = min(neg_id.shape[-2:])
        neg_id[..., numpy.arange(m), numpy.arange(m)] = -1.0
        return _like(neg_id, q_init)

