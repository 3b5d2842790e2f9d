"""Graph pictures of jaxprs: the forward graph of a function and its derivative graphs.

- :func:`jaxpr_to_dot` turns a (closed) jaxpr into Graphviz DOT text: inputs and constants
  are ellipses, each equation a box labelled with its primitive, its output shapes/dtypes and
  its source line (tooltip), edges follow the data. Equations holding jaxprs (``jit``, ``cond``,
  ``scan``, custom derivatives...) show them as nested clusters.
- :func:`to_dot` traces ``f(*args)``; ``graph="forward"`` (default), ``"linearized"`` (the
  tangent map ``jvp`` evaluates, residuals as constants) or ``"transposed"`` (the backward pass
  of ``grad``/``vjp``), or ``"grad"`` (the whole ``value_and_grad`` program).
- :func:`make_dot` is the ``torchviz.make_dot``-style helper: inputs named by their pytree
  paths (``model.0.weight``), for a Module's loss.
- :func:`render` writes SVG/PNG with the ``graphviz`` package and ``dot`` program (the ``viz``
  extra); DOT text needs neither.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> dot = to_dot(lambda x: fnp.sin(x) * 2.0, np.ones(3))
    >>> dot.splitlines()[0], "sin" in dot
    ('digraph jaxpr {', True)
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Callable
from typing import Any

from funcgrad import tree_util
from funcgrad.ad_checkpoint import saved_residuals
from funcgrad.api import linearize, make_jaxpr, value_and_grad, vjp
from funcgrad.ir import ClosedJaxpr, Jaxpr, Literal, Var

__all__ = ["jaxpr_to_dot", "to_dot", "make_dot", "render", "graphviz_available", "DotGraph"]

_GRAPHS = ("forward", "linearized", "transposed", "grad")


def _q(s: str) -> str:
    """A DOT double-quoted string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _param_str(v: Any, max_chars: int = 40) -> str | None:
    if isinstance(v, ClosedJaxpr | Jaxpr) or callable(v):
        return None
    s = repr(v)
    return s if len(s) <= max_chars else s[:max(max_chars - 3, 0)] + "..."


