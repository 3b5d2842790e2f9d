"""Op table: funcgrad.numpy.fft vs numpy.fft.

Every transform with its ``n``/``s``, ``axis``/``axes`` and each ``norm``, on float64, float32,
complex128, complex64 and integer input. Derivatives (to order 2, both modes) cover the
transposes, the real ones (``rfft``'s and ``irfft``'s) included.
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, case_adder, rand

import funcgrad.numpy as fnp

F64, F32, C128, C64, I64 = np.float64, np.float32, np.complex128, np.complex64, np.int64
NORMS = (None, "ortho", "forward")


def _x(shape, dtype=F64, seed=0):
    return rand(shape, dtype, -1.0, 1.0, seed=seed)


CASES: list[OpCase] = []


case = case_adder(CASES)


_REAL = [(_x((6,)),), (_x((3, 5), seed=1),), (_x((4,), F32, seed=2),),
         (np.arange(5, dtype=I64),)]
_CPLX = [(_x((6,), C128),), (_x((3, 5), C128, seed=1),), (_x((4,), C64, seed=2),)]

for _norm in NORMS:
    for _name in ("fft", "ifft"):
        f, r = getattr(fnp.fft, _name), getattr(np.fft, _name)
        case(f"fft.{_name}[{_norm}]", lambda x, f=f, nm=_norm: f(x, norm=nm),
             lambda x, r=r, nm=_norm: r(x, norm=nm), _REAL + _CPLX)
        case(f"fft.{_name}_n_axis[{_norm}]",
             lambda x, f=f, nm=_norm: [f(x, n=4, axis=0, norm=nm), f(x, n=7, norm=nm)],
             lambda x, r=r, nm=_norm: [r(x, n=4, axis=0, norm=nm), r(x, n=7, norm=nm)],
             [(_x((3, 5), seed=3),), (_x((3, 5), C128, seed=4),)])
    case(f"fft.rfft[{_norm}]", lambda x, nm=_norm: fnp.fft.rfft(x, norm=nm),
         lambda x, nm=_norm: np.fft.rfft(x, norm=nm), _REAL)
    case(f"fft.rfft_n_axis[{_norm}]",
         lambda x, nm=_norm: [fnp.fft.rfft(x, n=4, axis=0, norm=nm), fnp.fft.rfft(x, 7, norm=nm),
                              fnp.fft.rfft(x, 2, norm=nm)],
         lambda x, nm=_norm: [np.fft.rfft(x, n=4, axis=0, norm=nm), np.fft.rfft(x, 7, norm=nm),
                              np.fft.rfft(x, 2, norm=nm)],
         [(_x((3, 5), seed=5),)])
    case(f"fft.irfft[{_norm}]", lambda x, nm=_norm: fnp.fft.irfft(x, norm=nm),
         lambda x, nm=_norm: np.fft.irfft(x, norm=nm), _CPLX + _REAL[:2])
    case(f"fft.irfft_n_axis[{_norm}]",
         lambda x, nm=_norm: [fnp.fft.irfft(x, n=5, axis=0, norm=nm),
                              fnp.fft.irfft(x, 8, norm=nm), fnp.fft.irfft(x, 3, norm=nm)],
         lambda x, nm=_norm: [np.fft.irfft(x, n=5, axis=0, norm=nm),
                              np.fft.irfft(x, 8, norm=nm), np.fft.irfft(x, 3, norm=nm)],
         [(_x((3, 5), C128, seed=6),)])
    case(f"fft.hfft[{_norm}]",
         lambda x, nm=_norm: [fnp.fft.hfft(x, norm=nm), fnp.fft.hfft(x, 7, norm=nm)],
         lambda x, nm=_norm: [np.fft.hfft(x, norm=nm), np.fft.hfft(x, 7, norm=nm)],
         [(_x((4,), C128, seed=7),), (_x((2, 5), seed=8),)])
    case(f"fft.ihfft[{_norm}]", lambda x, nm=_norm: fnp.fft.ihfft(x, norm=nm),
         lambda x, nm=_norm: np.fft.ihfft(x, norm=nm), [(_x((6,), seed=9),), (_x((2, 5), seed=10),)])
    for _name in ("fftn", "ifftn", "fft2", "ifft2"):
        f, r = getattr(fnp.fft, _name), getattr(np.fft, _name)
        case(f"fft.{_name}[{_norm}]", lambda x, f=f, nm=_norm: f(x, norm=nm),
             lambda x, r=r, nm=_norm: r(x, norm=nm),
             [(_x((3, 4)),), (_x((2, 3, 4), C128, seed=1),), (_x((3, 4), F32, seed=2),)])
    case(f"fft.rfftn[{_norm}]", lambda x, nm=_norm: fnp.fft.rfftn(x, norm=nm),
         lambda x, nm=_norm: np.fft.rfftn(x, norm=nm),
         [(_x((3, 4)),), (_x((2, 3, 5), seed=1),), (_x((3, 4), F32, seed=2),)])
    case(f"fft.irfftn[{_norm}]", lambda x, nm=_norm: fnp.fft.irfftn(x, norm=nm),
         lambda x, nm=_norm: np.fft.irfftn(x, norm=nm),
         [(_x((3, 4), C128),), (_x((2, 3, 5), C128, seed=1),), (_x((3, 4), C64, seed=2),)])
    case(f"fft.rfft2_irfft2[{_norm}]",
         lambda x, nm=_norm: [fnp.fft.rfft2(x, norm=nm), fnp.fft.irfft2(x, norm=nm)],
         lambda x, nm=_norm: [np.fft.rfft2(x, norm=nm), np.fft.irfft2(x, norm=nm)],
         [(_x((3, 4)),), (_x((2, 3, 4), seed=1),)])

case("fft.fftn_s_axes",
     lambda x: [fnp.fft.fftn(x, s=(3, 2), axes=(2, 0)), fnp.fft.ifftn(x, s=(-1, 5), axes=(0, 1)),
                fnp.fft.fft2(x, s=(4, 4)), fnp.fft.fftn(x, axes=(1,)),
                fnp.fft.fftn(x, axes=(0, 0))],
     lambda x: [np.fft.fftn(x, s=(3, 2), axes=(2, 0)), np.fft.ifftn(x, s=(-1, 5), axes=(0, 1)),
                np.fft.fft2(x, s=(4, 4)), np.fft.fftn(x, axes=(1,)),
                np.fft.fftn(x, axes=(0, 0))],
     [(_x((2, 3, 4)),), (_x((2, 3, 4), C128, seed=1),)])
case("fft.rfftn_s_axes",
     lambda x: [fnp.fft.rfftn(x, s=(3, 6), axes=(2, 0)), fnp.fft.rfftn(x, axes=(1,)),
                fnp.fft.rfft2(x, s=(2, 5), axes=(0, 2))],
     lambda x: [np.fft.rfftn(x, s=(3, 6), axes=(2, 0)), np.fft.rfftn(x, axes=(1,)),
                np.fft.rfft2(x, s=(2, 5), axes=(0, 2))],
     [(_x((2, 3, 4)),)])
case("fft.irfftn_s_axes",
     lambda x: [fnp.fft.irfftn(x, s=(3, 6), axes=(2, 0)), fnp.fft.irfftn(x, axes=(1,)),
                fnp.fft.irfft2(x, s=(2, 5), axes=(0, 2))],
     lambda x: [np.fft.irfftn(x, s=(3, 6), axes=(2, 0)), np.fft.irfftn(x, axes=(1,)),
                np.fft.irfft2(x, s=(2, 5), axes=(0, 2))],
     [(_x((2, 3, 4), C128),)])
case("fft.fftshift",
     lambda x: [fnp.fft.fftshift(x), fnp.fft.fftshift(x, axes=1), fnp.fft.ifftshift(x),
                fnp.fft.ifftshift(x, axes=(0,))],
     lambda x: [np.fft.fftshift(x), np.fft.fftshift(x, axes=1), np.fft.ifftshift(x),
                np.fft.ifftshift(x, axes=(0,))],
     [(_x((3, 4)),), (np.arange(10, dtype=I64).reshape(2, 5),)])
case("fft.fftfreq", lambda d: [fnp.fft.fftfreq(5, d), fnp.fft.fftfreq(6, d),
                               fnp.fft.rfftfreq(5, d), fnp.fft.rfftfreq(6, d)],
     lambda d: [np.fft.fftfreq(5, d), np.fft.fftfreq(6, d), np.fft.rfftfreq(5, d),
                np.fft.rfftfreq(6, d)],
     [(0.5,), (2.0,)], vmap=False)
