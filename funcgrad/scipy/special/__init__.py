"""funcgrad.scipy.special: differentiable versions of ``scipy.special`` functions.

SciPy itself is not needed. Error and gamma functions are primitives
(:mod:`funcgrad.ops.special`, accurate to a few ulps in float64); the rest are stable
compositions: ``logsumexp`` (``b``, ``return_sign``, the max term kept separate so results
near zero stay accurate), ``softmax``/``log_softmax``, ``expit``/``logit``/``log_expit``,
``xlogy``/``xlog1py``/``entr`` (0 where ``x == 0``, with gradients that stay finite there),
``ndtr``/``ndtri``/``log_ndtr``, ``gamma``/``gammasgn``/``loggamma``, ``beta``/``betaln``,
``multigammaln``, ``rel_entr``/``kl_div``. The Bessel functions ``i0``/``i0e``/``i1``/``i1e``
(Cephes' Chebyshev series) and ``gammainc``/``gammaincc`` (series / continued fraction in a
``while_loop``; in ``a`` the loop itself is differentiated) carry closed-form derivatives
(``custom_jvp``), right to every order (the Bessel ones also at 0). ``betainc`` (continued fraction; differentiable in all three
arguments), ``zeta`` (Hurwitz / Riemann, Euler-Maclaurin) and the exponential integrals
``exp1``/``expi``/``expn`` follow the same pattern.

Dtypes: float32 stays float32, other real inputs (integers, bool, float16) give float64;
Python scalars are weak (NEP 50). Complex input is not supported, except by ``wofz``
(the Faddeeva function, complex by nature); ``wofz`` and ``sph_harm_y`` return complex.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.scipy.special import logsumexp
    >>> float(logsumexp(np.array([1000.0, 1000.0])))   # no overflow
    1000.6931471805599
    >>> funcgrad.grad(logsumexp)(np.array([1000.0, 1000.0]))
    array([0.5, 0.5])
"""

from __future__ import annotations

from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy.special._airy import airy, airye
from funcgrad.scipy.special._bessel import (
    bessel_jn,
    i0,
    i0e,
    i1,
    i1e,
    j0,
    j1,
    k0,
    k0e,
    k1,
    k1e,
    y0,
    y1,
)
from funcgrad.scipy.special._bessel_real import iv, ive, jn, jv, jve, kn, kv, kve, yn, yv, yve
from funcgrad.scipy.special._boxcox import boxcox, boxcox1p, inv_boxcox, inv_boxcox1p
from funcgrad.scipy.special._carlson import elliprc, elliprd, elliprf, elliprg, elliprj
from funcgrad.scipy.special._combinatorics import bernoulli, binom, comb, factorial, perm, poch
from funcgrad.scipy.special._common import _counter as _counter
from funcgrad.scipy.special._common import _floats as _floats
from funcgrad.scipy.special._distributions import (
    bdtr,
    bdtrc,
    bdtri,
    chdtr,
    chdtrc,
    chdtri,
    fdtr,
    fdtrc,
    fdtri,
    gdtr,
    gdtrc,
    nbdtr,
    nbdtrc,
    nbdtri,
    pdtr,
    pdtrc,
)
from funcgrad.scipy.special._elliptic import (
    agm,
    ellipe,
    ellipeinc,
    ellipj,
    ellipk,
    ellipkinc,
    ellipkm1,
)
from funcgrad.scipy.special._error import (
    dawsn,
    erf,
    erfc,
    erfcinv,
    erfcx,
    erfi,
    erfinv,
    fresnel,
    voigt_profile,
    wofz,
)
from funcgrad.scipy.special._exp_log import (
    cbrt,
    cosm1,
    exp2,
    exp10,
    expit,
    expm1,
    exprel,
    log1p,
    log_expit,
    log_softmax,
    logit,
    logsumexp,
    powm1,
    softmax,
    softplus,
)
from funcgrad.scipy.special._expint import exp1, expi, expn, shichi, sici
from funcgrad.scipy.special._gamma import (
    beta,
    betaln,
    digamma,
    gamma,
    gammaln,
    gammasgn,
    loggamma,
    multigammaln,
    polygamma,
    psi,
    rgamma,
)
from funcgrad.scipy.special._hypergeometric import hyp1f1, hyp2f1
from funcgrad.scipy.special._incomplete_beta import _betainc_const_ab as _betainc_const_ab
from funcgrad.scipy.special._incomplete_beta import _betaincinv_pair as _betaincinv_pair
from funcgrad.scipy.special._incomplete_beta import (
    betainc,
    betaincinv,
)
from funcgrad.scipy.special._incomplete_gamma import _gammainc_const_a as _gammainc_const_a
from funcgrad.scipy.special._incomplete_gamma import _gammaincc_const_a as _gammaincc_const_a
from funcgrad.scipy.special._incomplete_gamma import _gammaincinv_pq as _gammaincinv_pq
from funcgrad.scipy.special._incomplete_gamma import (
    gammainc,
    gammaincc,
    gammainccinv,
    gammaincinv,
)
from funcgrad.scipy.special._information import (
    entr,
    huber,
    kl_div,
    pseudo_huber,
    rel_entr,
    xlog1py,
    xlogy,
)
from funcgrad.scipy.special._lambertw import lambertw
from funcgrad.scipy.special._normal import log_ndtr, ndtr, ndtri, ndtri_exp, owens_t
from funcgrad.scipy.special._orthogonal import (
    eval_chebyt,
    eval_chebyu,
    eval_gegenbauer,
    eval_genlaguerre,
    eval_hermite,
    eval_hermitenorm,
    eval_jacobi,
    eval_laguerre,
    eval_legendre,
)
from funcgrad.scipy.special._sph_harm import sph_harm_y
from funcgrad.scipy.special._spherical_bessel import (
    spherical_in,
    spherical_jn,
    spherical_kn,
    spherical_yn,
)
from funcgrad.scipy.special._struve import modstruve, struve
from funcgrad.scipy.special._student_t import _t_cdf_sf as _t_cdf_sf
from funcgrad.scipy.special._student_t import _t_quantile as _t_quantile
from funcgrad.scipy.special._student_t import stdtr, stdtrit
from funcgrad.scipy.special._zeta import spence, zeta, zetac

