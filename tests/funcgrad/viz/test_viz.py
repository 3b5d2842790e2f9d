"""funcgrad.viz: DOT text for forward and derivative graphs parses (and renders when
graphviz is installed); make_dot names a Module's parameters."""

from __future__ import annotations

import re

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad import viz


def f(x, y):
    return fnp.sum(fnp.tanh(x) * y)


X, Y = np.ones(3), np.arange(3.0)

_NODE = re.compile(r'^\s*((?:n|saved)\d+) \[label="((?:[^"\\]|\\.)*)"(?:, \w+="(?:[^"\\]|\\.)*")*\];$')
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)( \[label=\"[^\"]*\"\])?;$")


def parse_dot(dot: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A strict parser for the subset of DOT we emit: every line must be understood."""
    lines = dot.strip().splitlines()
    assert lines[0].startswith("digraph ") and lines[0].endswith("{") and lines[-1] == "}"
    nodes, edges, depth = {}, [], 0
    for ln in lines[1:-1]:
        s = ln.strip()
        if m := _NODE.match(ln):
            nodes[m.group(1)] = m.group(2)
        elif m := _EDGE.match(ln):
            edges.append((m.group(1), m.group(2)))
        elif s.startswith("subgraph cluster_") and s.endswith("{"):
            depth += 1
        elif s == "}":
            depth -= 1
        elif s.startswith(("rankdir=", "node [", "edge [", "label=")):
            pass
        else:
            raise AssertionError(f"unparsed DOT line: {ln!r}")
    assert depth == 0
    for a, b in edges:
        assert a in nodes and b in nodes
    return nodes, edges


@pytest.mark.parametrize("graph", ["forward", "linearized", "transposed", "grad"])
def test_graphs_parse(graph):
    nodes, edges = parse_dot(viz.to_dot(f, X, Y, graph=graph))
    assert edges
    labels = " ".join(nodes.values())
    assert "f64[3]" in labels


def test_forward_graph_matches_jaxpr():
    closed = funcgrad.make_jaxpr(f)(X, Y)
    nodes, edges = parse_dot(viz.jaxpr_to_dot(closed))
    prims = [lbl.split("\\n")[0] for lbl in nodes.values()]
    for e in closed.jaxpr.eqns:
        assert e.prim.name in prims
    assert sum(p == e.prim.name for p in prims for e in closed.jaxpr.eqns[:1]) >= 1


def test_nested_jaxpr_cluster_and_source_tooltip():
    g = funcgrad.jit(lambda x: fnp.sin(x) * 2.0)
    dot = viz.to_dot(lambda x: g(x) + 1.0, X)
    parse_dot(dot)
    assert "subgraph cluster_" in dot and "sin" in dot
    assert "test_viz.py" in dot   # equations carry the user's line as a tooltip


def test_make_dot_names_parameters():
    _ = nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    x = np.ones((2, 3), np.float32)
    dot = viz.make_dot(lambda m, x: m(x).sum(), model, x)
    nodes, _ = parse_dot(dot)
    labels = " ".join(nodes.values())
    for name in ("model.0.weight", "model.0.bias", "model.2.weight", "loss"):
        assert name in labels
    back = viz.make_dot(lambda m, x: m(x).sum(), model, x, backward=True)
    parse_dot(back)
    assert "grad model.0.weight" in back


def test_bad_input():
    with pytest.raises(ValueError, match="graph"):
        viz.to_dot(f, X, Y, graph="sideways")
    with pytest.raises(TypeError, match="Jaxpr"):
        viz.jaxpr_to_dot(f)


@pytest.mark.skipif(not viz.graphviz_available(), reason="graphviz package / dot not installed")
def test_render_svg_and_png(tmp_path):
    dot = viz.to_dot(f, X, Y, graph="transposed")
    svg = viz.render(dot, tmp_path / "g.svg")
    assert open(svg).read().lstrip().startswith("<?xml")
    png = viz.render(dot, tmp_path / "g.png")
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("graph", ["forward", "grad"])
def test_keyword_arguments_reach_f(graph):
    # graph="grad" used to call f without its keyword arguments (the transposed
    # and linearized graphs hold the derivative as residuals: sin and tanh look alike there)
    def g(x, op="sin"):
        return fnp.sum(getattr(fnp, op)(x) * 3.0)

    assert "tanh" in viz.to_dot(g, X, graph=graph, op="tanh")
    assert "tanh" not in viz.to_dot(g, X, graph=graph)


def test_grad_graph_differentiates_the_floating_arguments_only():
    dot = viz.to_dot(lambda a, n: fnp.sum(a * n), X, np.arange(3), graph="grad")
    parse_dot(dot)
    with pytest.raises(TypeError, match="no argument is floating point"):
        viz.to_dot(lambda n: fnp.sum(n * 2), np.arange(3), graph="grad")


def _model():
    _ = nn.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))


def test_make_dot_of_an_output_array_says_to_pass_the_function():
    # torchviz's make_dot(model(x)) takes the output tensor; funcgrad has no graph on
    # arrays (it failed with "'numpy.ndarray' object is not callable")
    model = _model()
    with pytest.raises(TypeError, match="records no graph on arrays.*make_dot\\(lambda m, x"):
        viz.make_dot(model(np.ones((2, 3), np.float32)))


def test_make_dot_params_name_closed_over_arrays_as_torchviz():
    # torchviz: make_dot(model(x).mean(), params=dict(model.named_parameters())); here the
    # function closes over the model and params names its arrays (they were anonymous
    # constants, and params= went on to the function as a keyword)
    model = _model()
    x = np.ones((2, 3), np.float32)
    dot = viz.make_dot(lambda: model(x).mean(), params=dict(model.named_parameters()))
    nodes, edges = parse_dot(dot)
    labels = sorted(lbl.split("\\n")[0] for lbl in nodes.values())
    for name in ("0.weight", "0.bias", "2.weight", "2.bias"):
        assert name in labels
    # an argument array that is one of params takes its name too
    dot = viz.make_dot(lambda w, x: (x @ w.T).sum(), model[0].weight, x,
                       params={"fc.weight": model[0].weight})
    assert "fc.weight\\nf32[4,3]" in dot and "x\\nf32[2,3]" in dot
    with pytest.raises(TypeError, match="dict of name -> array"):
        viz.make_dot(lambda: model(x).mean(), params=list(model.parameters()))


def test_make_dot_show_attrs_and_max_attr_chars_as_torchviz():
    model = _model()
    x = np.ones((2, 3), np.float32)
    plain = viz.make_dot(lambda m, x: m(x).sum(), model, x)
    assert "dimension_numbers" not in plain
    shown = viz.make_dot(lambda m, x: m(x).sum(), model, x, show_attrs=True, max_attr_chars=12)
    parse_dot(shown)
    params = [p for lbl in parse_dot(shown)[0].values() for p in lbl.split("\\n")
              if p.startswith("dimension_numbers=")]
    assert params and all(len(p) <= len("dimension_numbers=") + 12 for p in params)


def test_make_dot_of_a_training_model_with_batchnorm_does_not_warn():
    import warnings

    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dot = viz.make_dot(lambda m, x: m(x).sum(), model, np.ones((2, 3), np.float32))
    assert "model.1.running_mean" in dot
    assert int(model[1].num_batches_tracked) == 0   # drawing changes nothing


def test_dot_graph_has_digraphs_source_save_and_render(tmp_path):
    # torchviz returns a graphviz.Digraph: users call .source, .render("name", format=...)
    dot = viz.make_dot(lambda m, x: m(x).sum(), _model(), np.ones((2, 3), np.float32))
    assert isinstance(dot, str) and dot.source == str(dot) and dot.format == "pdf"
    saved = dot.save("g.gv", directory=tmp_path)
    assert open(saved).read() == str(dot)
    if viz.graphviz_available():
        out = dot.render("g", directory=tmp_path, format="svg")
        assert out.endswith("g.svg") and open(out).read().lstrip().startswith("<")
    else:
        with pytest.raises(ImportError, match="graphviz"):
            dot.render("g", directory=tmp_path, format="svg")
    assert isinstance(viz.to_dot(f, X, Y), viz.DotGraph)


def test_make_dot_show_saved_adds_the_residuals_as_torchviz():
    # torchviz's make_dot(..., show_saved=True) draws the tensors autograd saved for the
    # backward pass (the keyword went on to the function here); here they are what
    # saved_residuals lists: x (for the weight's gradient), the transposed weight (for x's)
    # and the pre-activation (for relu's)
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    x = np.ones((4, 3), np.float32)
    plain = viz.make_dot(lambda m, x: m(x).sum(), model, x)
    dot = viz.make_dot(lambda m, x: m(x).sum(), model, x, show_saved=True)
    nodes, _ = parse_dot(dot)
    saved = sorted(lbl for name, lbl in nodes.items() if name.startswith("saved"))
    assert "saved for backward" in dot and "saved for backward" not in plain
    assert len(saved) == 3 and "f32[4,3]\\nfrom the argument x" in saved
    assert any(lbl.startswith("f32[4,2]\\noutput of add") for lbl in saved)
