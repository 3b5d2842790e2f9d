"""Focused tests of the fft primitive and funcgrad.numpy.fft: transposes against explicit
matrices, errors, batching, jit, dtypes and NumPy routing."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, check_device, dev, host, rand

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ops import fft as fft_ops
from funcgrad.test_util import check_grads

NORMS = (None, "ortho", "forward")


def _real_matrix(fn, x):
    """The real-linear map ``fn`` at ``x`` as a matrix on (re, im) coordinates."""
    x = np.asarray(x)
    cplx_in = x.dtype.kind == "c"
    n_in = x.size * (2 if cplx_in else 1)
    cols = []
    for k in range(n_in):
        e = np.zeros(n_in)
        e[k] = 1.0
        v = e[: x.size] + (1j * e[x.size:] if cplx_in else 0)
        v = v.reshape(x.shape).astype(x.dtype)
        y = np.asarray(host(fn(dev(v))))
        cols.append(np.concatenate([y.real.ravel(), y.imag.ravel()]) if y.dtype.kind == "c"
                    else y.ravel())
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,n,kind", [
    ("rfft", None, "f"), ("rfft", 5, "f"), ("rfft", 8, "f"), ("irfft", None, "c"),
    ("irfft", 7, "c"), ("irfft", 6, "c"), ("fft", None, "c"), ("ifft", 4, "c"),
    ("hfft", None, "c"), ("ihfft", None, "f"),
])
def test_vjp_is_the_transpose_of_the_linear_map(name, n, kind, norm) -> None:
    """The VJP equals J^T under the real pairing Re(sum(u * v)), rfft's and irfft's included."""
    x = rand((6,), np.float64, seed=1)
    if kind == "c":
        x = x + 1j * rand((6,), np.float64, seed=2)
    fn = getattr(fnp.fft, name)

    def f(v):
        return fn(v, n=n, norm=norm)

    jac = _real_matrix(f, x)  # rows: output (re, im) coords; cols: input coords
    y, f_vjp = funcgrad.vjp(f, dev(x))
    yh = np.asarray(host(y))
    rng = np.random.default_rng(0)
    u = rng.standard_normal(yh.shape) + (1j * rng.standard_normal(yh.shape)
                                         if yh.dtype.kind == "c" else 0)
    (ct,) = f_vjp(dev(u.astype(yh.dtype)))
    ct = np.asarray(host(ct))
    # Real pairing: <u, y> = sum(Re(u) Re(y) - Im(u) Im(y)).
    u_coords = np.concatenate([u.real.ravel(), -u.imag.ravel()]) if yh.dtype.kind == "c" \
        else u.ravel()
    want = u_coords @ jac
    got = np.concatenate([ct.real.ravel(), -ct.imag.ravel()]) if kind == "c" else ct.ravel()
    assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_rfft_transpose_with_check_grads_rev() -> None:
    x = rand((3, 6), seed=3)
    for norm in NORMS:
        check_grads(lambda v, nm=norm: fnp.fft.rfft(v, norm=nm), dev((x,)), order=2, modes=("rev",))
        check_grads(lambda v, nm=norm: fnp.fft.rfftn(v, s=(4, 5), axes=(1, 0), norm=nm), dev((x,)),
                    order=2, modes=("rev",))
        check_grads(lambda v, nm=norm: fnp.fft.irfftn(v, norm=nm), dev((x + 0.5j * x[::-1],)),
                    order=2, modes=("rev",))


def test_linear_transpose_of_rfft() -> None:
    x = rand((8,), seed=4)
    t = funcgrad.linear_transpose(fnp.fft.rfft, dev(x))
    ct = dev(rand((5,), np.complex128, seed=5))
    (got,) = t(ct)
    _, f_vjp = funcgrad.vjp(fnp.fft.rfft, dev(x))
    assert_allclose(got, f_vjp(ct)[0])


def test_errors_name_the_function() -> None:
    x = dev(rand((4,)))
    with pytest.raises(ValueError, match="fft: invalid norm value 'bad'"):
        fnp.fft.fft(x, norm="bad")
    with pytest.raises(ValueError, match=r"rfft: invalid number of FFT data points \(0\)"):
        fnp.fft.rfft(x, n=0)
    with pytest.raises(TypeError, match="rfft: the input must be real"):
        fnp.fft.rfft(dev(rand((4,), np.complex128)))
    with pytest.raises(ShapeError, match="ifft: axis 3 is out of bounds"):
        fnp.fft.ifft(x, axis=3)
    with pytest.raises(ShapeError, match="fft: the input must be at least 1-dimensional"):
        fnp.fft.fft(dev(np.array(1.0)))
    with pytest.raises(ValueError, match="fftn: shape and axes have different lengths"):
        fnp.fft.fftn(dev(rand((2, 3))), s=(2, 3), axes=(0,))
    with pytest.raises(TypeError, match="out="):
        fnp.fft.fft(x, out=x)
    # No axis to halve: NumPy's bare IndexError, here one that says so.
    for name in ("rfftn", "irfftn", "rfft2", "irfft2"):
        with pytest.raises(IndexError, match="fftn: needs at least one axis"):
            getattr(fnp.fft, name)(dev(rand((2, 3))), axes=())
    # The primitive's own rule, when tracing.
    with pytest.raises(DTypeError, match="fft: rfft needs a float32 or float64 operand"):
        funcgrad.make_jaxpr(lambda v: fft_ops.fft(v, "rfft", (0,), (4,)))(
            np.ones(4, np.complex128))
    with pytest.raises(ShapeError, match="needs sizes"):
        funcgrad.make_jaxpr(lambda v: fft_ops.fft(v, "fft", (0,), (5,)))(
            np.ones(4, np.complex128))


def test_s_without_axes_warns_like_numpy() -> None:
    x = rand((2, 3))
    with pytest.warns(DeprecationWarning, match="axes"):
        got = fnp.fft.fftn(dev(x), s=(2, 3))
    with pytest.warns(DeprecationWarning):
        want = np.fft.fftn(x, s=(2, 3))
    assert_allclose(got, want)


def test_dtypes_follow_numpy() -> None:
    for dt in (np.float32, np.float64, np.int32, np.bool_, np.complex64):
        x = np.ones(4, dt)
        assert fnp.fft.fft(dev(x)).dtype == np.fft.fft(x).dtype
        if dt != np.complex64:
            assert fnp.fft.rfft(dev(x)).dtype == np.fft.rfft(x).dtype
        assert fnp.fft.irfft(dev(x)).dtype == np.fft.irfft(x).dtype
    assert fnp.fft.fftfreq(4).dtype == np.float64


def test_vmap_moves_the_transformed_axes() -> None:
    x = rand((3, 4, 5), seed=6)
    for in_axis in (0, 1, 2):
        f = lambda v: fnp.fft.rfftn(v, axes=(1, 0))  # noqa: E731
        got = funcgrad.vmap(f, in_axes=in_axis)(dev(x))
        want = np.stack([np.fft.rfftn(np.take(x, i, axis=in_axis), axes=(1, 0))
                         for i in range(x.shape[in_axis])])
        assert_allclose(got, want)
    g = funcgrad.vmap(funcgrad.grad(lambda v: fnp.sum(fnp.abs(fnp.fft.fft(v)) ** 2)))(dev(x[0]))
    assert_allclose(g, 2 * 5 * x[0], rtol=1e-12, atol=1e-12)  # Parseval


def test_jit_and_numpy_routing() -> None:
    x = rand((4, 6), seed=7)

    def f(v):
        return fnp.sum(fnp.real(np.fft.irfft(np.fft.rfft(v), n=6) * np.fft.fftshift(v)))

    jf = funcgrad.jit(f)
    assert_allclose(jf(dev(x)), np.sum(x * np.fft.fftshift(x)), rtol=1e-12)
    assert_allclose(funcgrad.grad(jf)(dev(x)), funcgrad.grad(f)(dev(x)))
    assert "fft" in str(funcgrad.make_jaxpr(fnp.fft.fft)(x))


def test_fftfreq_device_and_derivative() -> None:
    out = fnp.fft.fftfreq(6, dev(np.array(0.5)))
    check_device(out)
    assert_allclose(out, np.fft.fftfreq(6, 0.5))
    g = funcgrad.grad(lambda d: fnp.sum(fnp.fft.rfftfreq(5, d) ** 2))(2.0)
    assert_allclose(g, -2 * np.sum(np.fft.rfftfreq(5, 1.0) ** 2) / 8.0, rtol=1e-12)


def test_fftfreq_dtype_as_jax() -> None:
    # jnp.fft.fftfreq(n, d, dtype=...): the frequencies in that dtype
    out = fnp.fft.fftfreq(7, 0.5, dtype=np.float32)
    assert_allclose(out, np.fft.fftfreq(7, 0.5).astype(np.float32))
    out = fnp.fft.rfftfreq(8, dev(np.array(0.1)), dtype=np.float32)
    check_device(out)
    assert_allclose(out, np.fft.rfftfreq(8, 0.1).astype(np.float32))
    with pytest.raises(TypeError, match="float dtype"):
        fnp.fft.fftfreq(4, dtype=np.int32)
