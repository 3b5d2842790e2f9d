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

_NODE = re.compile(r'^\s*(n\d+) \[label="((?:[^"\\]|\\.)*)"(?:, \w+="(?:[^"\\]|\\.)*")*\];$')
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
