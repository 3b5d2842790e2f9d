"""Every public function of funcgrad.scipy called with NumPy inputs while the default device is
a device (the test device: the strict one in the strict pass, CuPy's in the GPU pass).

funcgrad's rule: operations on host (NumPy) arrays alone stay on the host. The library's
formulas use the array modules' own operators on intermediate values, which do not place
operands: a constant made from Python data, or a NumPy scalar (what NumPy's operators give on
0-d arrays), went alone to the default device and then met host arrays in an operator (the
strict device's TypeError, CuPy's on a GPU): scipy.stats.pearsonr, spearmanr, tvar,
percentileofscore, the distributions' mean/var/median, signal.sawtooth, linalg.hessenberg,
fft.fht, ndimage.variance, ... (funcgrad.scipy._device keeps such calls on the host).

The second probe gives the functions with two or more array arguments a device array
first and NumPy arrays after it: the NumPy inputs are uncommitted (JAX's rule) and follow it,
where the formulas' operators met them as host arrays (and device inputs met host constants
under a host default).

The table holds one argument builder per public function, and the first test checks that it
names every one, so a new function joins the probe. Values are the SciPy-parity tests' job;
this probe checks that the call works and that its arrays stay on the host.
"""

from __future__ import annotations

import importlib
import inspect
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import DEVICE

import funcgrad
import funcgrad.numpy as fnp

# The device the probes use: the test device of the strict (and GPU) pass. The NumPy pass
# leaves them out: they would repeat the strict pass's work (they set the device themselves).
_DEV = None if DEVICE == "cpu" else DEVICE
_needs_device = pytest.mark.skipif(_DEV is None, reason="runs in the device (strict, GPU) "
                                   "passes: it makes a device the default itself")

MODULES = ["special", "stats", "signal", "signal.windows", "integrate", "interpolate", "optimize",
           "spatial", "spatial.distance", "cluster.vq", "cluster.hierarchy", "sparse.linalg",
           "fft", "ndimage", "linalg"]

_X = np.array([0.3, 0.5, 0.7, 0.2, 0.9, 0.4, 0.6, 0.8])
_Y = np.array([0.25, 0.55, 0.6, 0.35, 0.95, 0.45, 0.5, 0.85])
_Z = np.array([1.5, 2.0, 2.5, 3.0, 1.2, 1.8, 2.2, 2.8])
_XI = np.array([1, 2, 3, 2, 4, 1, 3, 5])
_M = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_IMG = np.random.default_rng(0).random((6, 7))
_PTS = np.random.default_rng(1).random((5, 3))
_TABLE = np.array([[3, 5], [4, 6]])
_SOS = np.array([[0.0675, 0.135, 0.0675, 1.0, -1.143, 0.4128]])  # butter(2, 0.3, output="sos")
_B, _A = np.array([0.2, 0.3]), np.array([1.0, -0.5])

# Argument lists by name (the table's strings)
_ARGS: dict[str, tuple] = {
    "x": (_X,), "x, y": (_X, _Y), "x, y, z": (_X, _Y, _Z), "z, x": (_Z, _X), "2, x": (2, _X),
    "xi": (_XI,), "xi, z": (_XI, _Z), "x, 2.0": (_X, 2.0), "z, 2.0": (_Z, 2.0),
    "z, 2.0, 3.0": (_Z, 2.0, 3.0), "x, 2.0, 3.0": (_X, 2.0, 3.0), "x, 0.5": (_X, 0.5),
    "m": (_M,), "m, m": (_M, _M), "m, v": (_M, _X[:3]), "img": (_IMG,), "img, 3": (_IMG, 3),
    "img, 1.0": (_IMG, 1.0), "pts": (_PTS,), "pts, pts": (_PTS, _PTS), "x, 3": (_X, 3),
    "8": (8,), "8, 2.0": (8, 2.0), "x, y, z, x": (_X, _Y, _Z, _X), "table": (_TABLE,),
    "x, 0.5, 2.0": (_X, 0.5, 2.0), "x, 2.0, 3.0, 4.0": (_X, 2.0, 3.0, 4.0),
}


def _quadratic(v: Any) -> Any:
    return fnp.sum((v - 0.5) ** 2)


def _lu() -> Any:
    from funcgrad.scipy.linalg import lu_factor
    return lu_factor(_M)


def _cho() -> Any:
    from funcgrad.scipy.linalg import cho_factor
    return cho_factor(_M)


def _qr() -> Any:
    from funcgrad.scipy.linalg import qr
    return qr(_M)


def _linkage() -> Any:
    from funcgrad.scipy.cluster.hierarchy import linkage
    return np.asarray(funcgrad.to_numpy(linkage(_PTS)))


