"""Op table: funcgrad.scipy.fft (dct/idct/dctn/idctn, types 1-4, every norm) vs scipy.fft,
with the shared drivers' derivative, vmap and jit checks."""

from __future__ import annotations

import numpy as np
import scipy.fft as sf
from helpers import OpCase, case_adder, rand

import funcgrad.scipy.fft as ff

CASES: list[OpCase] = []
case = case_adder(CASES, "scipy.fft.")

_X = [(rand((3, 5), np.float64, seed=1),), (np.arange(6).reshape(2, 3),)]
for _t in (1, 2, 3, 4):
    for _norm in (None, "ortho", "forward"):
        for _name, _f, _ref in (("dct", ff.dct, sf.dct), ("idct", ff.idct, sf.idct)):
            case(f"{_name}[{_t},{_norm}]",
                 lambda x, f=_f, t=_t, nm=_norm: f(x, t, norm=nm),
                 lambda x, f=_ref, t=_t, nm=_norm: f(x, t, norm=nm), _X,
                 rtol=1e-10, atol=1e-10, grad_args=_X[:1])
        case(f"dct_n_axis[{_t},{_norm}]",
             lambda x, t=_t, nm=_norm: [ff.dct(x, t, 7, 0, nm), ff.idct(x, t, 3, 0, nm)],
             lambda x, t=_t, nm=_norm: [sf.dct(x, t, 7, 0, nm), sf.idct(x, t, 3, 0, nm)],
             _X[:1], rtol=1e-10, atol=1e-10)
        for _name, _f, _ref in (("dctn", ff.dctn, sf.dctn), ("idctn", ff.idctn, sf.idctn)):
            case(f"{_name}[{_t},{_norm}]",
                 lambda x, f=_f, t=_t, nm=_norm: [
                     f(x, t, norm=nm), f(x, t, s=(4, 6), norm=nm), f(x, t, axes=0, norm=nm)],
                 lambda x, f=_ref, t=_t, nm=_norm: [
                     f(x, t, norm=nm), f(x, t, s=(4, 6), norm=nm), f(x, t, axes=0, norm=nm)],
                 _X[:1], rtol=1e-10, atol=1e-10)
for _t in (1, 2, 3, 4):
    case(f"dct_f32[{_t}]", lambda x, t=_t: [ff.dct(x, t), ff.idct(x, t, norm="ortho")],
         lambda x, t=_t: [sf.dct(x, t), sf.idct(x, t, norm="ortho")],
         [(rand((4,), np.float32, seed=2),)], grad_args=[])
case("dct_ortho_not_orthogonalized", lambda x: ff.dct(x, norm="ortho", orthogonalize=False),
     lambda x: sf.dct(x, norm="ortho", orthogonalize=False), _X[:1], rtol=1e-10, atol=1e-10)
case("dct_complex", lambda x: ff.dct(x, norm="ortho"), lambda x: sf.dct(x, norm="ortho"),
     [(rand((2, 4), np.complex128, seed=3),)], rtol=1e-10, atol=1e-10)

# the discrete sine transforms: SciPy's definitions, types 1-4, every norm
for _t in (1, 2, 3, 4):
    for _norm in (None, "ortho", "forward"):
        for _name, _f, _ref in (("dst", ff.dst, sf.dst), ("idst", ff.idst, sf.idst)):
            case(f"{_name}[{_t},{_norm}]",
                 lambda x, f=_f, t=_t, nm=_norm: f(x, t, norm=nm),
                 lambda x, f=_ref, t=_t, nm=_norm: f(x, t, norm=nm), _X,
                 rtol=1e-10, atol=1e-10, grad_args=_X[:1])
        case(f"dst_n_axis[{_t},{_norm}]",
             lambda x, t=_t, nm=_norm: [ff.dst(x, t, 7, 0, nm), ff.idst(x, t, 3, 0, nm)],
             lambda x, t=_t, nm=_norm: [sf.dst(x, t, 7, 0, nm), sf.idst(x, t, 3, 0, nm)],
             _X[:1], rtol=1e-10, atol=1e-10)
        for _name, _f, _ref in (("dstn", ff.dstn, sf.dstn), ("idstn", ff.idstn, sf.idstn)):
            case(f"{_name}[{_t},{_norm}]",
                 lambda x, f=_f, t=_t, nm=_norm: [
                     f(x, t, norm=nm), f(x, t, s=(4, 6), norm=nm), f(x, t, axes=0, norm=nm)],
                 lambda x, f=_ref, t=_t, nm=_norm: [
                     f(x, t, norm=nm), f(x, t, s=(4, 6), norm=nm), f(x, t, axes=0, norm=nm)],
                 _X[:1], rtol=1e-10, atol=1e-10)
    case(f"dst_orthogonalize[{_t}]",
         lambda x, t=_t: [ff.dst(x, t, norm="ortho", orthogonalize=False),
                          ff.idst(x, t, orthogonalize=True), ff.dst(x[:, :1], t)],
         lambda x, t=_t: [sf.dst(x, t, norm="ortho", orthogonalize=False),
                          sf.idst(x, t, orthogonalize=True), sf.dst(x[:, :1], t)],
         _X[:1], rtol=1e-10, atol=1e-10)
    case(f"dst_f32[{_t}]", lambda x, t=_t: [ff.dst(x, t), ff.idst(x, t, norm="ortho")],
         lambda x, t=_t: [sf.dst(x, t), sf.idst(x, t, norm="ortho")],
         [(rand((4,), np.float32, seed=2),)], grad_args=[])