class _Builder:
    def __init__(self, show_params: bool, max_chars: int = 40) -> None:
        self.lines: list[str] = []
        self.ids = itertools.count()
        self.show_params = show_params
        self.max_chars = max_chars

    def node(self, label: str, indent: str, **attrs: str) -> str:
        name = f"n{next(self.ids)}"
        extra = "".join(f", {k}={_q(v)}" for k, v in attrs.items())
        self.lines.append(f"{indent}{name} [label={_q(label)}{extra}];")
        return name

    def edge(self, a: str, b: str, indent: str, label: str = "") -> None:
        lab = f" [label={_q(label)}]" if label else ""
        self.lines.append(f"{indent}{a} -> {b}{lab};")

    def jaxpr(self, jaxpr: Jaxpr, consts: list[Any], in_names: list[str], indent: str,
              in_labels: list[str] | None = None,
              const_labels: dict[int, str] | None = None) -> list[str]:
        """Emit ``jaxpr``; ``in_names``: node names feeding its invars (empty: make nodes);
        ``const_labels``: names of constants, by the id of the constant's array.
        Returns the node names of its outputs."""
        env: dict[Var, str] = {}
        for i, v in enumerate(jaxpr.constvars):
            c = consts[i] if i < len(consts) else None
            named = const_labels.get(id(c)) if const_labels and c is not None else None
            if named is not None:  # a parameter the function closes over (make_dot's params)
                env[v] = self.node(f"{named}\n{v.aval.str_short()}", indent, shape="ellipse",
                                   style="filled", fillcolor="#d6eaf8")
                continue
            shape = getattr(c, "shape", None)
            label = f"const {v.aval.str_short()}" if shape is None or len(shape) else \
                f"const {c!r:.20}"
            env[v] = self.node(label, indent, shape="note", style="filled", fillcolor="#eeeeee")
        for i, v in enumerate(jaxpr.invars):
            if i < len(in_names):
                env[v] = in_names[i]
            else:
                name = in_labels[i] if in_labels and i < len(in_labels) else f"in{i}"
                env[v] = self.node(f"{name}\n{v.aval.str_short()}", indent, shape="ellipse",
                                   style="filled", fillcolor="#d6eaf8")
        for eqn in jaxpr.eqns:
            label = eqn.prim.name
            if self.show_params and eqn.params:
                ps = [f"{k}={s}" for k, v in eqn.params.items()
                      if (s := _param_str(v, self.max_chars)) is not None]
                if ps:
                    label += "\n" + "\n".join(ps[:3])
            label += "\n" + ", ".join(v.aval.str_short() for v in eqn.outvars)
            src = eqn.source_info
            attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": "#fdebd0"}
            if src is not None and getattr(src, "filename", ""):
                attrs["tooltip"] = str(src)
            node = self.node(label, indent, **attrs)
            for a in eqn.invars:
                if type(a) is Literal:
                    lit = self.node(f"{a.val!r:.20}", indent, shape="plaintext")
                    self.edge(lit, node, indent)
                else:
                    self.edge(env[a], node, indent)
            # Nested jaxprs: a cluster whose inputs are fed by this equation's operands.
            for k, p in eqn.params.items():
                sub = p.jaxpr if isinstance(p, ClosedJaxpr) else p if isinstance(p, Jaxpr) \
                    else None
                if sub is None:
                    continue
                sub_consts = list(p.consts) if isinstance(p, ClosedJaxpr) else []
                cid = next(self.ids)
                self.lines.append(f"{indent}subgraph cluster_{cid} {{")
                self.lines.append(f"{indent}  label={_q(f'{eqn.prim.name}: {k}')}; "
                                  "style=dashed; color=grey;")
                outs = self.jaxpr(sub, sub_consts, [], indent + "  ")
                self.lines.append(f"{indent}}}")
                for o in outs:
                    self.edge(o, node, indent)
            for v in eqn.outvars:
                env[v] = node
        outs = []
        for v in jaxpr.outvars:
            src = env.get(v) if type(v) is Var else None
            if src is None:
                src = self.node(f"{getattr(v, 'val', v)!r:.20}", indent, shape="plaintext")
            outs.append(src)
        return outs


def jaxpr_to_dot(jaxpr: ClosedJaxpr | Jaxpr, *, name: str = "jaxpr",
                 in_names: list[str] | None = None, out_names: list[str] | None = None,
                 show_params: bool = True, rankdir: str = "TB",
                 const_names: dict[int, str] | None = None, max_param_chars: int = 40) -> str:
    """Graphviz DOT text for a jaxpr (nodes: inputs, equations, outputs; edges: data).

    ``const_names`` labels constants (arrays a traced function closed over) by the ``id`` of
    the array object; ``max_param_chars`` truncates the shown params.

    Example:
        >>> import numpy as np, funcgrad
        >>> closed = funcgrad.make_jaxpr(lambda x: x * 2.0 + 1.0)(np.ones(2))
        >>> print(jaxpr_to_dot(closed).count("->"))
        5
    """
    if isinstance(jaxpr, ClosedJaxpr):
        j, consts = jaxpr.jaxpr, list(jaxpr.consts)
    elif isinstance(jaxpr, Jaxpr):
        j, consts = jaxpr, []
    else:
        raise TypeError(f"jaxpr_to_dot: expected a Jaxpr or ClosedJaxpr, got "
                        f"{type(jaxpr).__name__} (use to_dot(f, *args) for a function)")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"jaxpr_to_dot: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    b = _Builder(show_params, max_param_chars)
    b.lines.append(f"digraph {name} {{")
    b.lines.append(f"  rankdir={rankdir};")
    b.lines.append('  node [fontname="Helvetica", fontsize=10];')
    b.lines.append('  edge [fontname="Helvetica", fontsize=9];')
    outs = b.jaxpr(j, consts, [], "  ", in_names, const_names)
    for i, o in enumerate(outs):
        label = out_names[i] if out_names and i < len(out_names) else f"out{i}"
        aval = getattr(j.outvars[i], "aval", None)
        text = f"{label}\n{aval.str_short()}" if aval is not None else label
        out = b.node(text, "  ", shape="ellipse", style="filled", fillcolor="#d5f5e3")
        b.edge(o, out, "  ")
    b.lines.append("}")
    return "\n".join(b.lines) + "\n"