# Functions the generic lists above do not fit: (args, kwargs) builders.
CUSTOM: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "special.bessel_jn": lambda: ((_Z,), {"v": 1}),
    "special.sph_harm_y": lambda: ((2, 1, _X, _Y), {}),
    "stats.ks_1samp": lambda: ((_X, "uniform"), {}),
    "stats.trim_mean": lambda: ((_X, 0.1), {}),
    "stats.trimboth": lambda: ((_X, 0.1), {}),
    "stats.binomtest": lambda: ((np.int64(3), np.int64(8)), {}),
    "signal.get_window": lambda: (("hann", 8), {}),
    "signal.windows.get_window": lambda: (("hann", 8), {}),
    "signal.windows.general_gaussian": lambda: ((8, 1.5, 2.0), {}),
    "signal.filtfilt": lambda: ((_B, _A, _Z), {"padlen": 3}),
    "signal.butter": lambda: ((2, 0.3), {}),
    "signal.cheby1": lambda: ((2, 1.0, 0.3), {}),
    "signal.cheby2": lambda: ((2, 20.0, 0.3), {}),
    "signal.iirfilter": lambda: ((2, 0.3), {"btype": "low"}),
    "signal.iirnotch": lambda: ((0.3, 5.0), {}),
    "signal.iirpeak": lambda: ((0.3, 5.0), {}),
    "signal.sosfilt": lambda: ((_SOS, _Z), {}),
    "signal.sosfilt_zi": lambda: ((_SOS,), {}),
    "signal.sosfiltfilt": lambda: ((_SOS, _Z), {"padlen": 3}),
    "signal.sosfreqz": lambda: ((_SOS,), {"worN": 8}),
    "signal.freqz_sos": lambda: ((_SOS,), {"worN": 8}),
    "signal.savgol_filter": lambda: ((_Z, 5, 2), {}),
    "signal.firwin": lambda: ((5, np.array([0.3])), {}),
    "signal.decimate": lambda: ((np.tile(_Z, 4), 2), {}),
    "signal.peak_prominences": lambda: ((_Z, np.array([2, 6])), {}),
    "signal.peak_widths": lambda: ((_Z, np.array([2, 6])), {}),
    "signal.argrelextrema": lambda: ((_Z, np.greater), {}),
    "integrate.quad": lambda: ((lambda t: t * t, 0.0, 1.0), {}),
    "integrate.dblquad": lambda: ((lambda u, v: u * v, 0.0, 1.0, 0.0, 1.0), {}),
    "integrate.fixed_quad": lambda: ((lambda t: t * t, 0.0, 1.0), {}),
    "integrate.solve_ivp": lambda: ((lambda t, u: -u, (0.0, 1.0), _Z[:2]), {}),
    "integrate.odeint": lambda: ((lambda u, t: -u, _Z[:2], np.linspace(0.0, 1.0, 4)), {}),
    "interpolate.interpn": lambda: (((np.arange(6.0), np.arange(7.0)), _IMG,
                                     np.array([[1.5, 2.5]])), {}),
    "interpolate.pchip_interpolate": lambda: ((np.arange(8.0), _Z, _X * 7), {}),
    "optimize.minimize": lambda: ((_quadratic, _X[:3]), {}),
    "optimize.line_search": lambda: ((_quadratic, _X[:3], 0.5 - _X[:3]), {}),
    "optimize.brentq": lambda: ((lambda t: t - 0.4, 0.0, 1.0), {}),
    "optimize.bisect": lambda: ((lambda t: t - 0.4, 0.0, 1.0), {}),
    "optimize.root_scalar": lambda: ((lambda t: t - 0.4,), {"bracket": [0.0, 1.0]}),
    "optimize.minimize_scalar": lambda: ((lambda t: (t - 0.4) ** 2,), {}),
    "optimize.bracket": lambda: ((lambda t: (t - 0.4) ** 2,), {}),
    "optimize.curve_fit": lambda: ((lambda t, a, b: a * t + b, _X, _Z), {}),
    "optimize.least_squares": lambda: ((lambda v: v - 0.5, _X[:3]), {}),
    "optimize.root": lambda: ((lambda v: v - 0.5, _X[:3]), {}),
    "optimize.fsolve": lambda: ((lambda v: v - 0.5, _X[:3]), {}),
    "optimize.newton": lambda: ((lambda t: t * t - 2.0, _Z), {}),
    "optimize.approx_fprime": lambda: ((_X[:3], _quadratic), {}),
    "optimize.check_grad": lambda: ((_quadratic, lambda v: 2.0 * (v - 0.5), _X[:3]), {}),
    "optimize.fminbound": lambda: ((lambda t: (t - 0.4) ** 2, 0.0, 1.0), {}),
    "optimize.brent": lambda: ((lambda t: (t - 0.4) ** 2,), {}),
    "spatial.distance.squareform": lambda: ((_X[:6],), {}),
    "cluster.hierarchy.fcluster": lambda: ((_linkage(), 2), {"criterion": "maxclust"}),
    "cluster.hierarchy.cophenet": lambda: ((_linkage(),), {}),
    "fft.get_workers": lambda: ((), {}),
    "fft.set_global_backend": lambda: (("scipy",), {}),
    "fft.register_backend": lambda: (("scipy",), {}),
    "ndimage.map_coordinates": lambda: ((_IMG, np.array([[1.5, 2.5], [3.2, 4.1]])), {}),
    "ndimage.affine_transform": lambda: ((_IMG, np.eye(2)), {}),
    "linalg.lu_solve": lambda: ((_lu(), _X[:3]), {}),
    "linalg.cho_solve": lambda: ((_cho(), _X[:3]), {}),
    "linalg.eigh_tridiagonal": lambda: ((_Z[:4], _X[:3]), {}),
    "linalg.eigvalsh_tridiagonal": lambda: ((_Z[:4], _X[:3]), {}),
    "linalg.solve_sylvester": lambda: ((_M, _M, _M), {}),
    "linalg.funm": lambda: ((_M, np.exp), {}),
    "linalg.leslie": lambda: ((_X[:3], _Y[:2]), {}),
    "linalg.cdf2rdf": lambda: ((np.array([1.0 + 2.0j, 1.0 - 2.0j]),
                                np.array([[1.0 + 1.0j, 1.0 - 1.0j], [1.0j, -1.0j]])), {}),
    "linalg.solve_banded": lambda: (((1, 1), np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0],
                                                       [1.0, 1.0, 0.0]]), _X[:3]), {}),
    "linalg.cho_solve_banded": lambda: (((np.array([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0]]), False),
                                         _X[:3]), {}),
    "linalg.diagsvd": lambda: ((_X[:3], 4, 3), {}),
    "linalg.solve_continuous_are": lambda: ((_M, np.eye(3), np.eye(3), np.eye(3)), {}),
    "linalg.solve_discrete_are": lambda: ((_M / 5.0, np.eye(3), np.eye(3), np.eye(3)), {}),
    "linalg.qr_update": lambda: ((*_qr(), _X[:3], _Y[:3]), {}),
    "linalg.qr_insert": lambda: ((*_qr(), _X[:3], 1), {}),
    "linalg.qr_delete": lambda: ((*_qr(), 1), {}),
    "linalg.cossin": lambda: ((np.eye(4),), {"p": 2, "q": 2}),
}