case("dst_complex", lambda x: ff.dst(x, 3, norm="ortho"), lambda x: sf.dst(x, 3, norm="ortho"),
     [(rand((2, 4), np.complex128, seed=3),)], rtol=1e-10, atol=1e-10)

# the Fourier transforms with SciPy's signatures and dtypes (float16 gives single precision,
# s without axes takes the last len(s) axes)
_R = [(rand((4, 6), np.float64, seed=4),)]
_C = [(rand((4, 6), np.complex128, seed=5),)]
for _norm in (None, "ortho", "forward"):
    for _name in ("fft", "ifft", "hfft"):
        case(f"{_name}[{_norm}]",
             lambda x, nm=_norm, n=_name: [getattr(ff, n)(x, norm=nm),
                                           getattr(ff, n)(x, 5, 0, nm, workers=2)],
             lambda x, nm=_norm, n=_name: [getattr(sf, n)(x, norm=nm),
                                           getattr(sf, n)(x, 5, 0, nm, workers=2)],
             _C, rtol=1e-10, atol=1e-10)
    case(f"irfft[{_norm}]", lambda x, nm=_norm: [ff.irfft(x, norm=nm), ff.irfft(x, 7, 0, nm)],
         lambda x, nm=_norm: [sf.irfft(x, norm=nm), sf.irfft(x, 7, 0, nm)],
         _C, rtol=1e-10, atol=1e-10)
    for _name in ("rfft", "ihfft"):
        case(f"{_name}[{_norm}]",
             lambda x, nm=_norm, n=_name: [getattr(ff, n)(x, norm=nm),
                                           getattr(ff, n)(x, 3, 0, nm)],
             lambda x, nm=_norm, n=_name: [getattr(sf, n)(x, norm=nm),
                                           getattr(sf, n)(x, 3, 0, nm)],
             _R, rtol=1e-10, atol=1e-10)
    for _name, _args in (("fft2", _C), ("ifft2", _C), ("fftn", _C), ("ifftn", _C),
                         ("irfft2", _C), ("irfftn", _C), ("hfft2", _C), ("hfftn", _C),
                         ("rfft2", _R), ("rfftn", _R), ("ihfft2", _R), ("ihfftn", _R)):
        case(f"{_name}[{_norm}]",
             lambda x, nm=_norm, n=_name: [getattr(ff, n)(x, norm=nm),
                                           getattr(ff, n)(x, (3, 8), (1, 0), nm),
                                           getattr(ff, n)(x, s=(5, 3), norm=nm)],
             lambda x, nm=_norm, n=_name: [getattr(sf, n)(x, norm=nm),
                                           getattr(sf, n)(x, (3, 8), (1, 0), nm),
                                           getattr(sf, n)(x, s=(5, 3), norm=nm)],
             _args, rtol=1e-10, atol=1e-10)
case("fft_dtypes",
     lambda x: [ff.fft(x), ff.irfft(x), ff.hfft(x), ff.rfftn(x), ff.irfftn(x)],
     lambda x: [sf.fft(x), sf.irfft(x), sf.hfft(x), sf.rfftn(x), sf.irfftn(x)],
     [(rand((3, 4), np.float16, seed=6),), (rand((3, 4), np.float32, seed=6),),
      (np.arange(12).reshape(3, 4),)], rtol=2e-3, atol=2e-3, grad_args=[])
case("fftn_s_only", lambda x: [ff.fftn(x, s=(5,)), ff.irfftn(x, s=(5,))],
     lambda x: [sf.fftn(x, s=(5,)), sf.irfftn(x, s=(5,))], _C, rtol=1e-10, atol=1e-10)
