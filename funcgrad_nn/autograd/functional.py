"""``torch.autograd.functional`` over funcgrad's transforms, and ``gradcheck``.

Signatures and output structures are PyTorch's: ``inputs`` is an array or a tuple of arrays,
and results follow that choice (a tuple of inputs gives tuples, a tuple of outputs gives tuples,
both give tuples of tuples). ``create_graph`` is accepted and has no effect: funcgrad's results
are always differentiable again when computed under a transformation. ``strict`` raises
PyTorch's errors where a derivative is structurally zero (:func:`_dependence` reads that from
the linearized program). ``strategy`` chooses between reverse and forward mode; both batch the
basis vectors with ``vmap``, so forward mode does not need ``vectorize=True``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad
from funcgrad import numpy as fnp
from funcgrad.avals import float0, get_aval
from funcgrad.backend import device_of
from funcgrad.interpreters.linearize import linearize_flat
from funcgrad.ir import Var
from funcgrad_nn.transforms import torch_cotangents

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp", "gradcheck", "gradgradcheck",
           "GradcheckError"]


class GradcheckError(RuntimeError):
    """Analytical and numerical derivatives disagree (PyTorch's name)."""


def _as_tuple(x: Any, what: str, fname: str) -> tuple[bool, tuple[Any, ...]]:
    is_tuple = isinstance(x, tuple | list)
    xs = tuple(x) if is_tuple else (x,)
    for i, v in enumerate(xs):
        if not (hasattr(v, "shape") and hasattr(v, "dtype")) and not isinstance(
                v, float | int | complex):
            raise TypeError(f"{fname}: the {what} must be arrays (or a tuple of arrays), but "
                            f"element {i} is a {type(v).__name__}")
    return is_tuple, tuple(fnp.asarray(v) if not hasattr(v, "shape") else v for v in xs)


def _differentiable_inputs(inputs: Any, fname: str) -> tuple[bool, tuple[Any, ...]]:
    """``_as_tuple`` of the inputs, which must be floating (PyTorch cannot ``requires_grad``
    an integer tensor either)."""
    is_tuple, xs = _as_tuple(inputs, "inputs", fname)
    for i, x in enumerate(xs):
        if numpy.dtype(x.dtype).kind not in "fc":
            raise RuntimeError(f"{fname}: input {i} has dtype {numpy.dtype(x.dtype)}; only "
                               "floating-point (or complex) inputs can be differentiated "
                               "(as in PyTorch: only Tensors of floating point dtype can "
                               "require gradients)")
    return is_tuple, xs


def _grad_postprocess(is_tuple: bool, xs: tuple) -> Any:
    return xs if is_tuple else xs[0]


def _call(func: Callable[..., Any], inputs: tuple, fname: str) -> tuple[bool, tuple]:
    out = func(*inputs)
    if fname in ("gradcheck", "gradgradcheck") and type(out) is list:
        out = tuple(out)  # (PyTorch's gradcheck takes a list of outputs as a tuple)
    # PyTorch's check, with its words: the outputs are an array or a tuple of arrays (a Python
    # number has no derivative to take; a list is refused there too, but by gradcheck)
    if type(out) is not tuple:
        if not _is_array(out):
            raise TypeError(f"The outputs of the user-provided function given to {fname} "
                            "must be either a Tensor or a tuple of Tensors but the given "
                            f"outputs of the user-provided function has type {type(out)}.")
    else:
        for i, o in enumerate(out):
            if not _is_array(o):
                raise TypeError(f"The outputs of the user-provided function given to {fname} "
                                "must be either a Tensor or a tuple of Tensors but the value "
                                f"at index {i} has type {type(o)}.")
    return type(out) is tuple, out if type(out) is tuple else (out,)


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, type)