# The `x as x` imports above re-export private helpers funcgrad.scipy.stats builds on (float
# coercion, the inverse incomplete functions' pairs, the incomplete functions at a constant
# shape parameter, Student's t CDF and quantile); they are not public.
__all__ = [
    "erf", "erfc", "erfinv", "erfcinv", "gammaln", "digamma", "psi", "polygamma",
    "expit", "logit", "log_expit", "softmax", "log_softmax", "logsumexp", "xlogy",
    "xlog1py", "entr", "ndtr", "ndtri",
    "gamma", "gammasgn", "loggamma", "beta", "betaln", "multigammaln", "log_ndtr", "ndtri_exp",
    "i0", "i0e", "i1", "i1e", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "pdtr", "pdtrc", "chdtr", "chdtrc", "chdtri",
    "gdtr", "gdtrc", "bdtr", "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri", "fdtr", "fdtrc",
    "fdtri", "binom", "rel_entr", "kl_div",
    "betainc", "betaincinv", "zeta", "exp1", "expi", "expn", "erfcx", "factorial", "comb", "poch", "boxcox",
    "boxcox1p", "inv_boxcox", "inv_boxcox1p", "exprel", "spence", "bernoulli", "bessel_jn",
    "dawsn", "owens_t", "sici", "fresnel",
    "hyp1f1", "hyp2f1", "wofz", "sph_harm_y", "huber", "pseudo_huber", "softplus", "cbrt",
    "exp2", "exp10", "expm1", "log1p", "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e",
    "ellipk", "ellipkm1", "ellipe", "lambertw", "rgamma", "cosm1", "zetac",
    "agm", "stdtr", "stdtrit", "eval_legendre", "eval_chebyt", "eval_chebyu",
    "eval_hermite", "eval_hermitenorm", "eval_laguerre", "eval_genlaguerre", "eval_jacobi", "eval_gegenbauer",
    "elliprf", "elliprc", "elliprd", "elliprj", "elliprg", "ellipkinc", "ellipeinc",
    "jv", "yv", "iv", "kv", "ive", "kve", "shichi", "airy", "airye",
    "spherical_jn", "spherical_yn", "spherical_in", "spherical_kn", "jn", "yn", "kn", "jve",
    "yve", "erfi", "voigt_profile", "perm", "powm1", "ellipj",
    "struve", "modstruve",
]

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