# One generic argument list per function (by its name in _ARGS).
TABLE: dict[str, str] = {
    # cluster.hierarchy
    "cluster.hierarchy.linkage": "m", "cluster.hierarchy.leaves_list": "m",
    # cluster.vq
    "cluster.vq.vq": "x, y",
    # fft
    "fft.dct": "x", "fft.idct": "x", "fft.dctn": "x", "fft.idctn": "x", "fft.dst": "x",
    "fft.idst": "x", "fft.dstn": "x", "fft.idstn": "x", "fft.fft": "x", "fft.ifft": "x",
    "fft.rfft": "x", "fft.irfft": "x", "fft.hfft": "x", "fft.ihfft": "x", "fft.fft2": "m",
    "fft.ifft2": "m", "fft.rfft2": "m", "fft.irfft2": "m", "fft.hfft2": "m", "fft.ihfft2": "m",
    "fft.fftn": "x", "fft.ifftn": "x", "fft.rfftn": "x", "fft.irfftn": "x", "fft.hfftn": "x",
    "fft.ihfftn": "x", "fft.fftfreq": "8", "fft.rfftfreq": "8", "fft.fftshift": "x",
    "fft.ifftshift": "x", "fft.next_fast_len": "8", "fft.prev_fast_len": "8",
    "fft.set_workers": "x", "fft.fht": "z, 2.0, 3.0", "fft.ifht": "z, 2.0, 3.0",
    "fft.fhtoffset": "8, 2.0", "fft.set_backend": "x", "fft.skip_backend": "x",
    # integrate
    "integrate.trapezoid": "x", "integrate.cumulative_trapezoid": "x", "integrate.simpson": "x",
    "integrate.cumulative_simpson": "x", "integrate.romb": "m",
    # linalg
    "linalg.lu": "m", "linalg.lu_factor": "m", "linalg.cholesky": "m", "linalg.cho_factor": "m",
    "linalg.qr": "m", "linalg.svd": "m", "linalg.eigh": "m", "linalg.hessenberg": "m",
    "linalg.polar": "m", "linalg.qr_multiply": "m, m", "linalg.rsf2csf": "m, m",
    "linalg.schur": "m", "linalg.solve": "m, m", "linalg.solve_triangular": "m, m",
    "linalg.inv": "m", "linalg.det": "m", "linalg.expm": "m", "linalg.expm_frechet": "m, m",
    "linalg.sqrtm": "m", "linalg.logm": "m", "linalg.block_diag": "x", "linalg.toeplitz": "x",
    "linalg.circulant": "x", "linalg.hankel": "x", "linalg.companion": "x", "linalg.hilbert": "8",
    "linalg.pascal": "8", "linalg.tril": "x", "linalg.triu": "x", "linalg.hadamard": "8",
    "linalg.dft": "8", "linalg.helmert": "8", "linalg.invhilbert": "8", "linalg.fiedler": "x",
    "linalg.convolution_matrix": "x, 2.0", "linalg.fiedler_companion": "x",
    "linalg.invpascal": "8", "linalg.eig": "m", "linalg.eigvals": "m", "linalg.eigvalsh": "m",
    "linalg.eig_banded": "m", "linalg.eigvals_banded": "m", "linalg.lstsq": "m, m",
    "linalg.pinv": "m", "linalg.pinvh": "m", "linalg.solveh_banded": "m, m",
    "linalg.cholesky_banded": "m", "linalg.solve_toeplitz": "x, y",
    "linalg.matmul_toeplitz": "x, y", "linalg.solve_circulant": "x, y", "linalg.svdvals": "m",
    "linalg.null_space": "m", "linalg.orth": "m", "linalg.subspace_angles": "m, m",
    "linalg.orthogonal_procrustes": "m, m", "linalg.rq": "m",
    "linalg.fractional_matrix_power": "m, m", "linalg.cosm": "m", "linalg.sinm": "m",
    "linalg.tanm": "m", "linalg.coshm": "m", "linalg.sinhm": "m", "linalg.tanhm": "m",
    "linalg.signm": "m", "linalg.norm": "x", "linalg.issymmetric": "m", "linalg.ishermitian": "m",
    "linalg.bandwidth": "m", "linalg.khatri_rao": "m, m",
    "linalg.solve_continuous_lyapunov": "m, m", "linalg.solve_lyapunov": "m, m",
    "linalg.solve_discrete_lyapunov": "m, m", "linalg.expm_cond": "m",
    "linalg.matrix_balance": "m", "linalg.ldl": "m",
    "linalg.clarkson_woodruff_transform": "img, 3", "linalg.qz": "m, m", "linalg.ordqz": "m, m",
    # ndimage
    "ndimage.shift": "x, 2.0", "ndimage.zoom": "x, 2.0", "ndimage.rotate": "img, 3",
    "ndimage.spline_filter1d": "x", "ndimage.spline_filter": "x", "ndimage.correlate1d": "x, y",
    "ndimage.convolve1d": "x, y", "ndimage.correlate": "x, y", "ndimage.convolve": "x, y",
    "ndimage.gaussian_filter1d": "x, 2.0", "ndimage.gaussian_filter": "x, 2.0",
    "ndimage.uniform_filter1d": "x, 2.0", "ndimage.uniform_filter": "x",
    "ndimage.minimum_filter1d": "x, 2.0", "ndimage.maximum_filter1d": "x, 2.0",
    "ndimage.minimum_filter": "x, y, z", "ndimage.maximum_filter": "x, y, z",
    "ndimage.median_filter": "x, y, z", "ndimage.rank_filter": "z, 2.0, 3.0",
    "ndimage.percentile_filter": "z, 2.0, 3.0", "ndimage.sobel": "x", "ndimage.prewitt": "x",
    "ndimage.laplace": "x", "ndimage.gaussian_laplace": "x, 2.0",
    "ndimage.gaussian_gradient_magnitude": "x, 2.0", "ndimage.generate_binary_structure": "8, 2.0",
    "ndimage.iterate_structure": "x, 0.5", "ndimage.binary_erosion": "x",
    "ndimage.binary_dilation": "x", "ndimage.binary_opening": "x", "ndimage.binary_closing": "x",
    "ndimage.binary_fill_holes": "x", "ndimage.distance_transform_edt": "x", "ndimage.label": "x",
    "ndimage.find_objects": "x", "ndimage.sum_labels": "x", "ndimage.sum": "x",
    "ndimage.mean": "x", "ndimage.variance": "x", "ndimage.standard_deviation": "x",
    "ndimage.minimum": "x", "ndimage.maximum": "x", "ndimage.median": "x",
    "ndimage.minimum_position": "x", "ndimage.maximum_position": "x",
    "ndimage.center_of_mass": "x",
    # optimize
    "optimize.rosen": "x", "optimize.rosen_der": "x", "optimize.rosen_hess": "x",
    "optimize.rosen_hess_prod": "x, y", "optimize.linear_sum_assignment": "m",
    "optimize.nnls": "m, v",
    # signal
    "signal.convolve": "x, y", "signal.correlate": "x, y", "signal.convolve2d": "m, m",
    "signal.correlate2d": "m, m", "signal.fftconvolve": "x, y", "signal.detrend": "x",
    "signal.stft": "x", "signal.istft": "m", "signal.csd": "x, y", "signal.welch": "x",
    "signal.periodogram": "x", "signal.hilbert": "x", "signal.lfilter": "x, y, z",
    "signal.lfilter_zi": "x, y", "signal.medfilt": "x", "signal.medfilt2d": "m",
    "signal.oaconvolve": "x, y", "signal.zpk2tf": "z, 2.0, 3.0", "signal.zpk2sos": "z, 2.0, 3.0",
    "signal.tf2sos": "x, y", "signal.freqz": "x", "signal.savgol_coeffs": "8, 2.0",
    "signal.kaiser_beta": "8", "signal.kaiser_atten": "x, y", "signal.kaiserord": "8, 2.0",
    "signal.spectrogram": "x", "signal.find_peaks": "x", "signal.argrelmax": "x",
    "signal.argrelmin": "x", "signal.upfirdn": "x, y", "signal.resample_poly": "z, 2.0, 3.0",
    "signal.resample": "x, 2.0", "signal.chirp": "x, y, z, x", "signal.sawtooth": "x",
    "signal.square": "x", "signal.gausspulse": "x", "signal.unit_impulse": "xi",
    "signal.correlation_lags": "8, 2.0", "signal.coherence": "x, y", "signal.lfiltic": "x, y, z",
    "signal.tf2zpk": "x, y",
    # signal.windows
    "signal.windows.boxcar": "8", "signal.windows.triang": "8", "signal.windows.parzen": "8",
    "signal.windows.bohman": "8", "signal.windows.blackman": "8", "signal.windows.nuttall": "8",
    "signal.windows.blackmanharris": "8", "signal.windows.flattop": "8",
    "signal.windows.bartlett": "8", "signal.windows.barthann": "8", "signal.windows.hamming": "8",
    "signal.windows.kaiser": "8, 2.0", "signal.windows.gaussian": "8, 2.0",
    "signal.windows.general_cosine": "2, x", "signal.windows.general_hamming": "8, 2.0",
    "signal.windows.chebwin": "8, 2.0", "signal.windows.cosine": "8", "signal.windows.hann": "8",
    "signal.windows.exponential": "8", "signal.windows.tukey": "8", "signal.windows.taylor": "8",
    "signal.windows.dpss": "8, 2.0", "signal.windows.lanczos": "8",
    # sparse.linalg
    "sparse.linalg.cg": "m, m", "sparse.linalg.bicgstab": "m, m", "sparse.linalg.gmres": "m, m",
    # spatial
    "spatial.distance_matrix": "m, m", "spatial.minkowski_distance": "x, y",
    # spatial.distance
    "spatial.distance.cdist": "m, m", "spatial.distance.pdist": "m",
    "spatial.distance.braycurtis": "x, y", "spatial.distance.canberra": "x, y",
    "spatial.distance.chebyshev": "x, y", "spatial.distance.cityblock": "x, y",
    "spatial.distance.correlation": "x, y", "spatial.distance.cosine": "x, y",
    "spatial.distance.dice": "x, y", "spatial.distance.euclidean": "x, y",
    "spatial.distance.hamming": "x, y", "spatial.distance.jaccard": "x, y",
    "spatial.distance.jensenshannon": "x, y", "spatial.distance.mahalanobis": "x, y, z",
    "spatial.distance.minkowski": "x, y", "spatial.distance.rogerstanimoto": "x, y",
    "spatial.distance.russellrao": "x, y", "spatial.distance.seuclidean": "x, y, z",
    "spatial.distance.sokalsneath": "x, y", "spatial.distance.sqeuclidean": "x, y",
    "spatial.distance.yule": "x, y", "spatial.distance.distance_matrix": "m, m",
    "spatial.distance.minkowski_distance": "x, y",
    # special
    "special.erf": "x", "special.erfc": "x", "special.erfinv": "x", "special.erfcinv": "x",
    "special.gammaln": "x", "special.digamma": "x", "special.psi": "x",
    "special.polygamma": "2, x", "special.expit": "x", "special.logit": "x",
    "special.log_expit": "x", "special.softmax": "x", "special.log_softmax": "x",
    "special.logsumexp": "x", "special.xlogy": "x, y", "special.xlog1py": "x, y",
    "special.entr": "x", "special.ndtr": "x", "special.ndtri": "x", "special.gamma": "x",
    "special.gammasgn": "x", "special.loggamma": "x", "special.beta": "x, y",
    "special.betaln": "x, y", "special.multigammaln": "img, 3", "special.log_ndtr": "x",
    "special.ndtri_exp": "x", "special.i0": "x", "special.i0e": "x", "special.i1": "x",
    "special.i1e": "x", "special.gammainc": "x, y", "special.gammaincc": "x, y",
    "special.gammaincinv": "x, y", "special.gammainccinv": "x, y", "special.pdtr": "x, y",
    "special.pdtrc": "x, y", "special.chdtr": "x, y", "special.chdtrc": "x, y",
    "special.chdtri": "x, y", "special.gdtr": "x, y, z", "special.gdtrc": "x, y, z",
    "special.bdtr": "x, y, z", "special.bdtrc": "x, y, z", "special.bdtri": "x, y, z",
    "special.nbdtr": "x, y, z", "special.nbdtrc": "x, y, z", "special.nbdtri": "x, y, z",
    "special.fdtr": "x, y, z", "special.fdtrc": "x, y, z", "special.fdtri": "x, y, z",
    "special.binom": "x, y", "special.rel_entr": "x, y", "special.kl_div": "x, y",
    "special.betainc": "x, y, z", "special.betaincinv": "x, y, z", "special.zeta": "x",
    "special.exp1": "x", "special.expi": "x", "special.expn": "x, y", "special.erfcx": "x",
    "special.factorial": "x", "special.comb": "x, y", "special.poch": "x, y",
    "special.boxcox": "x, y", "special.boxcox1p": "x, y", "special.inv_boxcox": "x, y",
    "special.inv_boxcox1p": "x, y", "special.exprel": "x", "special.spence": "x",
    "special.bernoulli": "8", "special.dawsn": "x", "special.owens_t": "x, y", "special.sici": "x",
    "special.fresnel": "x", "special.hyp1f1": "x, y, z", "special.hyp2f1": "x, y, z, x",
    "special.wofz": "x", "special.huber": "x, y", "special.pseudo_huber": "x, y",
    "special.softplus": "x", "special.cbrt": "x", "special.exp2": "x", "special.exp10": "x",
    "special.expm1": "x", "special.log1p": "x", "special.j0": "x", "special.j1": "x",
    "special.y0": "x", "special.y1": "x", "special.k0": "x", "special.k1": "x", "special.k0e": "x",
    "special.k1e": "x", "special.ellipk": "x", "special.ellipkm1": "x", "special.ellipe": "x",
    "special.lambertw": "x", "special.rgamma": "x", "special.cosm1": "x", "special.zetac": "x",
    "special.agm": "x, y", "special.stdtr": "x, y", "special.stdtrit": "x, y",
    "special.eval_legendre": "x, y", "special.eval_chebyt": "x, y", "special.eval_chebyu": "x, y",
    "special.eval_hermite": "2, x", "special.eval_hermitenorm": "2, x",
    "special.eval_laguerre": "x, y", "special.eval_genlaguerre": "x, y, z",
    "special.eval_jacobi": "x, y, z, x", "special.eval_gegenbauer": "x, y, z",
    "special.elliprf": "x, y, z", "special.elliprc": "x, y", "special.elliprd": "x, y, z",
    "special.elliprj": "x, y, z, x", "special.elliprg": "x, y, z", "special.ellipkinc": "x, y",
    "special.ellipeinc": "x, y", "special.jv": "x, y", "special.yv": "x, y", "special.iv": "x, y",
    "special.kv": "x, y", "special.ive": "x, y", "special.kve": "x, y", "special.shichi": "x",
    "special.airy": "x", "special.airye": "x", "special.spherical_jn": "x, y",
    "special.spherical_yn": "x, y", "special.spherical_in": "x, y", "special.spherical_kn": "x, y",
    "special.jn": "x, y", "special.yn": "x, y", "special.kn": "x, y", "special.jve": "x, y",
    "special.yve": "x, y", "special.erfi": "x", "special.voigt_profile": "x, y, z",
    "special.perm": "x, y", "special.powm1": "x, y", "special.ellipj": "x, y",
    "special.struve": "x, y", "special.modstruve": "x, y",
    # stats
    "stats.mode": "x", "stats.rankdata": "x", "stats.sem": "x", "stats.entropy": "x",
    "stats.zscore": "x", "stats.skew": "x", "stats.kurtosis": "x", "stats.pearsonr": "x, y",
    "stats.ttest_1samp": "2, x", "stats.ttest_ind": "x, y", "stats.ttest_rel": "x, y",
    "stats.spearmanr": "x, y", "stats.kendalltau": "x, y", "stats.linregress": "x, y",
    "stats.gmean": "x", "stats.hmean": "x", "stats.pmean": "x, 2.0", "stats.moment": "x",
    "stats.variation": "x", "stats.iqr": "x", "stats.median_abs_deviation": "x",
    "stats.describe": "x", "stats.ks_2samp": "x, y", "stats.kstest": "x, y", "stats.zmap": "x, y",
    "stats.chisquare": "x", "stats.f_oneway": "x, y", "stats.skewtest": "x",
    "stats.kurtosistest": "x", "stats.normaltest": "x", "stats.bartlett": "x, y",
    "stats.levene": "x, y", "stats.fligner": "x, y", "stats.mannwhitneyu": "x, y",
    "stats.wilcoxon": "x", "stats.ranksums": "x, y", "stats.kruskal": "x, y",
    "stats.friedmanchisquare": "x, y, z", "stats.chi2_contingency": "x",
    "stats.expected_freq": "x", "stats.fisher_exact": "table", "stats.tmean": "x",
    "stats.tvar": "x", "stats.tstd": "x", "stats.tsem": "x", "stats.tmin": "x", "stats.tmax": "x",
    "stats.trim1": "x, 2.0", "stats.sigmaclip": "x", "stats.percentileofscore": "x, y",
    "stats.scoreatpercentile": "x, y", "stats.circmean": "x", "stats.circvar": "x",
    "stats.circstd": "x", "stats.boxcox": "x", "stats.boxcox_llf": "x, y",
    "stats.pointbiserialr": "x, y", "stats.wasserstein_distance": "x, y",
    "stats.energy_distance": "x, y", "stats.combine_pvalues": "x",
    "stats.false_discovery_control": "x", "stats.gstd": "x", "stats.anderson": "x",
    "stats.shapiro": "x", "stats.binned_statistic": "x, y", "stats.binned_statistic_2d": "x, y, z",
    "stats.binned_statistic_dd": "x, y",
    # stats.bernoulli
    "stats.bernoulli.pmf": "x, y", "stats.bernoulli.logpmf": "x, y", "stats.bernoulli.cdf": "x, y",
    "stats.bernoulli.logcdf": "x, y", "stats.bernoulli.sf": "x, y",
    "stats.bernoulli.logsf": "x, y", "stats.bernoulli.ppf": "x, y", "stats.bernoulli.isf": "x, y",
    "stats.bernoulli.mean": "x", "stats.bernoulli.var": "x", "stats.bernoulli.std": "x",
    "stats.bernoulli.median": "x", "stats.bernoulli.stats": "x",
    "stats.bernoulli.interval": "x, y",
    # stats.beta
    "stats.beta.pdf": "x, y, z", "stats.beta.logpdf": "x, y, z", "stats.beta.cdf": "x, y, z",
    "stats.beta.logcdf": "x, y, z", "stats.beta.sf": "x, y, z", "stats.beta.logsf": "x, y, z",
    "stats.beta.ppf": "x, y, z", "stats.beta.isf": "x, y, z", "stats.beta.mean": "x, y",
    "stats.beta.var": "x, y", "stats.beta.std": "x, y", "stats.beta.entropy": "x, y",
    "stats.beta.median": "x, y", "stats.beta.stats": "x, y", "stats.beta.interval": "x, y, z",
    # stats.betabinom
    "stats.betabinom.pmf": "x, y, z, x", "stats.betabinom.logpmf": "x, y, z, x",
    "stats.betabinom.cdf": "x, y, z, x", "stats.betabinom.sf": "x, y, z, x",
    "stats.betabinom.ppf": "x, y, z, x", "stats.betabinom.isf": "x, y, z, x",
    "stats.betabinom.mean": "x, y, z", "stats.betabinom.var": "x, y, z",
    "stats.betabinom.std": "x, y, z", "stats.betabinom.median": "x, y, z",
    "stats.betabinom.stats": "x, y, z", "stats.betabinom.interval": "x, y, z, x",
    # stats.binom
    "stats.binom.pmf": "x, y, z", "stats.binom.logpmf": "x, y, z", "stats.binom.cdf": "x, y, z",
    "stats.binom.logcdf": "x, y, z", "stats.binom.sf": "x, y, z", "stats.binom.logsf": "x, y, z",
    "stats.binom.ppf": "x, y, z", "stats.binom.isf": "x, y, z", "stats.binom.mean": "x, y",
    "stats.binom.var": "x, y", "stats.binom.std": "x, y", "stats.binom.median": "x, y",
    "stats.binom.stats": "x, y", "stats.binom.interval": "x, y, z",
    # stats.cauchy
    "stats.cauchy.pdf": "x", "stats.cauchy.logpdf": "x", "stats.cauchy.cdf": "x",
    "stats.cauchy.logcdf": "x", "stats.cauchy.sf": "x", "stats.cauchy.logsf": "x",
    "stats.cauchy.ppf": "x", "stats.cauchy.isf": "x", "stats.cauchy.mean": "x",
    "stats.cauchy.var": "x", "stats.cauchy.std": "x", "stats.cauchy.entropy": "x",
    "stats.cauchy.median": "x", "stats.cauchy.stats": "x", "stats.cauchy.interval": "x",
    # stats.chi2
    "stats.chi2.pdf": "x, y", "stats.chi2.logpdf": "x, y", "stats.chi2.cdf": "x, y",
    "stats.chi2.logcdf": "x, y", "stats.chi2.sf": "x, y", "stats.chi2.logsf": "x, y",
    "stats.chi2.ppf": "x, y", "stats.chi2.isf": "x, y", "stats.chi2.mean": "x",
    "stats.chi2.var": "x", "stats.chi2.std": "x", "stats.chi2.entropy": "x",
    "stats.chi2.median": "x", "stats.chi2.stats": "x", "stats.chi2.interval": "x, y",
    # stats.dirichlet
    "stats.dirichlet.pdf": "x, y", "stats.dirichlet.logpdf": "x, y", "stats.dirichlet.mean": "x",
    "stats.dirichlet.var": "x", "stats.dirichlet.entropy": "x",
    # stats.expon
    "stats.expon.pdf": "x", "stats.expon.logpdf": "x", "stats.expon.cdf": "x",
    "stats.expon.logcdf": "x", "stats.expon.sf": "x", "stats.expon.logsf": "x",
    "stats.expon.ppf": "x", "stats.expon.isf": "x", "stats.expon.mean": "x",
    "stats.expon.var": "x", "stats.expon.std": "x", "stats.expon.entropy": "x",
    "stats.expon.median": "x", "stats.expon.stats": "x", "stats.expon.interval": "x",
    # stats.f
    "stats.f.pdf": "x, y, z", "stats.f.logpdf": "x, y, z", "stats.f.cdf": "x, y, z",
    "stats.f.logcdf": "x, y, z", "stats.f.sf": "x, y, z", "stats.f.logsf": "x, y, z",
    "stats.f.ppf": "x, y, z", "stats.f.isf": "x, y, z", "stats.f.mean": "x, y",
    "stats.f.var": "x, y", "stats.f.std": "x, y", "stats.f.entropy": "x, y",
    "stats.f.median": "x, y", "stats.f.stats": "x, y", "stats.f.interval": "x, y, z",
    # stats.gamma
    "stats.gamma.pdf": "x, y", "stats.gamma.logpdf": "x, y", "stats.gamma.cdf": "x, y",
    "stats.gamma.logcdf": "x, y", "stats.gamma.sf": "x, y", "stats.gamma.logsf": "x, y",
    "stats.gamma.ppf": "x, y", "stats.gamma.isf": "x, y", "stats.gamma.mean": "x",
    "stats.gamma.var": "x", "stats.gamma.std": "x", "stats.gamma.entropy": "x",
    "stats.gamma.median": "x", "stats.gamma.stats": "x", "stats.gamma.interval": "x, y",
    # stats.gennorm
    "stats.gennorm.pdf": "x, y", "stats.gennorm.logpdf": "x, y", "stats.gennorm.cdf": "x, y",
    "stats.gennorm.logcdf": "x, y", "stats.gennorm.sf": "x, y", "stats.gennorm.logsf": "x, y",
    "stats.gennorm.ppf": "x, y", "stats.gennorm.isf": "x, y", "stats.gennorm.mean": "x",
    "stats.gennorm.var": "x", "stats.gennorm.std": "x", "stats.gennorm.entropy": "x",
    "stats.gennorm.median": "x", "stats.gennorm.stats": "x", "stats.gennorm.interval": "x, y",
    # stats.geom
    "stats.geom.pmf": "x, y", "stats.geom.logpmf": "x, y", "stats.geom.cdf": "x, y",
    "stats.geom.logcdf": "x, y", "stats.geom.sf": "x, y", "stats.geom.logsf": "x, y",
    "stats.geom.ppf": "x, y", "stats.geom.isf": "x, y", "stats.geom.mean": "x",
    "stats.geom.var": "x", "stats.geom.std": "x", "stats.geom.median": "x",
    "stats.geom.stats": "x", "stats.geom.interval": "x, y",
    # stats.gumbel_l
    "stats.gumbel_l.pdf": "x", "stats.gumbel_l.logpdf": "x", "stats.gumbel_l.cdf": "x",
    "stats.gumbel_l.logcdf": "x", "stats.gumbel_l.sf": "x", "stats.gumbel_l.logsf": "x",
    "stats.gumbel_l.ppf": "x", "stats.gumbel_l.isf": "x", "stats.gumbel_l.mean": "x",
    "stats.gumbel_l.var": "x", "stats.gumbel_l.std": "x", "stats.gumbel_l.entropy": "x",
    "stats.gumbel_l.median": "x", "stats.gumbel_l.stats": "x", "stats.gumbel_l.interval": "x",
    # stats.gumbel_r
    "stats.gumbel_r.pdf": "x", "stats.gumbel_r.logpdf": "x", "stats.gumbel_r.cdf": "x",
    "stats.gumbel_r.logcdf": "x", "stats.gumbel_r.sf": "x", "stats.gumbel_r.logsf": "x",
    "stats.gumbel_r.ppf": "x", "stats.gumbel_r.isf": "x", "stats.gumbel_r.mean": "x",
    "stats.gumbel_r.var": "x", "stats.gumbel_r.std": "x", "stats.gumbel_r.entropy": "x",
    "stats.gumbel_r.median": "x", "stats.gumbel_r.stats": "x", "stats.gumbel_r.interval": "x",
    # stats.halfnorm
    "stats.halfnorm.pdf": "x", "stats.halfnorm.logpdf": "x", "stats.halfnorm.cdf": "x",
    "stats.halfnorm.logcdf": "x", "stats.halfnorm.sf": "x", "stats.halfnorm.logsf": "x",
    "stats.halfnorm.ppf": "x", "stats.halfnorm.isf": "x", "stats.halfnorm.mean": "x",
    "stats.halfnorm.var": "x", "stats.halfnorm.std": "x", "stats.halfnorm.entropy": "x",
    "stats.halfnorm.median": "x", "stats.halfnorm.stats": "x", "stats.halfnorm.interval": "x",
    # stats.ksone
    "stats.ksone.cdf": "x, y", "stats.ksone.sf": "x, y", "stats.ksone.ppf": "x, y",
    "stats.ksone.isf": "x, y", "stats.ksone.median": "x", "stats.ksone.interval": "x, y",
    # stats.kstwo
    "stats.kstwo.cdf": "x, y", "stats.kstwo.sf": "x, y", "stats.kstwo.ppf": "x, y",
    "stats.kstwo.isf": "x, y", "stats.kstwo.median": "x", "stats.kstwo.interval": "x, y",
    # stats.kstwobign
    "stats.kstwobign.pdf": "x", "stats.kstwobign.logpdf": "x", "stats.kstwobign.cdf": "x",
    "stats.kstwobign.logcdf": "x", "stats.kstwobign.sf": "x", "stats.kstwobign.logsf": "x",
    "stats.kstwobign.ppf": "x", "stats.kstwobign.isf": "x", "stats.kstwobign.median": "x",
    "stats.kstwobign.interval": "x",
    # stats.laplace
    "stats.laplace.pdf": "x", "stats.laplace.logpdf": "x", "stats.laplace.cdf": "x",
    "stats.laplace.logcdf": "x", "stats.laplace.sf": "x", "stats.laplace.logsf": "x",
    "stats.laplace.ppf": "x", "stats.laplace.isf": "x", "stats.laplace.mean": "x",
    "stats.laplace.var": "x", "stats.laplace.std": "x", "stats.laplace.entropy": "x",
    "stats.laplace.median": "x", "stats.laplace.stats": "x", "stats.laplace.interval": "x",
    # stats.logistic
    "stats.logistic.pdf": "x", "stats.logistic.logpdf": "x", "stats.logistic.cdf": "x",
    "stats.logistic.logcdf": "x", "stats.logistic.sf": "x", "stats.logistic.logsf": "x",
    "stats.logistic.ppf": "x", "stats.logistic.isf": "x", "stats.logistic.mean": "x",
    "stats.logistic.var": "x", "stats.logistic.std": "x", "stats.logistic.entropy": "x",
    "stats.logistic.median": "x", "stats.logistic.stats": "x", "stats.logistic.interval": "x",
    # stats.lognorm
    "stats.lognorm.pdf": "x, y", "stats.lognorm.logpdf": "x, y", "stats.lognorm.cdf": "x, y",
    "stats.lognorm.logcdf": "x, y", "stats.lognorm.sf": "x, y", "stats.lognorm.logsf": "x, y",
    "stats.lognorm.ppf": "x, y", "stats.lognorm.isf": "x, y", "stats.lognorm.mean": "x",
    "stats.lognorm.var": "x", "stats.lognorm.std": "x", "stats.lognorm.entropy": "x",
    "stats.lognorm.median": "x", "stats.lognorm.stats": "x", "stats.lognorm.interval": "x, y",
    # stats.multinomial
    "stats.multinomial.pmf": "x, y, z", "stats.multinomial.logpmf": "x, y, z",
    "stats.multinomial.mean": "x, y",
    # stats.multivariate_normal
    "stats.multivariate_normal.pdf": "x", "stats.multivariate_normal.logpdf": "x",
    "stats.multivariate_normal.entropy": "x",
    # stats.nbinom
    "stats.nbinom.pmf": "x, y, z", "stats.nbinom.logpmf": "x, y, z", "stats.nbinom.cdf": "x, y, z",
    "stats.nbinom.logcdf": "x, y, z", "stats.nbinom.sf": "x, y, z",
    "stats.nbinom.logsf": "x, y, z", "stats.nbinom.ppf": "x, y, z", "stats.nbinom.isf": "x, y, z",
    "stats.nbinom.mean": "x, y", "stats.nbinom.var": "x, y", "stats.nbinom.std": "x, y",
    "stats.nbinom.median": "x, y", "stats.nbinom.stats": "x, y",
    "stats.nbinom.interval": "x, y, z",
    # stats.norm
    "stats.norm.pdf": "x", "stats.norm.logpdf": "x", "stats.norm.cdf": "x",
    "stats.norm.logcdf": "x", "stats.norm.sf": "x", "stats.norm.logsf": "x", "stats.norm.ppf": "x",
    "stats.norm.isf": "x", "stats.norm.mean": "x", "stats.norm.var": "x", "stats.norm.std": "x",
    "stats.norm.entropy": "x", "stats.norm.median": "x", "stats.norm.stats": "x",
    "stats.norm.interval": "x",
    # stats.pareto
    "stats.pareto.pdf": "x, y", "stats.pareto.logpdf": "x, y", "stats.pareto.cdf": "x, y",
    "stats.pareto.logcdf": "x, y", "stats.pareto.sf": "x, y", "stats.pareto.logsf": "x, y",
    "stats.pareto.ppf": "x, y", "stats.pareto.isf": "x, y", "stats.pareto.mean": "x",
    "stats.pareto.var": "x", "stats.pareto.std": "x", "stats.pareto.entropy": "x",
    "stats.pareto.median": "x", "stats.pareto.stats": "x", "stats.pareto.interval": "x, y",
    # stats.poisson
    "stats.poisson.pmf": "x, y", "stats.poisson.logpmf": "x, y", "stats.poisson.cdf": "x, y",
    "stats.poisson.logcdf": "x, y", "stats.poisson.sf": "x, y", "stats.poisson.logsf": "x, y",
    "stats.poisson.ppf": "x, y", "stats.poisson.isf": "x, y", "stats.poisson.mean": "x",
    "stats.poisson.var": "x", "stats.poisson.std": "x", "stats.poisson.entropy": "x",
    "stats.poisson.median": "x", "stats.poisson.stats": "x", "stats.poisson.interval": "x, y",
    # stats.rayleigh
    "stats.rayleigh.pdf": "x", "stats.rayleigh.logpdf": "x", "stats.rayleigh.cdf": "x",
    "stats.rayleigh.logcdf": "x", "stats.rayleigh.sf": "x", "stats.rayleigh.logsf": "x",
    "stats.rayleigh.ppf": "x", "stats.rayleigh.isf": "x", "stats.rayleigh.mean": "x",
    "stats.rayleigh.var": "x", "stats.rayleigh.std": "x", "stats.rayleigh.entropy": "x",
    "stats.rayleigh.median": "x", "stats.rayleigh.stats": "x", "stats.rayleigh.interval": "x",
    # stats.t
    "stats.t.pdf": "x, y", "stats.t.logpdf": "x, y", "stats.t.cdf": "x, y",
    "stats.t.logcdf": "x, y", "stats.t.sf": "x, y", "stats.t.logsf": "x, y", "stats.t.ppf": "x, y",
    "stats.t.isf": "x, y", "stats.t.mean": "x", "stats.t.var": "x", "stats.t.std": "x",
    "stats.t.entropy": "x", "stats.t.median": "x", "stats.t.stats": "x",
    "stats.t.interval": "x, y",
    # stats.truncnorm
    "stats.truncnorm.pdf": "x, y, z", "stats.truncnorm.logpdf": "x, y, z",
    "stats.truncnorm.cdf": "x, y, z", "stats.truncnorm.logcdf": "x, y, z",
    "stats.truncnorm.sf": "x, y, z", "stats.truncnorm.logsf": "x, y, z",
    "stats.truncnorm.ppf": "x, y, z", "stats.truncnorm.isf": "x, y, z",
    "stats.truncnorm.mean": "x, y", "stats.truncnorm.var": "x, y", "stats.truncnorm.std": "x, y",
    "stats.truncnorm.median": "x, y", "stats.truncnorm.stats": "x, y",
    "stats.truncnorm.interval": "x, y, z",
    # stats.uniform
    "stats.uniform.pdf": "x", "stats.uniform.logpdf": "x", "stats.uniform.cdf": "x",
    "stats.uniform.logcdf": "x", "stats.uniform.sf": "x", "stats.uniform.logsf": "x",
    "stats.uniform.ppf": "x", "stats.uniform.isf": "x", "stats.uniform.mean": "x",
    "stats.uniform.var": "x", "stats.uniform.std": "x", "stats.uniform.entropy": "x",
    "stats.uniform.median": "x", "stats.uniform.stats": "x", "stats.uniform.interval": "x",
    # stats.vonmises
    "stats.vonmises.pdf": "x, y", "stats.vonmises.logpdf": "x, y", "stats.vonmises.cdf": "x, y",
    "stats.vonmises.sf": "x, y", "stats.vonmises.ppf": "x, y", "stats.vonmises.isf": "x, y",
    "stats.vonmises.entropy": "x", "stats.vonmises.median": "x", "stats.vonmises.interval": "x, y",
    # stats.weibull_min
    "stats.weibull_min.pdf": "x, y", "stats.weibull_min.logpdf": "x, y",
    "stats.weibull_min.cdf": "x, y", "stats.weibull_min.logcdf": "x, y",
    "stats.weibull_min.sf": "x, y", "stats.weibull_min.logsf": "x, y",
    "stats.weibull_min.ppf": "x, y", "stats.weibull_min.isf": "x, y",
    "stats.weibull_min.mean": "x", "stats.weibull_min.var": "x", "stats.weibull_min.std": "x",
    "stats.weibull_min.entropy": "x", "stats.weibull_min.median": "x",
    "stats.weibull_min.stats": "x", "stats.weibull_min.interval": "x, y",
    # stats.wrapcauchy
    "stats.wrapcauchy.pdf": "x, y", "stats.wrapcauchy.logpdf": "x, y",
    "stats.wrapcauchy.cdf": "x, y", "stats.wrapcauchy.sf": "x, y", "stats.wrapcauchy.ppf": "x, y",
    "stats.wrapcauchy.isf": "x, y", "stats.wrapcauchy.entropy": "x",
    "stats.wrapcauchy.median": "x", "stats.wrapcauchy.interval": "x, y",
}
# A distribution's support takes the arguments of its mean; fit takes data.
TABLE.update({k.replace(".mean", ".support"): v for k, v in TABLE.items()
              if k.startswith("stats.") and k.endswith(".mean")
              and k.split(".")[1] not in ("dirichlet", "multinomial")})