def _dependence(func: Callable[..., Any], inputs: tuple, fname: str) -> list[set[int]]:
    """For each output of ``func``, the inputs its derivative structurally depends on (read
    from the linearized program: an input no equation reaches has a zero derivative)."""

    def flat(*xs: Any) -> list[Any]:
        return list(_call(func, xs, fname)[1])

    jaxpr = linearize_flat(flat, list(inputs)).jaxpr.jaxpr
    deps: dict[Any, set[int]] = {v: {i} for i, v in enumerate(jaxpr.invars)}
    for e in jaxpr.eqns:
        got: set[int] = set()
        for v in e.invars:
            if type(v) is Var:
                got |= deps.get(v, set())
        for v in e.outvars:
            deps[v] = got
    return [set(deps.get(v, ())) if type(v) is Var else set() for v in jaxpr.outvars]


def _strict_outputs(deps: list[set[int]]) -> None:
    for i, d in enumerate(deps):
        if not d:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode.")


def _strict_union(deps: list[set[int]], n_in: int) -> None:
    """vjp/jvp: every input must reach some output (PyTorch's message)."""
    _strict_outputs(deps)
    used = set().union(*deps)
    for j in range(n_in):
        if j not in used:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {j}. This is not allowed in strict mode.")


def _strict_blocks(deps: list[set[int]], n_in: int) -> None:
    """jacobian: every output must depend on every input (PyTorch checks each block)."""
    _strict_outputs(deps)
    for i, d in enumerate(deps):
        for j in range(n_in):
            if j not in d:
                raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                   f"of input {j}. This is not allowed in strict mode.")


def _strict_second(scalar: Callable[..., Any], xs: tuple, fname: str) -> list[set[int]]:
    """hessian/hvp/vhp: each gradient must depend on some input (not a linear function)."""
    argnums = tuple(range(len(xs)))
    deps = _dependence(lambda *a: funcgrad.grad(scalar, argnums=argnums)(*a), xs, fname)
    for i, d in enumerate(deps):
        if not d:
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
    return deps


def _strict_hessian_products(scalar: Callable[..., Any], xs: tuple, fname: str) -> None:
    """hvp/vhp: the product's entry j is structurally zero when no gradient depends on j."""
    _strict_outputs(_dependence(scalar, xs, fname))
    deps = _strict_second(scalar, xs, fname)
    used = set().union(*deps)
    for j in range(len(xs)):
        if j not in used:
            raise RuntimeError(f"The jacobian of the user-provided function is independent of "
                               f"input {j}. This is not allowed in strict mode.")


def _strict_vectorize(strict: bool, vectorize: bool, fname: str) -> None:
    if strict and vectorize:
        raise RuntimeError(f"{fname}: `strict=True` and `vectorize=True` are not supported "
                           "together (as in PyTorch). Please either set `strict=False` or "
                           "`vectorize=False`.")


def _check_strategy(strategy: Any, fname: str, name: str) -> None:
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f"{fname}: {name} must be 'reverse-mode' or 'forward-mode', got "
                         f"{strategy!r}")


