"""NumPy's floating-point warnings raised inside funcgrad point at the user's line: eagerly
(the line calling funcgrad.numpy), under jit (the line the equation was traced from) and under
grad, with the user module's filters and once-per-line registry."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from helpers import skip_on_gpu

import funcgrad
import funcgrad.numpy as fnp


def _line(offset: int = 0) -> int:
    return inspect.currentframe().f_back.f_lineno + offset


def test_eager_warning_points_at_the_users_line():
    skip_on_gpu("CuPy raises no floating-point warnings")
    with pytest.warns(RuntimeWarning, match="invalid value encountered in log") as rec:
        fnp.log(fnp.array(-1.0)); line = _line()  # noqa: E702
    assert rec[0].filename == __file__ and rec[0].lineno == line
    with pytest.warns(RuntimeWarning, match="overflow") as rec:
        fnp.exp(np.array([1000.0])); line = _line()  # noqa: E702
    assert rec[0].filename == __file__ and rec[0].lineno == line
    with pytest.warns(RuntimeWarning, match="divide by zero") as rec:
        fnp.divide(np.array(1.0), np.array(0.0)); line = _line()  # noqa: E702
    assert rec[0].filename == __file__ and rec[0].lineno == line


def test_jit_warning_points_at_the_traced_line():
    def f(x):
        y = x * 2.0
        return fnp.log(y)

    line = inspect.getsourcelines(f)[1] + 2
    with pytest.warns(RuntimeWarning, match="invalid value") as rec:
        funcgrad.jit(f)(np.array([-1.0, 1.0]))
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)


def test_grad_warning_points_at_the_users_line():
    with pytest.warns(RuntimeWarning, match="invalid value") as rec:
        funcgrad.grad(lambda x: fnp.sum(fnp.log(x)))(np.array([-1.0])); line = _line()  # noqa: E702
    assert rec[0].filename == __file__ and rec[0].lineno == line


def test_jit_grad_warning_points_at_the_line_whose_derivative_warned():
    # log's derivative divides by x: at 0 it is the backward pass that warns, and it names
    # the line of the log, as the forward pass's warning does.
    skip_on_gpu("CuPy raises no floating-point warnings")

    def f(x):
        y = fnp.log(x)
        return fnp.sum(y * x)

    line = inspect.getsourcelines(f)[1] + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        funcgrad.jit(funcgrad.grad(f))(np.zeros(2))
    where = {(str(w.message), w.filename, w.lineno) for w in caught}
    assert ("invalid value encountered in divide", __file__, line) in where, where


def test_eager_grad_warning_of_the_backward_pass_names_the_operations_line():
    # The eager tape's backward rule of sqrt divides by sqrt(0): the warning names the line of
    # the sqrt, as under jit (it named the line that called grad).
    skip_on_gpu("CuPy raises no floating-point warnings")

    def f(x):
        y = x * 2.0
        z = fnp.sqrt(y)
        return fnp.sum(z * 3.0)

    line = inspect.getsourcelines(f)[1] + 2
    for g in (funcgrad.grad(f), funcgrad.grad(lambda x: funcgrad.grad(f)(x).sum())):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g(np.array([0.0, 1.0]))
        where = {(w.filename, w.lineno) for w in caught
                 if "divide by zero" in str(w.message)}
        assert (__file__, line) in where, where


def test_default_filter_once_per_user_line_like_numpy():
    shown = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):
            fnp.log(np.array([-1.0]))
            shown.append(_line(-1))
        fnp.log(np.array([-1.0])); other = _line()  # noqa: E702
    lines = [w.lineno for w in caught if w.category is RuntimeWarning]
    assert lines == [shown[0], other]


def test_filters_still_apply():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            fnp.log(np.array([-1.0]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        fnp.log(np.array([-1.0]))
    assert not caught
    with np.errstate(invalid="ignore"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fnp.log(np.array([-1.0]))
    assert not caught


@pytest.mark.parametrize("how", ["stdin", "-c"])
def test_warning_in_a_program_without_a_source_file(how):
    # __main__ read from stdin or -c has no source file and a loader that cannot give its
    # source: the warning is still shown, at the user's line, and the program goes on.
    import subprocess
    import sys

    program = ("import numpy as np, funcgrad.numpy as fnp\n"
               "fnp.log(np.array(-1.0))\n"
               "print('went on')\n")
    args = [sys.executable, "-"] if how == "stdin" else [sys.executable, "-c", program]
    done = subprocess.run(args, input=program if how == "stdin" else None, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "went on" in done.stdout
    assert "invalid value encountered in log" in done.stderr
    where = "<stdin>:2" if how == "stdin" else "<string>:2"
    assert where in done.stderr


def test_reductions_warning_from_numpys_wrappers_point_at_the_users_line():
    # NumPy's sum/prod/cumprod warn from its fromnumeric.py wrappers, not from funcgrad's
    # files: called by funcgrad, they are relocated all the same, eagerly and under jit.
    skip_on_gpu("CuPy raises no floating-point warnings")
    with pytest.warns(RuntimeWarning, match="invalid value encountered in accumulate") as rec:
        fnp.cumprod(np.array([np.inf, 0.0])); line = _line()  # noqa: E702
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)
    with pytest.warns(RuntimeWarning, match="overflow encountered in reduce") as rec:
        fnp.prod(np.array([1e200, 1e200])); line = _line()  # noqa: E702
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)

    def f(x):
        return fnp.sum(x)

    with pytest.warns(RuntimeWarning, match="invalid value encountered in reduce") as rec:
        funcgrad.jit(f)(np.array([np.inf, -np.inf]))
    assert (rec[0].filename, rec[0].lineno) == (__file__, inspect.getsourcelines(f)[1] + 1)


def test_numpy_called_directly_keeps_its_own_warning_location():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.sum(np.array([np.inf, -np.inf]))
    assert caught and caught[0].filename != __file__