TABLE.update({"stats.vonmises.support": "x", "stats.wrapcauchy.support": "x"})
TABLE.update({f"stats.{d}.fit": "x" for d in ("expon", "laplace", "norm", "uniform")})
CUSTOM["stats.multinomial.cov"] = lambda: ((3, np.array([0.2, 0.3, 0.5])), {})


def _public() -> set[str]:
    """Every public function: the modules' ``__all__`` callables (not classes, not modules),
    and the distributions' methods."""
    names = set()
    for m in MODULES:
        mod = importlib.import_module("funcgrad.scipy." + m)
        for n in mod.__all__:
            obj = getattr(mod, n)
            if type(obj).__name__ == "_DistributionModule":
                names.update(f"{m}.{n}.{k}" for k in obj.__all__
                             if k != "rvs" and callable(getattr(obj, k)))
            elif callable(obj) and not isinstance(obj, type) and not inspect.ismodule(obj):
                names.add(f"{m}.{n}")
    return names


def _function(name: str) -> Any:
    mod, *rest = name.split(".")
    obj: Any = importlib.import_module("funcgrad.scipy." + mod)
    for part in rest:
        obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(
            obj.__name__ + "." + part)
    return obj


def _arrays(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [a for v in tree.values() for a in _arrays(v)]
    if isinstance(tree, (tuple, list)):
        return [a for v in tree for a in _arrays(v)]
    if hasattr(tree, "shape") and hasattr(tree, "dtype"):
        return [tree]
    fields = getattr(tree, "__dict__", None)
    if fields is not None and not callable(tree) and not isinstance(tree, types.ModuleType):
        return _arrays(fields)
    return []


def test_the_table_names_every_public_function() -> None:
    public = _public()
    listed = set(TABLE) | set(CUSTOM)
    assert not public - listed, f"add an argument builder for {sorted(public - listed)}"
    assert not listed - public, f"not public (any more): {sorted(listed - public)}"
    assert not set(TABLE) & set(CUSTOM)


@_needs_device
@pytest.mark.parametrize("name", sorted(set(TABLE) | set(CUSTOM)))
def test_numpy_inputs_on_a_device_default(name: str) -> None:
    args, kwargs = CUSTOM[name]() if name in CUSTOM else (_ARGS[TABLE[name]], {})
    f = _function(name)
    with funcgrad.default_device(_DEV), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = f(*args, **kwargs)
    host_in = any(type(a) is np.ndarray for a in _arrays((args, kwargs)))
    if host_in:  # NumPy inputs: the computation, and so the results, on the host
        kinds = {type(a).__name__ for a in _arrays(out)} - {"ndarray", "float64", "int64",
                                                             "bool", "complex128", "float32",
                                                             "int32", "bool_", "intp"}
        assert not kinds, f"{name}: results on a device from NumPy inputs: {kinds}"


def _builder(name: str) -> tuple[tuple, dict]:
    return CUSTOM[name]() if name in CUSTOM else (_ARGS[TABLE[name]], {})


_MIXED = sorted(n for n in set(TABLE) | set(CUSTOM)
                if sum(type(a) is np.ndarray for a in _builder(n)[0]) >= 2)


@_needs_device
@pytest.mark.parametrize("name", _MIXED)
def test_numpy_inputs_beside_a_device_array(name: str) -> None:
    # NumPy inputs are uncommitted (JAX's rule): beside a device array they go to its device.
    # The formulas' operators met them as they were (a host array beside a device array).
    args, kwargs = _builder(name)
    first = next(k for k, a in enumerate(args) if type(a) is np.ndarray)
    args = (*args[:first], funcgrad.device_put(args[first], _DEV), *args[first + 1:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _function(name)(*args, **kwargs)