def _param_names(f: Callable[..., Any], n: int) -> list[str]:
    """The names of ``f``'s first ``n`` positional parameters (``arg<i>`` where unknown)."""
    import inspect

    try:
        params = [p.name for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def _arg_names(f: Callable[..., Any], args: tuple, module_name: str | None = None
               ) -> list[str]:
    """One label per array leaf of ``args``: the parameter name plus the leaf's pytree path."""
    names = []
    for a, pname in zip(args, _param_names(f, len(args))):
        base = module_name if module_name and hasattr(a, "named_parameters") else pname
        for path, _ in tree_util.tree_leaves_with_path(a):
            key = tree_util.keystr(path, simple=True, separator=".") if path else ""
            names.append(f"{base}.{key}" if key else base)
    return names


def _differentiable(arg: Any) -> bool:
    """Whether every array of ``arg`` is floating point or complex (Python floats too)."""
    def inexact(v: Any) -> bool:
        if isinstance(v, float | complex):
            return True
        kind = getattr(getattr(v, "dtype", None), "kind", None)
        return kind is not None and kind in "fc"

    leaves = tree_util.tree_leaves(arg)
    return bool(leaves) and all(inexact(v) for v in leaves)


class DotGraph(str):
    """DOT text (a ``str``) with the part of ``graphviz.Digraph``'s interface that
    ``torchviz.make_dot`` users call: ``source``, ``format``, ``render``, ``save``, and the
    picture in Jupyter (when the ``graphviz`` package and ``dot`` are installed).

    Example:
        >>> import numpy as np
        >>> dot = to_dot(lambda x: x * 2.0, np.ones(2))
        >>> dot.source == str(dot), dot.format
        (True, 'pdf')
    """

    format: str = "pdf"  # graphviz.Digraph's default; set it as with a Digraph

    @property
    def source(self) -> str:
        return str(self)

    def save(self, filename: str | os.PathLike = "graph.gv",
             directory: str | os.PathLike | None = None) -> str:
        """Write the DOT text (``graphviz.Digraph.save``); returns the path."""
        path = os.path.join(os.fspath(directory), os.fspath(filename)) if directory \
            else os.fspath(filename)
        with open(path, "w") as fh:
            fh.write(str(self))
        return path

    def render(self, filename: str | os.PathLike = "graph",
               directory: str | os.PathLike | None = None, view: bool = False,
               cleanup: bool = False, format: str | None = None,  # noqa: A002
               **_: Any) -> str:
        """``graphviz.Digraph.render``: the DOT text to ``filename`` and the picture to
        ``filename.<format>`` (``format`` or :attr:`format`); returns the picture's path.
        ``cleanup=True`` removes the DOT file; ``view`` is not supported (open the file)."""
        if view:
            raise ValueError("DotGraph.render(view=True): opening a viewer is not supported; "
                             "open the returned path instead")
        fmt = format or self.format
        base = os.path.join(os.fspath(directory), os.fspath(filename)) if directory \
            else os.fspath(filename)
        out = render(str(self), f"{base}.{fmt}", format=fmt)
        if not cleanup:
            self.save(base)
        return out

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if not graphviz_available():
            return {"text/plain": str(self)}
        import graphviz

        return {"image/svg+xml": graphviz.Source(str(self)).pipe(format="svg").decode()}


def to_dot(f: Callable[..., Any], *args: Any, graph: str = "forward",
           show_params: bool = True, rankdir: str = "TB", **kwargs: Any) -> DotGraph:
    """DOT text for ``f(*args)``: its forward graph or a derivative graph.

    ``graph``: ``"forward"``, ``"linearized"`` (tangent map), ``"transposed"`` (backward pass)
    or ``"grad"`` (``value_and_grad`` of a scalar ``f`` with respect to its floating-point
    arguments). Keyword arguments are passed to ``f`` (not differentiated).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> back = to_dot(lambda x: fnp.sum(fnp.sin(x)), np.ones(3), graph="transposed")
        >>> "cos" in back or "mul" in back
        True
    """
    if graph not in _GRAPHS:
        raise ValueError(f"to_dot(graph={graph!r}): expected one of {_GRAPHS}")
    if not callable(f):
        raise TypeError(f"to_dot: expected a function, got {type(f).__name__}")
    in_names = _arg_names(f, args)
    out_names = None
    if graph == "forward":
        closed = make_jaxpr(f)(*args, **kwargs)
        names = in_names
    elif graph == "grad":
        argnums = tuple(i for i, a in enumerate(args) if _differentiable(a))
        if not argnums:
            raise TypeError("to_dot(graph='grad'): no argument is floating point (or complex), "
                            "so there is nothing to differentiate")
        closed = make_jaxpr(value_and_grad(lambda *a: f(*a, **kwargs), argnums=argnums))(*args)
        names = in_names
    elif graph == "linearized":
        _, f_jvp = linearize(lambda *a: f(*a, **kwargs), *args)
        tangents = tree_util.tree_map(lambda a: a, args)
        closed = make_jaxpr(f_jvp)(*tangents)
        names = [f"d{n}" for n in in_names]
    else:
        out, f_vjp = vjp(lambda *a: f(*a, **kwargs), *args)
        closed = make_jaxpr(f_vjp)(out)
        names = ["cotangent"]
        out_names = [f"grad {n}" for n in in_names]
    return DotGraph(jaxpr_to_dot(closed, in_names=names, out_names=out_names,
                                 show_params=show_params, rankdir=rankdir))


def _const_labels(params: Any) -> dict[int, str]:
    """``{id(array): name}`` from torchviz's ``params`` (a dict name -> array, e.g.
    ``dict(model.named_parameters())``)."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise TypeError(f"make_dot(params=...): expected a dict of name -> array (as "
                        f"dict(model.named_parameters())), got {type(params).__name__}")
    return {id(v): str(k) for k, v in params.items()}


def make_dot(loss_fn: Callable[..., Any], *args: Any, backward: bool = False,
             show_params: bool = False, params: dict[str, Any] | None = None,
             show_attrs: bool | None = None, max_attr_chars: int = 50,
             show_saved: bool = False, **kwargs: Any) -> DotGraph:
    """``torchviz.make_dot``-style picture of a loss: inputs named by pytree paths.

    ``loss_fn(*args)`` usually takes a Module first (its parameters show up as
    ``model.<name>``); ``backward=True`` pictures ``value_and_grad`` (forward and backward).
    funcgrad records no graph on arrays, so where torchviz takes the output tensor
    (``make_dot(model(x))``) this takes the function computing it and its arguments. As
    torchviz's: ``params`` (a dict name -> array, e.g. ``dict(model.named_parameters())``)
    names the arrays ``loss_fn`` closes over or receives, ``show_attrs`` shows each
    operation's parameters (also ``show_params``), cut to ``max_attr_chars``, and
    ``show_saved`` adds the values reverse mode keeps for the backward pass (torchviz's
    orange saved-tensor nodes; ``funcgrad.ad_checkpoint.saved_residuals``), each with its
    shape and the operation and line that made it. Other keyword arguments go to
    ``loss_fn``. The result is the DOT text, a :class:`DotGraph` with
    ``render(filename, format=...)`` as a ``graphviz.Digraph``.

    Example:
        >>> import numpy as np, funcgrad_nn as nn
        >>> _ = nn.manual_seed(0)
        >>> model = nn.Linear(3, 1)
        >>> dot = make_dot(lambda m, x: m(x).sum(), model, np.ones((2, 3), np.float32))
        >>> "model.weight" in dot
        True
        >>> x = np.ones((2, 3), np.float32)
        >>> dot = make_dot(lambda: model(x).mean(), params=dict(model.named_parameters()))
        >>> "weight" in dot and "bias" in dot
        True
        >>> "saved for backward" in make_dot(lambda m, x: m(x).sum(), model, x, show_saved=True)
        True
    """
    if not callable(loss_fn):
        raise TypeError(
            f"make_dot: got a {type(loss_fn).__name__}, not a function. funcgrad records no "
            "graph on arrays, so pass the function that computes the output and its "
            "arguments instead of the output: make_dot(lambda m, x: m(x).mean(), model, x) "
            "for torchviz's make_dot(model(x).mean(), params=dict(model.named_parameters()))")
    if show_attrs is not None:
        show_params = bool(show_attrs)
    names = _arg_names(loss_fn, args, module_name="model")
    labels = _const_labels(params)
    if labels:  # an argument array that is one of params takes its name
        leaves = tree_util.tree_leaves(args)
        names = [labels.get(id(v), n) for v, n in zip(leaves, names)]
    with warnings.catch_warnings():
        # Drawing traces the model once and keeps nothing: a training-mode BatchNorm's or
        # Dropout's buffer update on the traced copy is meant to be dropped here, so
        # funcgrad_nn's BufferUpdateLostWarning (matched by its text: this layer cannot
        # import funcgrad_nn) would only be noise.
        warnings.filterwarnings("ignore", message=r".*was updated on a copy of the module")
        if backward:
            closed = make_jaxpr(value_and_grad(lambda *a: loss_fn(*a, **kwargs)))(*args)
            out_names = ["loss"] + [f"grad {n}"
                                    for n in names[:len(closed.jaxpr.outvars) - 1]]
        else:
            closed = make_jaxpr(lambda *a: loss_fn(*a, **kwargs))(*args)
            out_names = ["loss"]
        dot = jaxpr_to_dot(closed, in_names=names, out_names=out_names,
                           show_params=show_params, const_names=labels,
                           max_param_chars=max_attr_chars)
        if show_saved:
            # loss_fn itself when it can be, so the arguments keep their names
            fn = (lambda *a: loss_fn(*a, **kwargs)) if kwargs else loss_fn
            dot = _with_saved(dot, saved_residuals(fn, *args))
    return DotGraph(dot)


def _with_saved(dot: str, saved: list[tuple[Any, str]]) -> str:
    """``dot`` with a cluster of the residuals reverse mode saves, torchviz's orange nodes."""
    lines = ["  subgraph cluster_saved {", '    label="saved for backward";']
    for i, (aval, where) in enumerate(saved):
        lines.append(f"    saved{i} [label={_q(aval.str_short() + chr(10) + where)}, "
                     'shape="box", style="filled", fillcolor="orange"];')
    lines.append("  }")
    head, _, _ = dot.rstrip().rpartition("}")
    return head + "\n".join(lines) + "\n}\n"


def graphviz_available() -> bool:
    """Whether SVG/PNG rendering works (the ``graphviz`` package and the ``dot`` program).

    Example:
        >>> isinstance(graphviz_available(), bool)
        True
    """
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    import shutil

    return shutil.which("dot") is not None


def render(dot: str, path: str | os.PathLike, format: str | None = None) -> str:  # noqa: A002
    """Render DOT text to ``path`` (format from the suffix: ``.svg``, ``.png``, ``.pdf``).

    Needs the ``graphviz`` package (``pip install 'funcgrad[viz]'``) and Graphviz's ``dot``
    program. Returns the path written.

    Example:
        >>> import tempfile, os, numpy as np
        >>> if graphviz_available():
        ...     p = render(to_dot(lambda x: x * 2.0, np.ones(2)),
        ...                os.path.join(tempfile.mkdtemp(), "g.svg"))
        ...     assert open(p).read().lstrip().startswith("<")
    """
    path = os.fspath(path)
    fmt = format or os.path.splitext(path)[1].lstrip(".") or "svg"
    try:
        import graphviz
    except ImportError:
        raise ImportError(
            "funcgrad.viz.render needs the graphviz package and Graphviz's dot program: "
            "pip install 'funcgrad[viz]' (or pip install graphviz) and install Graphviz "
            "(apt-get install graphviz / brew install graphviz). DOT text from to_dot needs "
            "neither.") from None
    data = graphviz.Source(dot).pipe(format=fmt)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return path
