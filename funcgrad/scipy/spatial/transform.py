"""Rotations in three dimensions, as ``jax.scipy.spatial.transform`` (``Rotation`` and
``Slerp``, both pytrees: they pass through ``jit``, ``vmap`` and ``grad``).

A ``Rotation`` holds unit quaternions ``quat`` in SciPy's scalar-last order ``(x, y, z, w)``,
of shape ``(4,)`` (one rotation) or ``(..., 4)`` (a stack). Every conversion works on the
last axis, so stacks of any rank broadcast.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.spatial.transform import Rotation
    >>> r = Rotation.from_euler("z", 90, degrees=True)
    >>> r.apply(np.array([1.0, 0.0, 0.0])).round(12)
    array([0., 1., 0.])
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad import random as _random
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer

__all__ = ["Rotation", "Slerp"]

# Below this angle the rotation-vector maps use their Taylor series, whose error there is
# under float64 rounding (SciPy's and JAX's cutoff).
_SMALL_ANGLE = 1e-3
# |middle Euler angle| (or its distance to pi) below this is gimbal lock (SciPy's value).
_GIMBAL_EPS = 1e-7
_AXIS = {"x": 0, "y": 1, "z": 2}


def _floats(name: str, value: Any, last: tuple[int, ...]) -> Any:
    """``value`` as a float array whose trailing shape is ``last``."""
    a = fnp.asarray(value)
    dt = get_aval(a).dtype
    if dt.kind == "c":
        raise TypeError(f"Rotation.{name}: complex input is not supported")
    if dt.kind != "f":
        a = a.astype(numpy.float64)
    shape = get_aval(a).shape
    if shape[len(shape) - len(last):] != last or len(shape) < len(last):
        want = "(..., " + ", ".join(map(str, last)) + ")"
        raise ValueError(f"Rotation.{name}: expected an array of shape {want}, got {shape}")
    return a


def _norm(v: Any) -> Any:
    return fnp.sqrt(fnp.sum(v * v, axis=-1))


def _normalize(quat: Any) -> Any:
    return quat / _norm(quat)[..., None]


def _compose(p: Any, q: Any) -> Any:
    """The quaternion product ``p q`` (apply ``q`` first, then ``p``), broadcasting."""
    p, q = fnp.broadcast_arrays(p, q)
    pv, qv, pw, qw = p[..., :3], q[..., :3], p[..., 3:], q[..., 3:]
    vec = pw * qv + qw * pv + fnp.cross(pv, qv)
    return fnp.concatenate([vec, pw * qw - fnp.sum(pv * qv, axis=-1, keepdims=True)], axis=-1)


def _elementary(axis: int, angle: Any) -> Any:
    half = angle / 2.0
    zero = fnp.zeros_like(half)
    parts = [zero, zero, zero]
    parts[axis] = fnp.sin(half)
    return fnp.stack([*parts, fnp.cos(half)], axis=-1)


def _as_matrix(quat: Any) -> Any:
    x, y, z, w = (quat[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return fnp.stack([fnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m: Any) -> Any:
    # SciPy's (and JAX's) method: build the quaternion from the largest of the diagonal
    # entries and the trace, the best-conditioned of the four formulas.
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = fnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    choice = fnp.argmax(decision, axis=-1)
    out = fnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                     m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1)
    for i in (2, 1, 0):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [None] * 4
        parts[i] = 1 - trace + 2 * m[..., i, i]
        parts[j] = m[..., j, i] + m[..., i, j]
        parts[k] = m[..., k, i] + m[..., i, k]
        parts[3] = m[..., k, j] - m[..., j, k]
        out = fnp.where((choice == i)[..., None], fnp.stack(parts, axis=-1), out)
    return _normalize(out)


def _from_rotvec(rotvec: Any) -> Any:
    angle2 = fnp.sum(rotvec * rotvec, axis=-1)
    small = angle2 <= _SMALL_ANGLE ** 2
    # The large-angle branch sees a safe angle where the series is used, so neither the
    # value nor the gradient at the identity is 0/0.
    angle = fnp.sqrt(fnp.where(small, 1.0, angle2))
    series = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    scale = fnp.where(small, series, fnp.sin(angle / 2) / angle)
    half = fnp.where(small, 1 - angle2 / 8 + angle2 * angle2 / 384, fnp.cos(angle / 2))
    return fnp.concatenate([scale[..., None] * rotvec, half[..., None]], axis=-1)


def _as_rotvec(quat: Any) -> Any:
    # w >= 0 so that the angle is in [0, pi].
    quat = fnp.where(quat[..., 3:] < 0, -quat, quat)
    vec = quat[..., :3]
    s2 = fnp.sum(vec * vec, axis=-1)
    tiny = s2 == 0
    s = fnp.sqrt(fnp.where(tiny, 1.0, s2))
    s = fnp.where(tiny, 0.0, s)
    angle = 2.0 * fnp.arctan2(s, quat[..., 3])
    angle2 = angle * angle
    small = angle <= _SMALL_ANGLE
    safe = fnp.where(small, 1.0, angle)
    series = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    scale = fnp.where(small, series, safe / fnp.sin(safe / 2))
    return scale[..., None] * vec


def _as_mrp(quat: Any) -> Any:
    # The shorter way round: the quaternion with w >= 0 (its sign flipped otherwise).
    quat = fnp.where(quat[..., 3:] < 0, -quat, quat)
    return quat[..., :3] / (1.0 + quat[..., 3:])


def _from_mrp(mrp: Any) -> Any:
    sq1 = fnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return fnp.concatenate([2 * mrp, 2 - sq1], axis=-1) / sq1


def _canonical(quat: Any) -> Any:
    # The sign of the first nonzero of (w, x, y, z) made positive (SciPy's rule).
    neg, zero = quat < 0, quat == 0
    flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0])
            | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
    return fnp.where(flip[..., None], -quat, quat)


def _wrap(angle: Any) -> Any:
    # Into [-pi, pi] as SciPy (pi itself stays pi).
    angle = fnp.where(angle > math.pi, angle - 2 * math.pi, angle)
    return fnp.where(angle < -math.pi, angle + 2 * math.pi, angle)


def _euler_from_quat(quat: Any, axes: list[int], extrinsic: bool) -> Any:
    # Bernardes & Viollet (2022), SciPy's (and JAX's) algorithm; the axes are static.
    if not extrinsic:
        axes = axes[::-1]
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = [quat[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b))
    at_zero = fnp.abs(middle) <= _GIMBAL_EPS
    at_pi = fnp.abs(middle - math.pi) <= _GIMBAL_EPS
    half_sum, half_diff = fnp.arctan2(b, a), fnp.arctan2(d, c)
    out = [None, middle, None]
    out[first] = half_sum - half_diff
    out[third] = half_sum + half_diff
    # Gimbal lock: the third angle is zero and the first carries the whole rotation.
    locked = at_zero | at_pi
    lock_first = fnp.where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    out[0], out[2] = (fnp.where(locked, lock_first, out[0]),
                      fnp.where(locked, fnp.zeros_like(out[2]), out[2]))
    if not symmetric:
        out[third] = out[third] * sign
        out[1] = out[1] - math.pi / 2
    return fnp.stack([_wrap(v) for v in out], axis=-1)


def _parse_seq(seq: Any, max_len: int, exact: bool = False) -> tuple[list[int], bool]:
    if not isinstance(seq, str):
        raise TypeError(f"Expected `seq` to be a string, got {type(seq).__name__}")
    n = len(seq)
    if exact and n != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if n < 1 or n > max_len:
        raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                         f"characters, got {seq}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(n - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return [_AXIS[c] for c in seq.lower()], extrinsic


def _align_kabsch(a: Any, b: Any, w: Any) -> tuple[Any, Any, Any, Any]:
    """Kabsch's rotation best aligning ``b`` onto ``a`` with weights ``w`` (SciPy's
    ``_align_vectors``): (quat, rssd, sensitivity, singular values)."""
    bmat = fnp.swapaxes(w[:, None] * a, 0, 1) @ b
    u, sv, vh = fnp.linalg.svd(bmat)
    # an improper (reflecting) solution is turned into the nearest rotation
    sign = fnp.sign(fnp.linalg.det(u @ vh)).astype(sv.dtype)   # +-1: u @ vh is orthogonal
    sv = fnp.concatenate([sv[:2], sv[2:] * sign])
    u = fnp.concatenate([u[:, :2], u[:, 2:] * sign], axis=1)
    c = u @ vh
    ssd = fnp.sum(w * fnp.sum(b ** 2 + a ** 2, axis=-1)) - 2.0 * fnp.sum(sv)
    rssd = fnp.sqrt(fnp.maximum(ssd, 0.0))
    zeta = (sv[0] + sv[1]) * (sv[1] + sv[2]) * (sv[2] + sv[0])
    kappa = sv[0] * sv[1] + sv[1] * sv[2] + sv[2] * sv[0]
    eye = fnp.eye(3, dtype=get_aval(a).dtype)
    # undefined (nan) for a degenerate set, without the 1 / 0 warning
    sensitivity = fnp.where(zeta == 0, numpy.nan, fnp.mean(w) / fnp.where(zeta == 0, 1.0, zeta)
                            * (kappa * eye + bmat @ fnp.swapaxes(bmat, 0, 1)))
    return _from_matrix(c), rssd, sensitivity, sv


def _align_primary(a: Any, b: Any, w: Any, inf_idx: Any, weight_is_inf: Any) -> tuple[Any, Any]:
    """SciPy's ``_align_vectors_fixed``: the shortest rotation taking the primary (infinitely
    weighted, or only) vector of ``b`` onto that of ``a``, then the rotation about it that
    best aligns the other (secondary) vectors. (quat, rssd)."""
    n = get_aval(a).shape[0]
    order = (fnp.arange(n) + inf_idx) % n
    a_s, b_s, w_s = fnp.take(a, order, axis=0), fnp.take(b, order, axis=0), fnp.take(w, order)
    a_pri = a_s[0] / _norm(a_s[0])
    b_pri = b_s[0] / _norm(b_s[0])
    cross = fnp.cross(b_pri, a_pri)
    cross_norm = _norm(cross)
    theta = fnp.arctan2(cross_norm, fnp.sum(a_pri * b_pri))
    tol = 1e-3  # the small-angle (and near-pi) switch, SciPy's
    flip = numpy.pi - theta < tol
    # antiparallel vectors have no cross product: any axis orthogonal to a_pri
    i = fnp.argmin(fnp.abs(a_pri))
    r_ortho = fnp.stack([
        fnp.where(i == 1, a_pri[2], fnp.where(i == 2, -a_pri[1], 0.0)),
        fnp.where(i == 2, a_pri[0], fnp.where(i == 0, -a_pri[2], 0.0)),
        fnp.where(i == 0, a_pri[1], fnp.where(i == 1, -a_pri[0], 0.0))])
    r = fnp.where(cross_norm == 0, r_ortho, cross)
    r_norm = _norm(r)
    unit = fnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=get_aval(a).dtype)
    q_flip = fnp.where(flip, _from_rotvec(r / fnp.where(r_norm == 0, 1.0, r_norm) * numpy.pi),
                       unit)
    theta = fnp.where(flip, numpy.pi - theta, theta)
    cross = fnp.where(flip, -cross, cross)
    theta2 = theta * theta
    small = fnp.abs(theta) < tol
    safe = fnp.where(small, 1.0, theta)
    r = fnp.where(small, cross * (1 + theta2 / 6 + theta2 * theta2 * 7 / 360),
                  cross * safe / fnp.sin(safe))
    q_pri = _compose(_from_rotvec(r), q_flip)
    if n == 1:
        q_opt = q_pri
    else:
        a_sec, b_sec, w_sec = a_s[1:], b_s[1:], w_s[1:]
        c_sec = Rotation(q_pri).apply(b_sec)
        sin_term = fnp.sum(fnp.cross(c_sec, a_sec) * a_pri, axis=-1)
        cos_term = fnp.sum(c_sec * a_sec, axis=-1) - (fnp.sum(c_sec * a_pri, axis=-1)
                                                      * fnp.sum(a_sec * a_pri, axis=-1))
        phi = fnp.arctan2(fnp.sum(w_sec * sin_term), fnp.sum(w_sec * cos_term))
        q_opt = _compose(_from_rotvec(phi * a_pri), q_pri)
    # the infinitely weighted pair aligns exactly: its (infinite) weight leaves the rssd
    mask = ((n > 1) | (w[0] == numpy.inf)) & weight_is_inf
    w0 = fnp.where(mask, 0.0, w)
    a_est = Rotation(q_opt).apply(b)
    return q_opt, fnp.sqrt(fnp.sum(w0 @ (a - a_est) ** 2))


class Rotation(NamedTuple):
    """Rotations in 3 dimensions, as ``jax.scipy.spatial.transform.Rotation`` (and SciPy's
    ``scipy.spatial.transform.Rotation``): a pytree holding unit quaternions ``quat``
    (scalar-last), one rotation (shape ``(4,)``) or a stack (``(..., 4)``).

    Build one with the ``from_*`` class methods, ``identity`` or ``random``; compose with
    ``*`` (``(p * q).apply(v) == p.apply(q.apply(v))``), invert with ``inv``. Every method is
    differentiable in the rotation (the conversions keep finite gradients at the identity).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.spatial.transform import Rotation
        >>> r = Rotation.from_euler("z", 90, degrees=True)
        >>> r.as_rotvec().round(8)
        array([0.        , 0.        , 1.57079633])
        >>> (r * Rotation.from_euler("x", 90, degrees=True)).as_matrix().round(12) + 0.0
        array([[0., 0., 1.],
               [1., 0., 0.],
               [0., 1., 0.]])
    """

    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """One stack of all of ``rotations`` (single rotations count as stacks of one, as
        SciPy).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> len(Rotation.concatenate([Rotation.identity(), Rotation.identity(2)]))
            3
        """
        rotations = list(rotations)
        for r in rotations:
            if not isinstance(r, Rotation):
                raise TypeError(f"Rotation.concatenate: expected Rotation objects, got "
                                f"{type(r).__name__}")
        if not rotations:
            raise ValueError("Rotation.concatenate: need at least one rotation")
        return cls(fnp.concatenate([fnp.reshape(r.quat, (-1, 4)) for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes of ``seq``: up to three of ``'xyz'`` (extrinsic,
        about the fixed frame) or ``'XYZ'`` (intrinsic, about the rotating frame). ``angles``
        has a last axis of ``len(seq)`` (a scalar for one axis), radians unless ``degrees``.

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_euler("xyz", [90, 0, 0], degrees=True).as_quat().round(8)
            array([0.70710678, 0.        , 0.        , 0.70710678])
        """
        axes, extrinsic = _parse_seq(seq, 3)
        a = fnp.atleast_1d(_floats("from_euler", angles, ()))
        if get_aval(a).shape[-1] != len(axes):
            raise ValueError(f"Expected last dimension of `angles` to match number of "
                             f"sequence axes specified, got {get_aval(a).shape[-1]}.")
        if degrees:
            a = fnp.deg2rad(a)
        quat = _elementary(axes[0], a[..., 0])
        for n in range(1, len(axes)):
            step = _elementary(axes[n], a[..., n])
            quat = _compose(step, quat) if extrinsic else _compose(quat, step)
        return cls(quat)

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """From rotation matrices ``(..., 3, 3)`` (SciPy's and JAX's method; a matrix that is
        not orthogonal is not projected first, as JAX).

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_matrix(np.diag([1.0, -1.0, -1.0])).as_quat()
            array([1., 0., 0., 0.])
        """
        return cls(_from_matrix(_floats("from_matrix", matrix, (3, 3))))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """From Modified Rodrigues Parameters ``(..., 3)``: ``axis * tan(angle / 4)``.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_mrp(np.array([0.0, 0.0, 1.0])).as_quat()
            array([0., 0., 1., 0.])
        """
        return cls(_from_mrp(_floats("from_mrp", mrp, (3,))))

    @classmethod
    def from_quat(cls, quat: Any, *, scalar_first: bool = False) -> Rotation:
        """From quaternions ``(..., 4)``, scalar-last ``(x, y, z, w)`` (``(w, x, y, z)`` with
        ``scalar_first``, SciPy's option); they are normalised.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_quat(np.array([0.0, 0.0, 2.0, 2.0])).as_quat().round(8)
            array([0.        , 0.        , 0.70710678, 0.70710678])
        """
        q = _floats("from_quat", quat, (4,))
        if scalar_first:
            q = fnp.roll(q, -1, axis=-1)
        return cls(_normalize(q))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """From rotation vectors ``(..., 3)``: the axis times the angle (radians unless
        ``degrees``).

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_rotvec(np.array([0.0, 0.0, np.pi])).as_quat().round(12)
            array([0., 0., 1., 0.])
        """
        v = _floats("from_rotvec", rotvec, (3,))
        if degrees:
            v = fnp.deg2rad(v)
        return cls(_from_rotvec(v))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation, or a stack of ``num`` of them.

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.identity().as_quat()
            array([0., 0., 0., 1.])
        """
        quat = fnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        if num is not None:
            if not isinstance(num, (int, numpy.integer)) or num < 0:
                raise ValueError(f"Rotation.identity: num must be a non-negative integer, "
                                 f"got {num!r}")
            quat = fnp.tile(quat, (int(num), 1))
        return cls(quat)

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Uniformly distributed rotations (Haar measure) from a ``funcgrad.random`` key:
        normalised standard-normal quaternions. One rotation, or a stack of ``num``.

        Example:
            >>> import funcgrad
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> r = Rotation.random(funcgrad.random.PRNGKey(0), 5)
            >>> len(r), bool(abs(float(r.magnitude().max())) <= 3.141592653589794)
            (5, True)
        """
        shape = (4,) if num is None else (int(num), 4)
        return cls(_normalize(_random.normal(random_key, shape)))

    def __getitem__(self, indexer: Any) -> Rotation:
        """The rotation(s) at ``indexer`` of a stack (a single rotation is not subscriptable).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.identity(3)[1:].as_quat().shape
            (2, 4)
        """
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        if isinstance(indexer, Tracer):
            # A traced index (jit, vmap) into quaternions that may be a NumPy array: a gather.
            return Rotation(fnp.take(self.quat, indexer, axis=0))
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """How many rotations the stack holds (a single rotation has no len()).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> len(Rotation.identity(4))
            4
        """
        if self.single:
            raise TypeError("Single rotation has no len().")
        return get_aval(self.quat).shape[0]

    def __mul__(self, other: Rotation) -> Rotation:  # type: ignore[override]
        """The composition: ``other`` first, then ``self`` (stacks broadcast).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> r = Rotation.from_euler("z", 45, degrees=True)
            >>> (r * r).as_euler("xyz", degrees=True).round(8)
            array([ 0.,  0., 90.])
        """
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def __pow__(self, n: Any, modulus: None = None) -> Rotation:
        """The rotation composed with itself ``n`` times, ``n`` any real number: the angle
        about the fixed axis scaled by ``n`` (``from_rotvec(n * as_rotvec())``, the principal
        root for fractional ``n``), as SciPy's ``Rotation.__pow__``. ``n == 0`` gives the
        identity, ``1`` the rotation itself and ``-1`` its inverse exactly.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> (Rotation.from_rotvec(np.array([1.0, 0.0, 0.0])) ** 0.5).as_rotvec()
            array([0.5, 0. , 0. ])
        """
        if modulus is not None:
            raise ValueError("Rotation.__pow__: modulus is not applicable to rotations")
        if not isinstance(n, int | float):
            n = fnp.asarray(n)
            if get_aval(n).shape == (1,):
                n = n[0]
            elif get_aval(n).ndim != 0:
                raise ValueError("Array exponent must be a scalar")
        if isinstance(n, int | float) and not isinstance(self.quat, Tracer):
            # SciPy's exact special cases
            if n == 0:
                unit = fnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=get_aval(self.quat).dtype)
                return Rotation(fnp.zeros_like(self.quat) + unit)
            if n == -1:
                return self.inv()
            if n == 1:
                return self
        return Rotation.from_rotvec(n * self.as_rotvec())

    def approx_equal(self, other: Rotation, atol: Any = None, degrees: bool = False) -> Any:
        """Whether ``other`` is within ``atol`` (1e-8 radians by default; degrees with
        ``degrees``) of this rotation, by the angle of ``other * self.inv()``; stacks
        broadcast. As SciPy's ``Rotation.approx_equal``.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> p = Rotation.from_euler("z", 10, degrees=True)
            >>> bool(p.approx_equal(Rotation.from_euler("z", 10.5, degrees=True), 1, degrees=True))
            True
        """
        if not isinstance(other, Rotation):
            raise TypeError(f"Rotation.approx_equal: expected a Rotation, got "
                            f"{type(other).__name__}")
        if atol is None:
            if degrees:
                warnings.warn("atol must be set to use the degrees flag, defaulting to 1e-8 "
                              "radians.", stacklevel=2)
            atol = 1e-8
        elif degrees:
            atol = fnp.deg2rad(atol)
        try:
            numpy.broadcast_shapes(get_aval(self.quat).shape, get_aval(other.quat).shape)
        except ValueError:
            raise ValueError(
                f"Expected broadcastable shapes in both rotations, got "
                f"{get_aval(self.quat).shape[:-1]} rotations in first and "
                f"{get_aval(other.quat).shape[:-1]} rotations in second object.") from None
        return (other * self.inv()).magnitude() < atol

    @staticmethod
    def align_vectors(a: Any, b: Any, weights: Any = None,
                      return_sensitivity: bool = False) -> tuple:
        """The rotation that best aligns the vectors ``b`` ``(N, 3)`` onto ``a`` (minimising
        ``sum(w_i |a_i - R b_i|**2) / 2``, Wahba's problem, by Kabsch's SVD method), as SciPy's
        ``Rotation.align_vectors``: ``(rotation, rssd)`` (the root of the weighted sum of
        squared distances), plus SciPy's sensitivity matrix with ``return_sensitivity``. One
        pair, or one infinite weight, is aligned exactly first (the shortest rotation), the
        others then only by a rotation about it. Differentiable in ``a``, ``b`` and the
        weights (where the optimum is unique).

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> r, rssd = Rotation.align_vectors(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
            ...                                  np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
            >>> r.as_euler("xyz", degrees=True).round(8) + 0.0, round(float(rssd), 12)
            (array([ 0.,  0., 90.]), 0.0)
        """
        # host (NumPy) vectors go to the default device, where the scalars the solution
        # makes arrays of live (the strict backend and CuPy refuse host/device mixing)
        a_in, b_in = (device_put(v, get_default_device()) if isinstance(v, numpy.ndarray | list)
                      else fnp.asarray(v) for v in (a, b))
        dt = numpy.result_type(get_aval(a_in).dtype, get_aval(b_in).dtype)
        if dt.kind not in "f":
            dt = numpy.dtype(numpy.float64)
        a, b = a_in.astype(dt), b_in.astype(dt)
        a = fnp.reshape(a, (1, 3)) if get_aval(a).shape == (3,) else a
        b = fnp.reshape(b, (1, 3)) if get_aval(b).shape == (3,) else b
        for name, v, orig in (("a", a, a_in), ("b", b, b_in)):
            if get_aval(v).shape[-1:] != (3,):
                raise ValueError(f"Expected input `{name}` to have shape (3,) or (N, 3), got "
                                 f"{get_aval(orig).shape}")
        if get_aval(a).shape != get_aval(b).shape:
            raise ValueError(f"Expected inputs `a` and `b` to have same shapes, got "
                             f"{get_aval(a_in).shape} and {get_aval(b_in).shape} respectively.")
        if get_aval(a).ndim > 2:
            raise ValueError(f"Expected inputs `a` and `b` to have shape (3,) or (N, 3), got "
                             f"{get_aval(a_in).shape} and {get_aval(b_in).shape} respectively.")
        n = get_aval(a).shape[0]
        if weights is None:
            w = fnp.ones_like(a[:, 0])
        else:
            # the weights join the vectors' device (a list would land on the default one)
            w = fnp.asarray(weights).astype(dt)
            w = device_put(w, get_aval(a).device or get_default_device())
            if get_aval(w).ndim != 1:
                raise ValueError(f"Expected `weights` to be 1 dimensional, got shape "
                                 f"{get_aval(w).shape}.")
            if n > 1 and get_aval(w).shape[0] != n:
                raise ValueError(f"Expected `weights` to have number of values equal to "
                                 f"number of input vectors, got {get_aval(w).shape[0]} values "
                                 f"and {n} vectors.")
        concrete = not any(isinstance(v, Tracer) for v in (a, b, w))
        if concrete and bool(fnp.any(w < 0)):
            raise ValueError("`weights` may not contain negative values")
        weight_is_inf = fnp.ones(1, dtype=bool) if n == 1 else w == numpy.inf
        if concrete:
            n_inf = int(fnp.sum(weight_is_inf))
            if n_inf > 1:
                raise ValueError("Only one infinite weight is allowed")
            if n_inf == 1 and return_sensitivity:
                raise ValueError("Cannot return sensitivity matrix with an infinite weight "
                                 "or one vector pair")
            if n_inf == 1:
                idx = int(fnp.argmax(weight_is_inf))
                if float(_norm(a[idx])) == 0 or float(_norm(b[idx])) == 0:
                    raise ValueError("Cannot align zero length primary vectors")
                q, rssd = _align_primary(a, b, w, idx, weight_is_inf)
                return Rotation(q), rssd
            q, rssd, sens, sv = _align_kabsch(a, b, w)
            if float(sv[1] + sv[2]) < 1e-16 * float(sv[0]):
                warnings.warn("Optimal rotation is not uniquely or poorly defined for the "
                              "given sets of vectors.", UserWarning, stacklevel=2)
            return (Rotation(q), rssd, sens) if return_sensitivity else (Rotation(q), rssd)
        # traced: both solutions, the infinite-weight one chosen where a weight is infinite
        # (the Kabsch one on finite weights only, so its SVD never sees an infinity)
        inf_any = fnp.any(weight_is_inf)
        q_k, rssd_k, sens, _ = _align_kabsch(a, b, fnp.where(weight_is_inf, 0.0, w))
        q_p, rssd_p = _align_primary(a, b, w, fnp.argmax(weight_is_inf), weight_is_inf)
        q = fnp.where(inf_any, q_p, q_k)
        rssd = fnp.where(inf_any, rssd_p, rssd_k)
        if return_sensitivity:
            return Rotation(q), rssd, fnp.where(inf_any, numpy.nan, sens)
        return Rotation(q), rssd

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """Rotate ``vectors`` ``(..., 3)`` (by the inverse with ``inverse``); the rotations'
        and the vectors' batch dimensions broadcast.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> r = Rotation.from_euler("z", 90, degrees=True)
            >>> r.apply(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]), inverse=True).round(12)
            array([[ 0., -1.,  0.],
                   [ 0.,  0.,  2.]])
        """
        v = _floats("apply", vectors, (3,))
        m = self.as_matrix()
        if inverse:
            m = fnp.swapaxes(m, -1, -2)
        return fnp.matmul(m, v[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles ``(..., 3)`` for the three-axis ``seq`` (``'xyz'``-style extrinsic or
        ``'XYZ'``-style intrinsic, symmetric ones such as ``'zxz'`` too). The first and third
        are in ``[-pi, pi]``; the second in ``[0, pi]`` (symmetric) or ``[-pi/2, pi/2]``. At
        gimbal lock the third angle is 0, as SciPy (which also warns; this does not).

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> r = Rotation.from_euler("ZXZ", [10, 20, 30], degrees=True)
            >>> r.as_euler("ZXZ", degrees=True).round(8)
            array([10., 20., 30.])
        """
        axes, extrinsic = _parse_seq(seq, 3, exact=True)
        angles = _euler_from_quat(self.quat, axes, extrinsic)
        return fnp.rad2deg(angles) if degrees else angles

    def as_matrix(self) -> Any:
        """Rotation matrices ``(..., 3, 3)``.

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_euler("x", 180, degrees=True).as_matrix().round(12)
            array([[ 1.,  0.,  0.],
                   [ 0., -1., -0.],
                   [ 0.,  0., -1.]])
        """
        return _as_matrix(self.quat)

    def as_mrp(self) -> Any:
        """Modified Rodrigues Parameters ``(..., 3)``, of norm at most 1 (the shorter way
        round).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_euler("z", 180, degrees=True).as_mrp().round(12)
            array([0., 0., 1.])
        """
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        """Rotation vectors ``(..., 3)`` with angle in ``[0, pi]`` (radians unless
        ``degrees``).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_euler("y", 30, degrees=True).as_rotvec(degrees=True).round(8)
            array([ 0., 30.,  0.])
        """
        v = _as_rotvec(self.quat)
        return fnp.rad2deg(v) if degrees else v

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions ``(..., 4)``, scalar-last (``scalar_first`` puts ``w`` first);
        ``canonical`` picks the sign with ``w >= 0`` (SciPy's rule when ``w = 0``).

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> r = Rotation.from_quat(np.array([0.0, 0.0, 0.6, -0.8]))
            >>> r.as_quat(canonical=True, scalar_first=True)
            array([ 0.8, -0. , -0. , -0.6])
        """
        quat = _canonical(self.quat) if canonical else self.quat
        return fnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation(s).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.from_euler("z", 30, degrees=True).inv().as_euler("xyz", degrees=True).round(8)
            array([  0.,   0., -30.])
        """
        return Rotation(fnp.concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1))

    def magnitude(self) -> Any:
        """The rotation angle(s), in ``[0, pi]``.

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> round(float(Rotation.from_euler("x", -120, degrees=True).magnitude()), 12)
            2.094395102393
        """
        vec = self.quat[..., :3]
        s2 = fnp.sum(vec * vec, axis=-1)
        tiny = s2 == 0
        s = fnp.where(tiny, 0.0, fnp.sqrt(fnp.where(tiny, 1.0, s2)))
        return 2.0 * fnp.arctan2(s, fnp.abs(self.quat[..., 3]))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation of a stack: the rotation minimising the weighted sum
        of squared chordal distances (Markley's eigenvector method, as SciPy and JAX).

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> r = Rotation.from_euler("z", np.array([[10.0], [30.0]]), degrees=True)
            >>> r.mean().as_euler("xyz", degrees=True).round(8)
            array([ 0.,  0., 20.])
        """
        if self.single:
            quat = self.quat[None]
        else:
            quat = self.quat
        if get_aval(quat).ndim != 2:
            raise ValueError(f"Rotation.mean: expected a 1-D stack of rotations, got quat "
                             f"of shape {get_aval(self.quat).shape}")
        n = get_aval(quat).shape[0]
        dt = get_aval(quat).dtype
        if weights is None:
            w = fnp.ones(n, dtype=dt)
        else:
            w = fnp.asarray(weights).astype(dt)
            if get_aval(w).ndim != 1:
                raise ValueError(f"Expected `weights` to be 1 dimensional, got shape "
                                 f"{get_aval(w).shape}.")
            if get_aval(w).shape[0] != n:
                raise ValueError(f"Expected `weights` to have number of values equal to "
                                 f"number of rotations, got {get_aval(w).shape[0]} values and "
                                 f"{n} rotations.")
        k = (w[:, None] * quat).T @ quat
        _, v = fnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (``quat`` of shape ``(4,)``).

        Example:
            >>> from funcgrad.scipy.spatial.transform import Rotation
            >>> Rotation.identity().single, Rotation.identity(1).single
            (True, False)
        """
        return get_aval(self.quat).ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations, as ``jax.scipy.spatial.transform.Slerp``:
    build it with ``Slerp.init(times, rotations)`` (increasing key times, one per rotation),
    then call it with times. Between two key rotations the rotation turns at constant
    angular velocity about a fixed axis. Times outside the key range extrapolate the first or
    last segment (JAX's behaviour; SciPy raises).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.spatial.transform import Rotation, Slerp
        >>> keys = Rotation.from_euler("z", np.array([[0.0], [90.0]]), degrees=True)
        >>> slerp = Slerp.init(np.array([0.0, 1.0]), keys)
        >>> slerp(np.array([0.5, 1.0])).as_euler("xyz", degrees=True).round(8)
        array([[ 0.,  0., 45.],
               [ 0.,  0., 90.]])
    """

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator through ``rotations`` (a stack of at least 2) at ``times``.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation, Slerp
            >>> s = Slerp.init([0, 2], Rotation.from_rotvec(np.array([[0.0, 0, 0], [0, 0, 1]])))
            >>> s(1.0).as_rotvec()
            array([0. , 0. , 0.5])
        """
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        if get_aval(rotations.quat).ndim != 2:
            raise ValueError("`rotations` must be a 1-D stack of rotations.")
        times = fnp.asarray(times).astype(get_aval(rotations.quat).dtype)
        if get_aval(times).ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got "
                             f"{get_aval(times).ndim} dimensions.")
        if get_aval(times).shape[0] != len(rotations):
            raise ValueError(f"Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{get_aval(times).shape[0]} timestamps.")
        start = Rotation(rotations.quat[:-1])
        rotvecs = (start.inv() * Rotation(rotations.quat[1:])).as_rotvec()
        return cls(times=times, timedelta=fnp.diff(times), rotations=start, rotvecs=rotvecs)

    def __call__(self, times: Any) -> Rotation:  # type: ignore[override]
        """The interpolated rotation at each of ``times`` (a scalar gives a single rotation).

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.spatial.transform import Rotation, Slerp
            >>> s = Slerp.init([0, 1], Rotation.from_euler("x", np.array([[0.0], [60.0]]), degrees=True))
            >>> s(np.array([0.25])).magnitude().round(8)     # 15 degrees
            array([0.26179939])
        """
        t = fnp.asarray(times).astype(get_aval(self.times).dtype)
        if get_aval(t).ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = get_aval(t).ndim == 0
        t = fnp.atleast_1d(t)
        last = get_aval(self.timedelta).shape[0] - 1
        ind = fnp.clip(fnp.searchsorted(self.times, t) - 1, 0, last)
        # Gathers with fnp.take: the keys may be NumPy arrays and the times traced.
        alpha = (t - fnp.take(self.times, ind)) / fnp.take(self.timedelta, ind)
        start = Rotation(fnp.take(self.rotations.quat, ind, axis=0))
        result = start * Rotation.from_rotvec(fnp.take(self.rotvecs, ind, axis=0)
                                              * alpha[:, None])
        return result[0] if single else result