def _strict_forward(strict: bool, strategy: str, fname: str) -> None:
    # PyTorch's strict checks run on the backward graph, which forward mode does not build
    if strict and strategy == "forward-mode":
        raise RuntimeError(f"{fname}: `strict=True` and `strategy=\"forward-mode\"` are not "
                           "supported together (as in PyTorch). Please either set "
                           "`strict=False` or `strategy=\"reverse-mode\"`.")


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T J)``, shaped like the outputs and inputs.

    Example:
        >>> import numpy as np
        >>> out, g = vjp(lambda x: (x ** 2).sum(), np.array([1.0, 2.0]))
        >>> float(out), g.tolist()
        (5.0, [2.0, 4.0])
    """
    in_tuple, xs = _differentiable_inputs(inputs, "vjp")
    if strict:
        _strict_union(_dependence(func, xs, "vjp"), len(xs))
    box: list[bool] = []

    def f(*a: Any) -> tuple:
        t, outs = _call(func, a, "vjp")
        box.append(t)
        return outs

    out, pull = funcgrad.vjp(f, *xs)
    out_tuple = box[0]
    if v is None:
        if len(out) != 1 or out[0].size != 1:
            raise RuntimeError("vjp: the function has more than one output element, so v "
                               "(the vector to multiply the Jacobian by) must be given")
        vs = (fnp.ones_like(out[0]),)
    else:
        _, vs = _as_tuple(v, "vectors v", "vjp")
        if len(vs) != len(out):
            raise RuntimeError(f"vjp: v has {len(vs)} elements but the function has "
                               f"{len(out)} outputs")
        for i, (a, o) in enumerate(zip(vs, out)):
            if tuple(a.shape) != tuple(o.shape):
                raise RuntimeError(f"vjp: v[{i}] has shape {tuple(a.shape)} but output {i} "
                                   f"has shape {tuple(o.shape)}")
    # PyTorch's cotangents and gradients of complex values are conjugates of funcgrad's
    grads = torch_cotangents(pull(torch_cotangents(tuple(vs))))
    return _grad_postprocess(bool(out_tuple), out), _grad_postprocess(in_tuple, grads)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), J v)``, shaped like the outputs.

    Example:
        >>> import numpy as np
        >>> out, t = jvp(lambda x: x ** 2, np.array([1.0, 2.0]), np.array([1.0, 1.0]))
        >>> t.tolist()
        [2.0, 4.0]
    """
    in_tuple, xs = _differentiable_inputs(inputs, "jvp")
    if v is None:
        if len(xs) != 1 or xs[0].size != 1:
            raise RuntimeError("jvp: the input has more than one element, so v (the "
                               "tangent vector) must be given")
        vs = (fnp.ones_like(xs[0]),)
    else:
        _, vs = _as_tuple(v, "vectors v", "jvp")
        if len(vs) != len(xs):
            raise RuntimeError(f"jvp: v has {len(vs)} elements but there are {len(xs)} inputs")
        for i, (a, x) in enumerate(zip(vs, xs)):
            if tuple(a.shape) != tuple(x.shape):
                raise RuntimeError(f"jvp: v[{i}] has shape {tuple(a.shape)} but input {i} has "
                                   f"shape {tuple(x.shape)}")
    if strict:
        _strict_union(_dependence(func, xs, "jvp"), len(xs))
    box: list[bool] = []

    def f(*a: Any) -> tuple:
        t, outs = _call(func, a, "jvp")
        box.append(t)
        return outs

    out, tan = funcgrad.jvp(f, xs, tuple(fnp.asarray(t, dtype=x.dtype) for t, x in zip(vs, xs)))
    # an integer output's tangent is zeros of its dtype (funcgrad's float0 marks "none"), as
    # jacobian gives it zero blocks
    tan = tuple(fnp.zeros_like(o) if t.dtype == float0 else t for o, t in zip(out, tan))
    return _grad_postprocess(box[0], out), _grad_postprocess(box[0], tan)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian; block ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``.

    Example:
        >>> import numpy as np
        >>> jacobian(lambda x: x ** 2, np.array([1.0, 2.0])).tolist()
        [[2.0, 0.0], [0.0, 4.0]]
    """
    _check_strategy(strategy, "jacobian", "strategy")
    _strict_vectorize(strict, vectorize, "jacobian")
    _strict_forward(strict, strategy, "jacobian")
    in_tuple, xs = _differentiable_inputs(inputs, "jacobian")
    if strict:
        _strict_blocks(_dependence(func, xs, "jacobian"), len(xs))
    box: list[bool] = []
    exact: list[list[Any]] = []  # per output: None, or its aval when it is an integer array

    def f(*a: Any) -> tuple:
        t, outs = _call(func, a, "jacobian")
        box.append(t)
        # an integer (or bool) output does not depend differentiably on anything: PyTorch
        # gives it zero blocks; a float stand-in keeps jacrev from refusing it
        avals = [get_aval(o) for o in outs]
        exact.append([a if a.dtype.kind not in "fc" else None for a in avals])
        return tuple(o if a.dtype.kind in "fc" else fnp.zeros(a.shape, xs[0].dtype)
                     for o, a in zip(outs, avals))

    jac_fn = funcgrad.jacfwd if strategy == "forward-mode" else funcgrad.jacrev
    jac = jac_fn(f, argnums=tuple(range(len(xs))))(*xs)
    if strategy == "reverse-mode":  # rows are vjps: PyTorch's conjugate for complex inputs
        jac = torch_cotangents(jac)
    # jac[i][j]: output i, input j
    jac = [[blk if exact[-1][i] is None else
            fnp.zeros(tuple(exact[-1][i].shape) + tuple(fnp.shape(x)), get_aval(x).dtype)
            for blk, x in zip(row, xs)] for i, row in enumerate(jac)]
    rows = tuple(_grad_postprocess(in_tuple, tuple(row)) for row in jac)
    return _grad_postprocess(box[0], rows)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function; block ``[i][j]`` is ``inputs[i].shape +
    inputs[j].shape``.

    Example:
        >>> import numpy as np
        >>> hessian(lambda x: (x ** 3).sum(), np.array([1.0, 2.0])).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
    """
    _check_strategy(outer_jacobian_strategy, "hessian", "outer_jacobian_strategy")
    _strict_vectorize(strict, vectorize, "hessian")
    _strict_forward(strict, outer_jacobian_strategy, "hessian")
    in_tuple, xs = _differentiable_inputs(inputs, "hessian")
    scalar = _scalar_fn(func, "hessian")

    if strict:
        _strict_blocks(_strict_second(scalar, xs, "hessian"), len(xs))
    h = funcgrad.hessian(scalar, argnums=tuple(range(len(xs))))(*xs)
    rows = tuple(_grad_postprocess(in_tuple, tuple(row)) for row in h)
    return _grad_postprocess(in_tuple, rows)


