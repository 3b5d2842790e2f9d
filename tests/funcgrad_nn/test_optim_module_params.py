"""The optax-style transformations on a whole Module: ``tx.init(model)``,
``tx.update(nn.grad(loss)(model), state, model)``, ``apply_updates(model, updates)`` with
buffers (BatchNorm, Dropout) and frozen parameters. Reference values: optax 0.2.8's adamw on
the dict of the trainable parameters, fed the same gradients (how: the docstring of
``test_adamw_on_a_module_with_buffers``)."""

import numpy as np

import funcgrad_nn as nn
from funcgrad import tree_util
from funcgrad_nn import optim


def _model():
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.Dropout(0.0), nn.Linear(2, 1))
    m[0].weight = nn.Parameter(np.array([[0.5, -0.25, 0.125], [1.0, 0.75, -0.5]]))
    m[0].bias = nn.Parameter(np.array([0.1, -0.2]))
    m[3].weight = nn.Parameter(np.array([[0.3, -0.7]]))
    m[3].bias = nn.Parameter(np.array([0.05]))
    m[3].requires_grad_(False)
    return m.double()


X = np.array([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [-1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])


def test_adamw_on_a_module_with_buffers():
    """optax's values from: pr = dict(model.named_parameters()); per step
    gr = dict(nn.grad(loss)(model).named_parameters()); ur, sr = optax.adamw(0.1,
    weight_decay=0.5).update(gr, sr, pr); pr = optax.apply_updates(pr, ur)."""
    m = _model()
    tx = optim.adamw(0.1, weight_decay=0.5)
    state = tx.init(m)
    # no state for the buffers nor the frozen Linear: 4 trainable arrays, 2 moments each
    assert len(tree_util.tree_leaves(state)) == 2 * 4 + 1
    for _ in range(3):
        g = nn.grad(lambda m: (m(X) ** 2).mean())(m)
        updates, state = tx.update(g, state, m)
        m = optim.apply_updates(m, updates)
    expected = {
        "0.weight": [[0.6586774516130832, 0.04952135495566823, -0.1555079600027797],
                     [1.1216703480317318, 0.3681791643923513, -0.15314762476209018]],
        "0.bias": [0.08573749940056406, -0.1714750002163744],
        "1.weight": [0.7488191296931408, 0.5841550316397992],
        "1.bias": [-0.05039017129320641, 0.05039018044129491],
    }
    got = dict(m.named_parameters())
    assert set(got) == set(expected)
    for k, v in expected.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-12, atol=1e-15)
    # the frozen layer and the buffers are the model's own, untouched by the optimizer
    np.testing.assert_array_equal(m[3].weight, [[0.3, -0.7]])
    np.testing.assert_array_equal(m[3].bias, [0.05])
    assert int(m[1].num_batches_tracked) == 3


def test_plain_funcgrad_grad_of_a_module_gives_buffers_no_update():
    # funcgrad.grad differentiates every leaf (buffers too): the view keeps the parameters'
    # gradients only
    import funcgrad

    m = _model()
    tx = optim.sgd(0.5)
    state = tx.init(m)
    g = funcgrad.grad(lambda m: (m.eval()(X) ** 2).mean(), allow_int=True)(m)
    updates, state = tx.update(g, state, m)
    new = optim.apply_updates(m, updates)
    np.testing.assert_array_equal(new[1].running_var, m[1].running_var)
    np.testing.assert_allclose(new[0].bias, m[0].bias - 0.5 * g[0].bias)
    np.testing.assert_array_equal(new[3].weight, m[3].weight)


def test_tied_parameter_updated_once_under_every_name():
    enc = nn.Linear(2, 2, bias=False).double()
    dec = nn.Linear(2, 2, bias=False).double()
    dec.weight = enc.weight
    m = nn.Sequential(enc, dec)
    tx = optim.sgd(1.0)
    state = tx.init(m)
    g = nn.grad(lambda m: m(np.ones((1, 2))).sum())(m)
    updates, state = tx.update(g, state, m)
    new = optim.apply_updates(m, updates)
    assert new[0].weight is new[1].weight
    np.testing.assert_allclose(new[0].weight, m[0].weight - g[0].weight)


def _named(tree):
    return dict(tree.named_parameters())


def test_masked_and_multisteps_on_a_module_equal_their_dict_form():
    # the dict form is checked against optax elsewhere; the Module form must give the same
    for make in (lambda: optim.masked(optim.adam(0.1), lambda p: tree_util.tree_map(
                     lambda x: x.ndim > 1, p)),
                 lambda: optim.MultiSteps(optim.adamw(0.1, weight_decay=0.5), 2),
                 lambda: optim.partition({"a": optim.sgd(0.1), "b": optim.adam(0.1)},
                                         lambda p: tree_util.tree_map(
                                             lambda x: "a" if x.ndim > 1 else "b", p))):
        m = _model()
        tx, txd = make(), make()
        state = tx.init(m)
        pd = _named(m)
        sd = txd.init(pd)
        for _ in range(2):
            g = nn.grad(lambda m: (m(X) ** 2).mean())(m)
            u, state = tx.update(g, state, m)
            ud, sd = txd.update(_named(g), sd, pd)
            m = optim.apply_updates(m, u)
            pd = optim.apply_updates(pd, ud)
        for k, v in pd.items():
            np.testing.assert_allclose(_named(m)[k], v, rtol=1e-13)


def test_update_arguments_are_forwarded_as_given():
    # the Module-aware wrapping must not add a params argument an update does not take
    tx = optim.GradientTransformation(lambda p: (), lambda u, s: (u * 2, s))
    np.testing.assert_array_equal(tx.update(np.ones(1), tx.init(0))[0], [2.0])
    tx = optim.sgd(0.5)
    p = np.ones(1)
    np.testing.assert_array_equal(tx.update(np.ones(1), tx.init(p), params=p)[0], [-0.5])


def test_a_mask_made_over_the_whole_model_lines_up_with_its_parameters():
    # tree_map over the model gives the buffers and the frozen layer a mask entry too
    m = _model()
    mask = tree_util.tree_map(lambda p: p.ndim > 1, m)
    tx = optim.adamw(0.1, weight_decay=0.5, mask=mask)
    txd = optim.adamw(0.1, weight_decay=0.5, mask={k: v.ndim > 1 for k, v in _named(m).items()})
    state, pd = tx.init(m), _named(m)
    sd = txd.init(pd)
    g = nn.grad(lambda m: (m(X) ** 2).mean())(m)
    u, state = tx.update(g, state, m)
    ud, sd = txd.update(_named(g), sd, pd)
    for k, v in _named(optim.apply_updates(m, u)).items():
        np.testing.assert_allclose(v, optim.apply_updates(pd, ud)[k], rtol=1e-13)
    labels = tree_util.tree_map(lambda p: "a" if p.ndim > 1 else "b", m)
    tx = optim.partition({"a": optim.sgd(0.1), "b": optim.set_to_zero()}, labels)
    u, _ = tx.update(g, tx.init(m), m)
    np.testing.assert_array_equal(u[1].weight, np.zeros(2))
    np.testing.assert_allclose(u[0].weight, -0.1 * g[0].weight)
