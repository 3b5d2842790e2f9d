"""funcgrad.scipy.linalg: SciPy's ``scipy.linalg``, differentiable (as ``jax.scipy.linalg``).

Built on the primitives of :mod:`funcgrad.ops.linalg_decomp` and :mod:`funcgrad.ops.lu` and on
funcgrad.numpy, so ``grad``, ``jvp``, ``vmap`` and ``jit`` go through. SciPy's keyword
arguments are accepted (``overwrite_*`` and ``check_finite`` have no effect). Integer
operands become float64, as in SciPy. Differences from SciPy are listed in docs/scipy.md.

Example:
    >>> import numpy as np, funcgrad, funcgrad.scipy.linalg as fsl
    >>> a = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> fsl.cho_solve(fsl.cho_factor(a), np.array([1.0, 2.0]))
    array([0.09090909, 0.63636364])
    >>> funcgrad.grad(lambda m: fsl.expm(m).trace())(np.zeros((2, 2)))
    array([[1., 0.],
           [0., 1.]])
"""

from typing import Any

from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy.linalg._basic import (
    cho_solve_banded,
    cholesky_banded,
    lstsq,
    matmul_toeplitz,
    matrix_balance,
    pinv,
    pinvh,
    solve_banded,
    solve_circulant,
    solve_toeplitz,
    solveh_banded,
)
from funcgrad.scipy.linalg._decomp import (
    cho_factor,
    cholesky,
    eigh,
    eigh_tridiagonal,
    hessenberg,
    ldl,
    lu,
    lu_factor,
    polar,
    qr,
    qr_delete,
    qr_insert,
    qr_multiply,
    qr_update,
    rq,
    rsf2csf,
    schur,
    svd,
)
from funcgrad.scipy.linalg._decomp_cossin import cossin
from funcgrad.scipy.linalg._decomp_eig import (
    cdf2rdf,
    eig,
    eig_banded,
    eigvals,
    eigvals_banded,
    eigvalsh,
    eigvalsh_tridiagonal,
)
from funcgrad.scipy.linalg._decomp_qz import ordqz, qz
from funcgrad.scipy.linalg._decomp_svd import (
    diagsvd,
    null_space,
    orth,
    orthogonal_procrustes,
    subspace_angles,
    svdvals,
)
from funcgrad.scipy.linalg._matfuncs import (
    coshm,
    cosm,
    expm,
    expm_cond,
    expm_frechet,
    fractional_matrix_power,
    funm,
    logm,
    signm,
    sinhm,
    sinm,
    sqrtm,
    tanhm,
    tanm,
)
from funcgrad.scipy.linalg._misc import (
    LinAlgError,
    LinAlgWarning,
    bandwidth,
    ishermitian,
    issymmetric,
    khatri_rao,
    norm,
)
from funcgrad.scipy.linalg._sketches import clarkson_woodruff_transform
from funcgrad.scipy.linalg._solve import cho_solve, det, inv, lu_solve, solve, solve_triangular
from funcgrad.scipy.linalg._solvers import (
    solve_continuous_are,
    solve_continuous_lyapunov,
    solve_discrete_are,
    solve_discrete_lyapunov,
    solve_lyapunov,
)
from funcgrad.scipy.linalg._special_matrices import (
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
    tril,
    triu,
)
from funcgrad.scipy.linalg._sylvester import solve_sylvester

# SciPy's names that are not here, and why: asking for one raises an AttributeError (so
# hasattr() is still False) that says so instead of a bare "no attribute".
_NOT_HERE = {
    "get_lapack_funcs": "funcgrad calls no LAPACK routines directly (they would neither "
                        "trace nor differentiate); use the functions of this module",
    "get_blas_funcs": "funcgrad calls no BLAS routines directly; use funcgrad.numpy's "
                      "matmul/dot and this module's solvers",
    "find_best_blas_type": "funcgrad calls no BLAS/LAPACK routines directly",
    "lapack": "funcgrad exposes no LAPACK wrappers (scipy.linalg.lapack)",
    "blas": "funcgrad exposes no BLAS wrappers (scipy.linalg.blas)",
    "cython_blas": "funcgrad exposes no BLAS wrappers",
    "cython_lapack": "funcgrad exposes no LAPACK wrappers",
    "interpolative": "the interpolative decomposition (scipy.linalg.interpolative) is not "
                     "implemented",
}


def __getattr__(name: str) -> Any:
    if name in _NOT_HERE:
        raise AttributeError(f"funcgrad.scipy.linalg has no {name!r}: {_NOT_HERE[name]} "
                             "(see docs/scipy.md)")
    raise AttributeError(f"module 'funcgrad.scipy.linalg' has no attribute {name!r}")

__all__ = [
    "lu", "lu_factor", "lu_solve", "cholesky", "cho_factor", "cho_solve", "qr", "svd",
    "eigh", "eigh_tridiagonal", "hessenberg", "polar", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester", "solve_triangular", "inv", "det",
    "expm", "expm_frechet", "sqrtm", "funm", "logm", "block_diag", "toeplitz", "circulant", "hankel", "companion",
    "hilbert", "pascal", "tril", "triu", "hadamard", "dft", "helmert", "leslie", "invhilbert",
    "fiedler", "convolution_matrix", "fiedler_companion", "invpascal",
    "eig", "eigvals", "eigvalsh", "eigvalsh_tridiagonal", "eig_banded", "eigvals_banded",
    "cdf2rdf", "lstsq", "pinv", "pinvh", "solve_banded", "solveh_banded", "cholesky_banded",
    "cho_solve_banded", "solve_toeplitz", "matmul_toeplitz", "solve_circulant", "svdvals",
    "diagsvd", "null_space", "orth", "subspace_angles", "orthogonal_procrustes", "rq",
    "fractional_matrix_power", "cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm", "signm",
    "norm", "issymmetric", "ishermitian", "bandwidth", "khatri_rao", "LinAlgError",
    "LinAlgWarning", "solve_continuous_lyapunov", "solve_lyapunov", "solve_discrete_lyapunov",
    "solve_continuous_are", "solve_discrete_are", "qr_update", "qr_insert", "qr_delete",
    "expm_cond", "matrix_balance", "ldl", "clarkson_woodruff_transform",
    "qz", "ordqz", "cossin",
]

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
