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