def _scalar_fn(func: Callable[..., Any], fname: str) -> Callable[..., Any]:
    """``func`` as a function to a 0-d array; its output must be one single-element array
    (a tuple, even of one, is refused: PyTorch's words)."""
    def scalar(*a: Any) -> Any:
        is_tuple, outs = _call(func, a, fname)
        if is_tuple:
            raise RuntimeError(f"The function given to {fname} should return a single Tensor")
        if outs[0].size != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fname} should "
                               "contain a single element")
        return fnp.reshape(outs[0], ())

    return scalar


def _check_v(vs: tuple, xs: tuple, fname: str) -> None:
    if len(vs) != len(xs):
        raise RuntimeError(f"{fname}: v has {len(vs)} elements but there are {len(xs)} inputs")
    for i, (a, x) in enumerate(zip(vs, xs)):
        if tuple(a.shape) != tuple(x.shape):
            raise RuntimeError(f"{fname}: v[{i}] has shape {tuple(a.shape)} but input {i} has "
                               f"shape {tuple(x.shape)}")


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T H)``, shaped like the inputs.

    Example:
        >>> import numpy as np
        >>> out, r = vhp(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
        >>> r.tolist()
        [6.0, 0.0]
    """
    in_tuple, xs = _differentiable_inputs(inputs, "vhp")
    scalar = _scalar_fn(func, "vhp")
    if strict:
        _strict_hessian_products(scalar, xs, "vhp")
    if v is None:
        if len(xs) != 1 or xs[0].size != 1:
            raise RuntimeError("vhp: the input has more than one element, so v must be given")
        vs = (fnp.ones_like(xs[0]),)
    else:
        _, vs = _as_tuple(v, "vectors v", "vhp")
        _check_v(vs, xs, "vhp")
    argnums = tuple(range(len(xs)))
    out = func(*xs)  # as returned (PyTorch's is not reshaped: (1,) stays (1,))
    _, res = funcgrad.vjp(lambda *a: funcgrad.grad(scalar, argnums=argnums)(*a), *xs)
    r = res(tuple(fnp.asarray(t, dtype=x.dtype) for t, x in zip(vs, xs)))
    # PyTorch's product for complex inputs is the conjugate of funcgrad's (torch 2.13)
    return out, _grad_postprocess(in_tuple, torch_cotangents(tuple(r)))


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), H v)``, shaped like the inputs (forward-over-reverse).

    Example:
        >>> import numpy as np
        >>> out, r = hvp(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]), np.array([0.0, 1.0]))
        >>> r.tolist()
        [0.0, 12.0]
    """
    in_tuple, xs = _differentiable_inputs(inputs, "hvp")
    scalar = _scalar_fn(func, "hvp")
    if strict:
        _strict_hessian_products(scalar, xs, "hvp")
    if v is None:
        if len(xs) != 1 or xs[0].size != 1:
            raise RuntimeError("hvp: the input has more than one element, so v must be given")
        vs = (fnp.ones_like(xs[0]),)
    else:
        _, vs = _as_tuple(v, "vectors v", "hvp")
        _check_v(vs, xs, "hvp")
    argnums = tuple(range(len(xs)))
    out = func(*xs)  # as returned (PyTorch's is not reshaped: (1,) stays (1,))
    _, r = funcgrad.jvp(lambda *a: funcgrad.grad(scalar, argnums=argnums)(*a), xs,
                        tuple(fnp.asarray(t, dtype=x.dtype) for t, x in zip(vs, xs)))
    # PyTorch's product for complex inputs is the conjugate of funcgrad's (torch 2.13)
    return out, _grad_postprocess(in_tuple, torch_cotangents(tuple(r)))


# ---------------------------------------------------------------------------------------------
# gradcheck


def _to_np(x: Any) -> numpy.ndarray:
    return numpy.asarray(funcgrad.to_numpy(x))


# Complex arrays are checked in real coordinates: an entry z = x + iy is the two real numbers
# (x, y), so a Jacobian block is the real-linear map between those coordinates (real parts of
# all entries first, then imaginary parts). This holds for any function, holomorphic or not.
# funcgrad's vector-Jacobian product pairs a cotangent c with a tangent t as Re(sum(c * t))
# (JAX's convention), so the row of Re(out_r) is vjp(e_r), that of Im(out_r) vjp(-i e_r), and
# a gradient g gives the coordinates (Re g, -Im g) of a complex input.


def _real_size(a: numpy.ndarray) -> int:
    return 2 * a.size if a.dtype.kind == "c" else a.size


def _real_coords(a: Any, like: numpy.ndarray) -> numpy.ndarray:
    """An output (or tangent) ``a`` shaped like ``like`` in real coordinates."""
    a = _to_np(a).reshape(-1)
    if like.dtype.kind == "c":
        return numpy.concatenate([a.real, a.imag])
    return a.real


def _grad_coords(g: Any, x: numpy.ndarray) -> numpy.ndarray:
    """A gradient of input ``x`` (funcgrad's convention) in ``x``'s real coordinates."""
    g = _to_np(g).reshape(-1)
    if x.dtype.kind == "c":
        return numpy.concatenate([g.real, -g.imag])
    return g.real


def _basis(x: numpy.ndarray, k: int, cotangent: bool) -> numpy.ndarray:
    """The ``k``-th real coordinate direction of ``x``'s space (as a tangent, or as the
    cotangent that picks that coordinate of an output)."""
    e = numpy.zeros_like(x)
    if k < x.size:
        e.reshape(-1)[k] = 1
    else:
        e.reshape(-1)[k - x.size] = -1j if cotangent else 1j
    return e


def _empty_jacobian(outs: list[numpy.ndarray], xs: list[numpy.ndarray]
                    ) -> list[list[numpy.ndarray]]:
    return [[numpy.zeros((_real_size(o), _real_size(x)),
                         dtype=numpy.result_type(o.real.dtype, x.real.dtype))
             for x in xs] for o in outs]


def _numerical_jacobian(f: Callable[..., tuple], xs: list[numpy.ndarray], eps: float,
                        place: Callable[[list], list]) -> list[list[numpy.ndarray]]:
    """``J[i][j]`` of shape (out_i real size, in_j real size) by central differences.

    ``xs`` are host copies (perturbed in place); ``place`` puts them on the inputs' devices
    for each evaluation of ``f``.
    """
    outs = [_to_np(o) for o in f(*place(xs))]
    jac = _empty_jacobian(outs, xs)
    for j, x in enumerate(xs):
        if x.dtype.kind not in "fc":
            continue
        flat = x.reshape(-1)
        for k in range(_real_size(x)):
            step = eps if k < x.size else 1j * eps
            pos = k % x.size
            orig = flat[pos]
            flat[pos] = orig + step
            plus = [_real_coords(o, oo) for o, oo in zip(f(*place(xs)), outs)]
            flat[pos] = orig - step
            minus = [_real_coords(o, oo) for o, oo in zip(f(*place(xs)), outs)]
            flat[pos] = orig
            for i in range(len(outs)):
                jac[i][j][:, k] = (plus[i] - minus[i]) / (2 * eps)
    return jac


def _random_like(rng: numpy.random.Generator, o: numpy.ndarray) -> numpy.ndarray:
    """Random grad outputs for ``gradgradcheck`` (complex ones for a complex output)."""
    g = rng.standard_normal(o.shape)
    if o.dtype.kind == "c":
        g = g + 1j * rng.standard_normal(o.shape)
    return g.astype(o.dtype)


def _like(a: numpy.ndarray, ref: Any) -> Any:
    """Host array ``a`` on the device of ``ref``."""
    d = device_of(ref)
    return a if d is None else funcgrad.device_put(a, d)


def _analytical_jacobian(f: Callable[..., tuple], xs: list[numpy.ndarray],
                         place: Callable[[list], list]) -> list[list[numpy.ndarray]]:
    """Reverse mode: one vector-Jacobian product per real output coordinate (the rows)."""
    outs_d, pull = funcgrad.vjp(f, *place(xs))
    outs = [_to_np(o) for o in outs_d]
    jac = _empty_jacobian(outs, xs)
    for i, o in enumerate(outs):
        if o.dtype.kind not in "fc":
            continue
        for r in range(_real_size(o)):
            cts = [numpy.zeros_like(oo) for oo in outs]
            cts[i] = _basis(o, r, cotangent=True)
            gs = pull(tuple(_like(c, od) for c, od in zip(cts, outs_d)))
            for j, g in enumerate(gs):
                if xs[j].dtype.kind in "fc":
                    jac[i][j][r, :] = _grad_coords(g, xs[j])
    return jac


def _analytical_jacobian_fwd(f: Callable[..., tuple], xs: list[numpy.ndarray],
                             place: Callable[[list], list]) -> list[list[numpy.ndarray]]:
    """Forward mode: one ``jvp`` per real input coordinate (the Jacobian's columns)."""
    outs = [_to_np(o) for o in f(*place(xs))]
    jac = _empty_jacobian(outs, xs)
    # integer inputs take no tangent (None: jvp wants float0 for them, as JAX)
    zeros = [numpy.zeros_like(x) if x.dtype.kind in "fc" else None for x in xs]
    for j, x in enumerate(xs):
        if x.dtype.kind not in "fc":
            continue
        for k in range(_real_size(x)):
            ts = list(zeros)
            ts[j] = _basis(x, k, cotangent=False)
            _, t_out = funcgrad.jvp(f, tuple(place(xs)), tuple(place(ts)))
            for i, t in enumerate(t_out):
                if outs[i].dtype.kind in "fc":
                    jac[i][j][:, k] = _real_coords(t, outs[i])
    return jac


def _batched_vjp_mismatch(f: Callable[..., tuple], xs: list[numpy.ndarray],
                          place: Callable[[list], list], ana: list[list[numpy.ndarray]],
                          atol: float, rtol: float) -> str | None:
    """``vmap`` of the vector-Jacobian product over the basis cotangents against the rows
    computed one by one (PyTorch's ``check_batched_grad``)."""
    outs_d, pull = funcgrad.vjp(f, *place(xs))
    outs = [_to_np(o) for o in outs_d]
    for i, o in enumerate(outs):
        if o.dtype.kind not in "fc" or o.size == 0:
            continue
        n = _real_size(o)
        basis = numpy.stack([_basis(o, r, cotangent=True) for r in range(n)])
        cts = tuple(_like(basis if m == i else numpy.zeros((n,) + oo.shape, oo.dtype), od)
                    for m, (oo, od) in enumerate(zip(outs, outs_d)))
        rows = funcgrad.vmap(lambda *c: tuple(pull(tuple(c))))(*cts)
        for j, r in enumerate(rows):
            if xs[j].dtype.kind not in "fc":
                continue
            r = _to_np(r)
            got = numpy.stack([_grad_coords(r[b], xs[j]) for b in range(n)])
            if not numpy.allclose(got, ana[i][j], atol=atol, rtol=rtol):
                return (f"gradcheck: batched gradient (vmap of the vector-Jacobian product) "
                        f"mismatch for output {i} with respect to input {j},\nbatched:{got}"
                        f"\nunbatched:{ana[i][j]}\n")
    return None


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              check_batched_grad: bool = False, **_: Any) -> bool:
    """Compare Jacobians with central differences (PyTorch's ``gradcheck``).

    Reverse mode (``check_backward_ad``, on by default), forward mode (``check_forward_ad``:
    one ``jvp`` per input element) and ``check_batched_grad`` (``vmap`` of the
    vector-Jacobian product against the rows one by one). Floating array inputs are checked;
    use float64. PyTorch's other options (``nondet_tol``, ``fast_mode``, ...) are accepted
    and ignored. Returns True; on a mismatch raises :class:`GradcheckError` (or returns False
    with ``raise_exception=False``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> gradcheck(fnp.sin, (np.array([0.1, 0.7]),), check_forward_ad=True)
        True
    """
    _, xs_t = _as_tuple(inputs, "inputs", "gradcheck")
    xs = [numpy.array(_to_np(x), copy=True) for x in xs_t]  # host copies, perturbed in place
    if not any(x.dtype.kind in "fc" for x in xs):
        # nothing would be compared: PyTorch refuses rather than pass vacuously
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True (no input is a floating "
                         "or complex array)")
    for idx, x in enumerate(xs):
        if x.dtype.kind in "fc" and x.dtype not in (numpy.float64, numpy.complex128):
            # PyTorch's warning: eps=1e-6 differences are lost in single precision
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          stacklevel=2)
    devices = [device_of(x) for x in xs_t]

    def place(arrays: list) -> list:
        """Host arrays on the devices of the inputs: ``func`` runs where it was given them."""
        return [a if d is None else funcgrad.device_put(a, d) for a, d in zip(arrays, devices)]

    def f(*a: Any) -> tuple:
        return _call(func, a, "gradcheck")[1]

    def fail(msg: str) -> bool:
        if raise_exception:
            raise GradcheckError(msg)
        return False

    num = _numerical_jacobian(f, xs, eps, place)
    checks = []
    if check_backward_ad or check_batched_grad:
        checks.append(("", _analytical_jacobian(f, xs, place)))
    if check_forward_ad:
        checks.append((" (forward mode)", _analytical_jacobian_fwd(f, xs, place)))
    for mode, ana in checks:
        for i, row in enumerate(ana):
            for j, a in enumerate(row):
                n = num[i][j]
                if not numpy.allclose(a, n, atol=atol, rtol=rtol):
                    return fail(f"gradcheck: Jacobian mismatch{mode} for output {i} with respect "
                                f"to input {j},\nnumerical:{n}\nanalytical:{a}\n")
    if check_batched_grad:
        msg = _batched_vjp_mismatch(f, xs, place, checks[0][1], atol, rtol)
        if msg is not None:
            return fail(msg)
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, check_batched_grad: bool = False,
                  **_: Any) -> bool:
    """``gradcheck`` of the vector-Jacobian product (second derivatives); ``check_fwd_over_rev``
    and ``check_rev_over_rev`` (PyTorch's) pick forward- or reverse-mode derivatives of it.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> gradgradcheck(fnp.tanh, (np.array([0.1, 0.7]),))
        True
    """
    _, xs = _as_tuple(inputs, "inputs", "gradgradcheck")
    outs = _call(func, xs, "gradgradcheck")[1]
    if grad_outputs is None:
        rng = numpy.random.default_rng(0)
        gos = tuple(_like(_random_like(rng, _to_np(o)), o) for o in outs)
    else:
        _, gos = _as_tuple(grad_outputs, "grad_outputs", "gradgradcheck")
    n = len(xs)

    def vjp_fn(*a: Any) -> tuple:
        _, pull = funcgrad.vjp(lambda *b: _call(func, b, "gradgradcheck")[1], *a[:n])
        return tuple(pull(tuple(a[n:])))

    return gradcheck(vjp_fn, xs + gos, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev,
                     check_batched_grad=check_batched_grad)
