"""funcgrad_nn.autograd.graph: saved-tensor hooks on what a custom Function saves."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
from funcgrad_nn.autograd import Function, graph


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x, None)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, none = ctx.saved_tensors
        x_again, _ = ctx.saved_tensors  # each read unpacks again, as PyTorch
        assert none is None
        return x + x_again * g


def _hooks(log):
    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return ("box", t * 1)

    def unpack(p):
        log.append("unpack")
        return p[1]

    return graph.saved_tensors_hooks(pack, unpack)


@pytest.mark.parametrize("transform", [
    lambda f: funcgrad.grad(f),
    lambda f: funcgrad.jit(funcgrad.grad(f)),
    lambda f: funcgrad.vmap(funcgrad.grad(f))])
def test_pack_at_save_unpack_at_each_read_as_torch(transform):
    # torch 2.13 with the same Function: one pack in forward (the None is not packed), one
    # unpack per read of ctx.saved_tensors in backward; the gradient 2x
    log = []
    x = dev(np.array([[1.0, 2.0], [3.0, 4.0]]))
    with _hooks(log):
        g = transform(lambda x: Square.apply(x).sum())(x)
    np.testing.assert_allclose(host(g), [[2.0, 4.0], [6.0, 8.0]])
    assert log.count("unpack") == 2 and len(log) == 3
    assert log[0][0] == "pack"


def test_no_pack_without_differentiation_and_unpack_after_the_block_as_torch():
    log = []
    x = dev(np.array([1.0, 2.0]))
    with _hooks(log):
        np.testing.assert_allclose(host(Square.apply(x)), [1.0, 4.0])
        assert log == []  # nothing is saved when no backward will run
        _, vjp_fn = funcgrad.vjp(Square.apply, x)
    assert log == [("pack", (2,))]
    (g,) = vjp_fn(dev(np.ones(2)))  # the hooks of the save, used after the block
    np.testing.assert_allclose(host(g), [2.0, 4.0])
    assert log[1:] == ["unpack", "unpack"]


def test_the_innermost_hooks_win_and_packed_objects_may_be_anything():
    store = {}

    def to_store(t):
        store[len(store)] = host(t.to_concrete_value()).copy()
        return f"key{len(store) - 1}"   # not an array: kept with the ctx as it is

    def from_store(key):
        return dev(store[int(key[3:])])

    outer = []
    x = dev(np.array([3.0]))
    with _hooks(outer), graph.saved_tensors_hooks(to_store, from_store):
        g = funcgrad.grad(lambda x: Square.apply(x).sum())(x)
    assert outer == [] and list(store) == [0]
    np.testing.assert_allclose(host(g), [6.0])


def test_save_on_cpu_keeps_the_saved_array_on_the_host_and_moves_it_back():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            seen.append(ctx._packed_saved[0][1])  # what is kept: the host copy
            return x * 3.0

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            seen.append(x.device)
            return g * 3.0 + 0 * x

    x = dev(np.array([1.0, 2.0]))
    with graph.save_on_cpu(pin_memory=True):
        g = funcgrad.grad(lambda x: Probe.apply(x).sum())(x)
    np.testing.assert_allclose(host(g), [3.0, 3.0])
    assert seen[0].device == "cpu"
    assert seen[1] == funcgrad.backend.device_of(x)


def test_disable_saved_tensors_hooks_as_torch():
    with graph.disable_saved_tensors_hooks("no offloading here"):
        with pytest.raises(RuntimeError, match="no offloading here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda p: p):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda p: p):
        with pytest.raises(RuntimeError, match="hooks are on"):
            with graph.disable_saved_tensors_hooks("hooks are on"):
                pass
    with pytest.raises(TypeError, match="callables"):
        graph.saved_tensors_hooks(1, lambda p: p)


def test_graph_names_without_a_recorded_graph():
    # torch.autograd.graph's allow_mutation_on_saved_tensors / increment_version hold
    # trivially (no array is modified behind a saved reference); Node, GradientEdge,
    # get_gradient_edge, register_multi_grad_hook name what to use instead (were missing)
    with graph.allow_mutation_on_saved_tensors():
        pass
    assert graph.increment_version(np.ones(2)) is None
    for name in ("Node", "GradientEdge", "get_gradient_edge", "register_multi_grad_hook"):
        with pytest.raises(AttributeError, match="records no backward graph"):
            getattr(graph, name)
    assert not hasattr(graph, "no_such_name")
