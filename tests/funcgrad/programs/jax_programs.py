"""Real JAX programs, written as JAX's documentation and tutorials write them, for
``test_jax_programs.py``: each ``p_*`` function takes the namespaces (``jax``, ``jnp``, ``lax``,
``random``, ``tu`` = tree_util, ``jsp`` = scipy) and returns a pytree of results. The same text
runs with JAX (``make_jax_programs_fixtures.py`` records ``jax_programs.json``) and with
funcgrad (the test compares).

The changes from the JAX originals: updates of arrays that are concrete in funcgrad (NumPy
arrays have no ``.at``) go through ``AT(jnp, x)``, which is ``jnp.at(x)`` for funcgrad and
``x.at`` for JAX (docs/porting.md); NumPy data goes through ``jax.device_put`` (so that the
strict test backend sees one device).
"""

# ruff: noqa
from __future__ import annotations

from functools import partial

import numpy as np


def AT(jnp, x):
    return jnp.at(x) if hasattr(jnp, "at") else x.at


def _xwt(jax):
    rng = np.random.RandomState(0)
    X = jax.device_put(rng.randn(5, 3))
    W = jax.device_put(rng.randn(3))
    T = jax.device_put((rng.rand(5) > 0.5).astype(np.float64))
    return X, W, 0.3, T


def p_cookbook_logistic(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    def sigmoid(x): return 0.5 * (jnp.tanh(x / 2) + 1)
    def predict(W, b, inputs): return sigmoid(jnp.dot(inputs, W) + b)
    def loss(W, b):
        preds = predict(W, b, X)
        label_probs = preds * T + (1 - preds) * (1 - T)
        return -jnp.sum(jnp.log(label_probs))
    W_grad = jax.grad(loss, argnums=0)(W, b)
    b_grad = jax.grad(loss, 1)(W, b)
    Wb = jax.grad(loss, (0, 1))(W, b)
    v, g = jax.value_and_grad(loss, (0, 1))(W, b)
    return W_grad, b_grad, Wb, v, g


def p_cookbook_dict_params(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    def loss2(params_dict):
        preds = jnp.tanh(jnp.dot(X, params_dict['W']) + params_dict['b'])
        return -jnp.sum(jnp.log(preds * T + (1 - preds) * (1 - T) + 2.0))
    return jax.grad(loss2)({'W': W, 'b': b})


def p_cookbook_hessian_jac(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    f = lambda W: jnp.sum(jnp.tanh(jnp.dot(X, W)) ** 2)
    def hessian(f): return jax.jacfwd(jax.jacrev(f))
    H = hessian(f)(W)
    J1 = jax.jacfwd(lambda W: jnp.tanh(X @ W))(W)
    J2 = jax.jacrev(lambda W: jnp.tanh(X @ W))(W)
    return H, J1, J2, jax.hessian(f)(W)


def p_cookbook_hvp(jax, jnp, **k):
    f = lambda x: jnp.sum(jnp.sin(x) * x ** 2) + jnp.prod(jnp.cos(x))
    def hvp(f, x, v): return jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)
    def hvp2(f, primals, tangents): return jax.jvp(jax.grad(f), primals, tangents)[1]
    def hvp3(f, primals, tangents): return jax.jvp(jax.grad(f), primals, tangents)
    def hvp_revfwd(f, primals, tangents):
        g = lambda primals: jax.jvp(f, primals, tangents)[1]
        return jax.grad(g)(primals)
    x = jnp.array([0.5, -1.0, 2.0]); v = jnp.array([1.0, 0.3, -0.2])
    return hvp(f, x, v), hvp2(f, (x,), (v,)), hvp3(f, (x,), (v,)), hvp_revfwd(f, (x,), (v,))


def p_cookbook_jvp_vjp(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    f = lambda W: jnp.tanh(X @ W + b)
    y, u = jax.jvp(f, (W,), (jnp.ones_like(W),))
    y2, vjp_fun = jax.vjp(f, W)
    (g,) = vjp_fun(jnp.arange(5.0))
    y3, f_jvp = jax.linearize(f, W)
    return y, u, y2, g, y3, f_jvp(jnp.array([1.0, 2.0, 3.0]))


def p_cookbook_vmap_jac(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    f = lambda W: jnp.tanh(X @ W + b)
    def our_jacrev(f):
        def jacfun(x):
            y, vjp_fun = jax.vjp(f, x)
            J, = jax.vmap(vjp_fun, in_axes=0)(jnp.eye(len(y)))
            return J
        return jacfun
    def our_jacfwd(f):
        def jacfun(x):
            _jvp = lambda s: jax.jvp(f, (x,), (s,))[1]
            Jt = jax.vmap(_jvp, in_axes=1)(jnp.eye(len(x)))
            return jnp.transpose(Jt)
        return jacfun
    return our_jacrev(f)(W), our_jacfwd(f)(W)


def p_cookbook_jac_matrix_vmapped(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    def vmap_mjp(f, x, M):
        y, vjp_fun = jax.vjp(f, x)
        outs, = jax.vmap(vjp_fun)(M)
        return outs
    def vmap_jmp(f, x, M):
        _jvp = lambda s: jax.jvp(f, (x,), (s,))[1]
        return jax.vmap(_jvp)(M)
    f = lambda W: jnp.sin(X @ W)
    return vmap_mjp(f, W, jnp.ones((2, 5))), vmap_jmp(f, W, jnp.ones((4, 3)))


def p_cookbook_complex(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    def f(z):
        x, y = jnp.real(z), jnp.imag(z)
        return x ** 2 + y ** 2
    z = 3. + 4j
    g1 = jax.grad(f)(z)
    def f2(z): return jnp.abs(z) ** 2
    g2 = jax.grad(f2)(z)
    g3 = jax.grad(lambda z: jnp.real(jnp.sin(z)))(z)
    h = jax.grad(lambda z: jnp.sin(z), holomorphic=True)(z)
    A = jnp.array([[5., 2. + 3j, 5j], [2. - 3j, 7., 1. + 7j], [-5j, 1. - 7j, 12.]])
    def fe(X):
        L = jnp.linalg.cholesky(X)
        return jnp.sum((L - jnp.sin(L)) ** 2)
    g4 = jax.grad(fe, holomorphic=True)(A)
    return g1, g2, g3, h, g4


def p_cookbook_complex_jvp(jax, jnp, **k):
    f = lambda z: jnp.sin(z) * jnp.conj(z)
    z = jnp.array([1. + 2j, -0.5 + 0.1j])
    y, t = jax.jvp(f, (z,), (jnp.array([1j, 1.0 + 0j]),))
    _, vjp = jax.vjp(f, z)
    return y, t, vjp(jnp.array([1.0 + 0j, 2j]))


def p_cookbook_per_example(jax, jnp, **k):
    X, W, b, T = _xwt(jax)
    def loss(params, x, t):
        w, b_ = params
        return jnp.sum((jnp.tanh(x @ w + b_) - t) ** 2)
    params = (W, b)
    perex = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, X, T)
    perex_j = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, X, T)
    return perex, perex_j


def p_cookbook_hessian_dict(jax, jnp, **k):
    f = lambda p: jnp.sum(p['a'] ** 3) * jnp.sum(jnp.sin(p['b']))
    H = jax.hessian(f)({'a': jnp.array([1.0, 2.0]), 'b': jnp.array([0.5])})
    return H


def p_grad_has_aux(jax, jnp, **k):
    def f(x):
        y = jnp.sin(x)
        return jnp.sum(y ** 2), {'y': y, 'n': jnp.sum(x)}
    (v, aux), g = jax.value_and_grad(f, has_aux=True)(jnp.arange(3.0))
    g2, aux2 = jax.grad(f, has_aux=True)(jnp.arange(3.0))
    j, auxj = jax.jacrev(f, has_aux=True)(jnp.arange(3.0))
    return v, aux, g, g2, aux2, j, auxj


def p_stop_gradient_td(jax, jnp, **k):
    value_fn = lambda theta, state: jnp.dot(theta, state)
    theta = jnp.array([0.1, -0.1, 0.])
    s_tm1 = jnp.array([1., 2., -1.]); r_t = jnp.array(1.); s_t = jnp.array([2., 1., 0.])
    def td_loss(theta, s_tm1, r_t, s_t):
        v_tm1 = value_fn(theta, s_tm1)
        target = r_t + value_fn(theta, s_t)
        return -0.5 * ((jax.lax.stop_gradient(target) - v_tm1) ** 2)
    td_update = jax.grad(td_loss)
    delta_theta = td_update(theta, s_tm1, r_t, s_t)
    batched = jax.vmap(td_update, in_axes=(None, 0, 0, 0))(theta, jnp.stack([s_tm1, s_t]), jnp.stack([r_t, r_t]), jnp.stack([s_t, s_tm1]))
    return delta_theta, batched


def p_straight_through(jax, jnp, **k):
    def f(x): return jnp.round(x)
    def straight_through_f(x):
        zero = x - jax.lax.stop_gradient(x)
        return zero + jax.lax.stop_gradient(f(x))
    x = 5.6
    return f(x), straight_through_f(x), jax.grad(f)(x), jax.grad(straight_through_f)(x)


def p_custom_jvp_log1pexp(jax, jnp, **k):
    @jax.custom_jvp
    def log1pexp(x): return jnp.log(1. + jnp.exp(x))
    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals; x_dot, = tangents
        ans = log1pexp(x)
        ans_dot = (1 - 1 / (1 + jnp.exp(x))) * x_dot
        return ans, ans_dot
    r = [jax.grad(log1pexp)(100.), jax.jit(jax.grad(log1pexp))(3.), jax.vmap(jax.jit(jax.grad(log1pexp)))(jnp.arange(3.))]
    # defjvps form
    @jax.custom_jvp
    def f(x, y): return jnp.sin(x) * y
    f.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
              lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)
    r += [f(2., 3.), jax.grad(f)(2., 3.), jax.grad(f, 1)(2., 3.), jax.jvp(f, (2., 3.), (1., 0.5))]
    return r


def p_custom_jvp_safe(jax, jnp, **k):
    @jax.custom_jvp
    def f(x): return x / (1 + jnp.sqrt(x))
    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals; x_dot, = tangents
        ans = f(x)
        ans_dot = ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1) ** 2)) * x_dot
        return ans, ans_dot
    @jax.custom_jvp
    def g(x): return 3 * x
    g.defjvps(lambda t, ans, x: 3 * t)
    return jax.grad(f)(0.), jax.grad(jax.grad(f))(1.5), jax.hessian(g)(2.0), jax.vmap(jax.grad(f))(jnp.array([1.0, 4.0]))


def p_custom_jvp_python_control(jax, jnp, **k):
    @jax.custom_jvp
    def f(x):
        if x > 0: return jnp.sin(x)
        else: return jnp.cos(x)
    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals; x_dot, = tangents
        ans = f(x)
        if x > 0: return ans, 2 * x_dot
        else: return ans, 3 * x_dot
    return jax.grad(f)(1.), jax.grad(f)(-1.)


def p_custom_vjp_basic(jax, jnp, **k):
    @jax.custom_vjp
    def f(x, y): return jnp.sin(x) * y
    def f_fwd(x, y): return f(x, y), (jnp.cos(x), jnp.sin(x), y)
    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)
    f.defvjp(f_fwd, f_bwd)
    return jax.grad(f)(2., 3.), jax.grad(f, (0, 1))(2., 3.), jax.vmap(jax.grad(f))(jnp.arange(3.), jnp.ones(3)), jax.jit(jax.grad(f))(1., 2.)


def p_clip_gradient(jax, jnp, **k):
    from functools import partial
    @jax.custom_vjp
    def clip_gradient(lo, hi, x): return x
    def clip_gradient_fwd(lo, hi, x): return x, (lo, hi)
    def clip_gradient_bwd(res, g):
        lo, hi = res
        return (None, None, jnp.clip(g, lo, hi))
    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)
    t = jnp.linspace(0, 10, 11)
    f = lambda x: jnp.sin(x) * 3.
    g = lambda x: clip_gradient(-0.75, 0.75, f(x))
    return jax.vmap(jax.grad(f))(t), jax.vmap(jax.grad(g))(t)


def p_custom_vjp_nondiff(jax, jnp, **k):
    from functools import partial
    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def app(f, x): return f(x)
    def app_fwd(f, x): return app(f, x), x
    def app_bwd(f, x, g): return (5 * g,)
    app.defvjp(app_fwd, app_bwd)
    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app2(f, x): return f(x)
    @app2.defjvp
    def app2_jvp(f, primals, tangents):
        x, = primals; x_dot, = tangents
        return f(x), 2. * x_dot
    @partial(jax.custom_vjp, nondiff_argnums=(1,))
    def scale(x, n): return x * n
    def scale_fwd(x, n): return scale(x, n), None
    def scale_bwd(n, res, g): return (g * n * 10,)
    scale.defvjp(scale_fwd, scale_bwd)
    return (jax.grad(lambda x: app(lambda y: y ** 2, x))(4.), jax.grad(lambda x: app2(lambda y: y ** 3, x))(4.),
            jax.grad(scale)(2., 3), jax.jit(jax.grad(scale), static_argnums=1)(2., 3))


def p_fixed_point(jax, jnp, **k):
    from functools import partial
    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return jnp.abs(x_prev - x) > 1e-6
        def body_fun(carry):
            _, x = carry
            return x, f(a, x)
        _, x_star = jax.lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star
    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)
    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = jax.vjp(lambda a: f(a, x_star), a)
        a_bar, = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
        return a_bar, jnp.zeros_like(x_star)
    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = jax.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]
    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)
    def newton_sqrt(a):
        update = lambda a, x: 0.5 * (x + a / x)
        return fixed_point(update, a, a)
    return newton_sqrt(2.), jax.grad(newton_sqrt)(2.), jax.grad(jax.grad(newton_sqrt))(2.)


def p_vmap_convolve(jax, jnp, **k):
    x = jnp.arange(5.); w = jnp.array([2., 3., 4.])
    def convolve(x, w):
        output = []
        for i in range(1, len(x) - 1):
            output.append(jnp.dot(x[i - 1:i + 2], w))
        return jnp.array(output)
    xs = jnp.stack([x, x]); ws = jnp.stack([w, w])
    auto = jax.vmap(convolve)
    return (convolve(x, w), auto(xs, ws), jax.vmap(convolve, in_axes=1, out_axes=1)(xs.T, ws.T),
            jax.vmap(convolve, in_axes=[0, None])(xs, w), jax.jit(auto)(xs, ws))


def p_vmap_misc(jax, jnp, **k):
    r_ = np.random.RandomState(5); A = jax.device_put(r_.randn(4, 3, 2)); v = jax.device_put(r_.randn(3))
    f = lambda a, v: a.T @ v
    r = [jax.vmap(f, (0, None))(A, v)]
    r.append(jax.vmap(jax.vmap(jnp.dot, (0, None)), (None, 0))(jnp.ones((2, 3)), jnp.ones((4, 3))))
    r.append(jax.vmap(lambda d: d['a'] * d['b'], in_axes=({'a': 0, 'b': None},))({'a': jnp.arange(3.), 'b': 2.0}))
    r.append(jax.vmap(lambda x: (x, x.sum()), out_axes=(1, 0))(jnp.ones((2, 3))))
    r.append(jax.vmap(lambda x, y: x + y, in_axes=(0, 1))(jnp.ones((2, 3)), jnp.ones((3, 2))))
    r.append(jax.vmap(lambda x: jnp.sum(x), axis_size=None)(jnp.ones((4,2))))
    r.append(jax.vmap(lambda x: 1.0, axis_size=3, in_axes=None)(jnp.ones(2)) if False else jnp.zeros(1))
    return r


def p_vmap_axis_name(jax, jnp, lax, **k):
    x = jnp.arange(4.)
    norm = jax.vmap(lambda v: v / lax.psum(v, 'i'), axis_name='i')(x)
    mean = jax.vmap(lambda v: v - lax.pmean(v, 'i'), axis_name='i')(x)
    idx = jax.vmap(lambda v: lax.axis_index('i') * v, axis_name='i')(x)
    mx = jax.vmap(lambda v: lax.pmax(v, 'i'), axis_name='i')(x)
    ag = jax.vmap(lambda v: lax.all_gather(v, 'i'), axis_name='i')(x)
    return norm, mean, idx, mx, ag


def p_pytree_mlp(jax, jnp, tu, **k):
    def init_mlp_params(layer_widths):
        params = []
        for n_in, n_out in zip(layer_widths[:-1], layer_widths[1:]):
            params.append(dict(weights=jax.device_put(r_.normal(size=(n_in, n_out)) * np.sqrt(2 / n_in)), biases=jnp.ones(shape=(n_out,))))
        return params
    r_ = np.random.RandomState(7); params = init_mlp_params([1, 16, 16, 1])
    shapes = tu.tree_map(lambda x: x.shape, params)
    def forward(params, x):
        *hidden, last = params
        for layer in hidden:
            x = jax.nn.relu(x @ layer['weights'] + layer['biases']) if hasattr(jax, 'nn') else jnp.maximum(0, x @ layer['weights'] + layer['biases'])
        return x @ last['weights'] + last['biases']
    def loss_fn(params, x, y): return jnp.mean((forward(params, x) - y) ** 2)
    LEARNING_RATE = 0.0001
    @jax.jit
    def update(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    xs = jax.device_put(np.random.RandomState(3).normal(size=(128, 1))); ys = xs ** 2
    for _ in range(50):
        params = update(params, xs, ys)
    return shapes, params, loss_fn(params, xs, ys)


def p_pytree_custom_node(jax, jnp, tu, **k):
    class MyContainer:
        def __init__(self, name, a, b, c):
            self.name = name; self.a = a; self.b = b; self.c = c
    def flatten_MyContainer(container):
        return [container.a, container.b, container.c], container.name
    def unflatten_MyContainer(aux_data, flat_contents):
        return MyContainer(aux_data, *flat_contents)
    tu.register_pytree_node(MyContainer, flatten_MyContainer, unflatten_MyContainer)
    t = [MyContainer('Alice', 1, 2, 3), MyContainer('Bob', 4, 5, 6)]
    leaves = tu.tree_leaves(t)
    m = tu.tree_map(lambda x: x + 1, t)
    g = jax.grad(lambda c: c.a * c.b + jnp.sin(c.c))(MyContainer('x', 1.0, 2.0, 3.0))
    return leaves, [(c.name, c.a, c.b, c.c) for c in m], [g.name, g.a, g.b, g.c]


def p_pytree_namedtuple_dataclass(jax, jnp, tu, **k):
    from typing import NamedTuple
    import dataclasses
    class MyOtherContainer(NamedTuple):
        name: str
        a: object
        b: object
    t = [MyOtherContainer('Alice', 1, 2), MyOtherContainer('Bob', 4, 5)]
    lv = tu.tree_leaves(t)
    @tu.register_dataclass
    @dataclasses.dataclass
    class Params:
        w: object
        b: object
        n: int = dataclasses.field(metadata=dict(static=True), default=3)
    p = Params(jnp.ones(2), jnp.zeros(()), 3)
    g = jax.grad(lambda p: jnp.sum(p.w * p.n) + p.b)(p)
    @partial(tu.register_dataclass, data_fields=['x'], meta_fields=['m'])
    @dataclasses.dataclass
    class P2:
        x: object
        m: str
    q = tu.tree_map(lambda v: v * 2, P2(jnp.arange(2.), 'hi'))
    return lv, [g.w, g.b, g.n], [q.x, q.m], len(tu.tree_leaves(p))


def p_pytree_class_register(jax, jnp, tu, **k):
    @tu.register_pytree_node_class
    class Special:
        def __init__(self, x, y): self.x = x; self.y = y
        def tree_flatten(self): return ((self.x, self.y), None)
        @classmethod
        def tree_unflatten(cls, aux_data, children): return cls(*children)
    s = jax.jit(lambda s: Special(s.y, s.x * 2))(Special(jnp.array(1.), jnp.array(2.)))
    v = jax.vmap(lambda s: s.x + s.y)(Special(jnp.arange(3.), jnp.ones(3)))
    return s.x, s.y, v


def p_pytree_keypaths(jax, jnp, tu, **k):
    tree = {'a': [1, 2], 'b': {'c': 3}, 'd': (4,)}
    flat, _ = tu.tree_flatten_with_path(tree)
    strs = [tu.keystr(p) for p, _ in flat]
    m = tu.tree_map_with_path(lambda p, x: x * len(p), tree)
    return strs, [v for _, v in flat], m


def p_tree_all_leaves_none(jax, jnp, tu, **k):
    t = {'a': None, 'b': [1, None]}
    return tu.tree_leaves(t), tu.tree_structure(t).num_leaves, tu.tree_map(lambda x: x + 1, t)['b'][0], tu.tree_all([True, (True,)])


def p_cond_switch(jax, jnp, lax, **k):
    op = jnp.array([1.0, -2.0])
    r = [lax.cond(True, lambda x: x + 1, lambda x: x - 1, op), lax.cond(False, lambda x: x + 1, lambda x: x - 1, op)]
    f = lambda x: lax.cond(x > 0, lambda x: x ** 2, lambda x: jnp.sin(x), x)
    r += [jax.grad(f)(2.0), jax.grad(f)(-2.0), jax.vmap(f)(jnp.array([-1.0, 1.0])), jax.vmap(jax.grad(f))(jnp.array([-1.0, 1.0])), jax.jit(f)(3.0)]
    sw = lambda i, x: lax.switch(i, [lambda x: x, lambda x: 2 * x, lambda x: x ** 3], x)
    r += [sw(0, 2.0), sw(5, 2.0), sw(-1, 2.0), jax.grad(sw, 1)(2, 2.0), jax.vmap(sw)(jnp.array([0, 1, 2]), jnp.array([1.0, 2.0, 3.0]))]
    r += [jax.jacfwd(f)(1.5), lax.cond(1, lambda a, b: a + b, lambda a, b: a - b, 1.0, 2.0)]
    return r


def p_while_fori(jax, jnp, lax, **k):
    init_val = 0
    cond_fun = lambda x: x < 10
    body_fun = lambda x: x + 1
    r = [lax.while_loop(cond_fun, body_fun, init_val)]
    r.append(lax.fori_loop(0, 10, lambda i, x: x + i, 0))
    r.append(lax.fori_loop(0, 5, lambda i, x: x * 2.0, 1.5))
    r.append(jax.grad(lambda x: lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * i + c, x))(0.3))
    r.append(jax.vmap(lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * 2, x))(jnp.array([1, 3, 7])))
    r.append(jax.jvp(lambda x: lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1], (2.0,), (1.0,)))
    r.append(jax.jit(lambda n: lax.fori_loop(0, n, lambda i, s: s + i, 0))(7))
    r.append(jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0))
    return r


def p_scan_cumsum(jax, jnp, lax, **k):
    def cumsum(res, el):
        res = res + el
        return res, res
    a = jnp.array([1., 2., 3., 5., 7., 11.])
    r = [lax.scan(cumsum, 0., a)]
    r.append(lax.scan(cumsum, 0., a, reverse=True))
    r.append(lax.scan(cumsum, 0., a, unroll=2))
    r.append(lax.scan(lambda c, x: (c + 1, c * 2), 0, None, length=4))
    rnn = lambda W, h0, xs: lax.scan(lambda h, x: (jnp.tanh(W @ h + x), jnp.sum(h)), h0, xs)
    W = jax.device_put(np.random.RandomState(0).randn(3, 3)) * 0.5
    xs = jax.device_put(np.random.RandomState(1).randn(4, 3))
    loss = lambda W: jnp.sum(rnn(W, jnp.zeros(3), xs)[0]) + jnp.sum(rnn(W, jnp.zeros(3), xs)[1])
    r.append(jax.grad(loss)(W))
    r.append(jax.jit(jax.grad(loss))(W))
    r.append(jax.vmap(lambda x0: lax.scan(lambda c, x: (c * x, c), x0, a)[1])(jnp.array([1.0, 2.0])))
    r.append(jax.jacfwd(loss)(W))
    return r


def p_scan_pytree(jax, jnp, lax, **k):
    def step(carry, x):
        c = {'s': carry['s'] + x['v'], 'n': carry['n'] + 1}
        return c, (c['s'], x['v'] * 2)
    out = lax.scan(step, {'s': 0.0, 'n': 0}, {'v': jnp.arange(4.)})
    return out


def p_associative_scan(jax, jnp, lax, **k):
    x = jnp.arange(1., 9.)
    r = [lax.associative_scan(jnp.add, x), lax.associative_scan(jnp.add, x, reverse=True), lax.associative_scan(jnp.multiply, x)]
    r.append(lax.associative_scan(jnp.maximum, jnp.array([3., 1., 4., 1., 5., 9., 2.])))
    r.append(jax.grad(lambda x: jnp.sum(lax.associative_scan(jnp.multiply, x) ** 2))(x[:5]))
    M = jnp.ones((3, 4))
    r.append(lax.associative_scan(jnp.add, M, axis=1))
    def lin(a, b):
        a1, b1 = a; a2, b2 = b
        return a2 * a1, a2 * b1 + b2
    r.append(lax.associative_scan(lin, (jnp.full(5, 0.5), jnp.arange(5.))))
    r.extend([lax.cumsum(x), lax.cummax(x, reverse=True), lax.cumprod(x[:4]), lax.cumlogsumexp(x[:4])])
    return r


def p_lax_map_reduce(jax, jnp, lax, **k):
    r = [lax.map(lambda x: x ** 2, jnp.arange(5.)), lax.map(lambda x: x * 2, jnp.arange(10.), batch_size=3)]
    r.append(lax.reduce(jnp.arange(6.).reshape(2, 3), 0., lax.add, (0,)))
    r.append(lax.reduce(jnp.arange(6.).reshape(2, 3), -jnp.inf, lax.max, (1,)))
    r.append(lax.reduce((jnp.arange(4.), jnp.ones(4)), (0., 0.), lambda a, b: (a[0] + b[0], a[1] + b[1]), (0,)))
    r.append(jax.grad(lambda x: lax.reduce(x, 0., lax.add, (0,)).sum())(jnp.ones(3)))
    r.append(jax.grad(lambda x: jnp.sum(lax.map(jnp.sin, x)))(jnp.arange(3.)))
    return r


def p_linear_regression(jax, jnp, **k):
    from typing import NamedTuple
    class Params(NamedTuple):
        weight: object
        bias: object
    def init(rng):
        weights_key, bias_key = jax.random.split(rng)
        weight = jax.random.normal(weights_key, ())
        bias = jax.random.normal(bias_key, ())
        return Params(weight, bias)
    def loss(params, x, y):
        pred = params.weight * x + params.bias
        return jnp.mean((pred - y) ** 2)
    LEARNING_RATE = 0.005
    @jax.jit
    def update(params, x, y):
        grad = jax.grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grad)
    rng = jax.random.key(42)
    xs = jax.device_put(np.random.RandomState(0).normal(size=(100,)))
    noise = jax.device_put(np.random.RandomState(1).normal(scale=0.1, size=(100,)))
    ys = xs * 3 - 1 + noise
    params = init(rng)
    for _ in range(1000):
        params = update(params, xs, ys)
    return params.weight, params.bias, loss(params, xs, ys)


def p_oob_indexing(jax, jnp, **k):
    x = jnp.arange(10.0)
    r = [AT(jnp, x)[11].get(), AT(jnp, x)[11].get(mode='fill', fill_value=jnp.nan), AT(jnp, x)[jnp.array([1, 12, -1])].get(mode='clip')]
    r.append(AT(jnp, x)[11].set(5.0)); r.append(AT(jnp, x)[jnp.array([0, 20])].add(3.0))
    r.append(jax.jit(lambda x, i: x[i])(x, 11)); r.append(jax.jit(lambda x, i: x[i])(x, -11))
    r.append(jnp.arange(10)[11:20]); r.append(AT(jnp, x)[-1].set(-1.0))
    r.append(jax.jit(lambda i: AT(jnp, x)[i].get(mode='fill', fill_value=-7.0))(jnp.array([3, 30, -30])))
    r.append(jax.grad(lambda x: AT(jnp, x)[jnp.array([1, 20])].get(mode='fill', fill_value=0.).sum())(x))
    return r


def p_at_ops(jax, jnp, **k):
    x = jnp.arange(6.0).reshape(2, 3)
    idx = jnp.array([0, 0, 1])
    v = jnp.arange(6.0)
    r = [AT(jnp, x)[0, 1].set(10.), AT(jnp, x)[:, 1].add(5.), AT(jnp, x)[1].mul(2.), AT(jnp, x)[..., 0].min(-1.), AT(jnp, x)[0].max(jnp.array([2., 0., 5.])),
         AT(jnp, x)[0, :].divide(2.), AT(jnp, x)[1, 2].power(2.), AT(jnp, x)[0].get(), AT(jnp, v)[idx].add(1.), AT(jnp, v)[idx].set(jnp.array([7., 8., 9.])),
         AT(jnp, v)[idx].mul(3.), AT(jnp, v)[idx].min(jnp.array([-1., -2., 0.])), AT(jnp, v)[jnp.array([5, 5])].max(jnp.array([3., 9.]))]
    r.append(AT(jnp, v)[jnp.array([True, False, True, False, False, False])].set(0.) if False else v)
    g = jax.grad(lambda v: jnp.sum(AT(jnp, v)[idx].add(v[:3] ** 2) ** 2))(v)
    g2 = jax.grad(lambda v: jnp.sum(AT(jnp, v)[jnp.array([0, 1, 2])].mul(v[3:], unique_indices=True) ))(v)
    g3 = jax.grad(lambda w: jnp.sum(AT(jnp, jnp.zeros(6))[idx].set(w) * v))(jnp.array([1., 2., 3.]))
    g4 = jax.grad(lambda v: jnp.sum(AT(jnp, v)[jnp.array([1, 1, 2])].max(jnp.array([2., 0.5, 10.]))))(v)
    r += [g, g2, g3, g4]
    r.append(jax.vmap(lambda row, i: row.at[i].set(-1.))(x, jnp.array([2, 0])))
    r.append(AT(jnp, x)[1:, ::2].set(jnp.array([[7., 8.]])))
    r.append(AT(jnp, v)[idx].add(1., unique_indices=False, indices_are_sorted=True))
    r.append(AT(jnp, v)[2].apply(lambda t: t ** 2) if hasattr(AT(jnp, v)[2], 'apply') else v)
    i32 = jnp.arange(4, dtype=jnp.int32).at[0].add(2.7) if False else jnp.arange(4, dtype=jnp.int32)
    r.append(i32)
    return r


def p_checkpoint(jax, jnp, **k):
    def g(W, x):
        y = jnp.dot(W, x)
        return jnp.sin(y)
    def f(W1, W2, W3, x):
        x = g(W1, x); x = g(W2, x); x = g(W3, x)
        return x
    rs = np.random.RandomState(0)
    W1, W2, W3 = [jax.device_put(rs.randn(5, 5)) for _ in range(3)]
    x = jax.device_put(rs.randn(5))
    f2 = lambda *a: jnp.sum(f(*a))
    g_ck = jax.checkpoint(g)
    f3 = lambda W1, W2, W3, x: jnp.sum(g_ck(W3, g_ck(W2, g_ck(W1, x))))
    r = [jax.grad(f2, (0, 1, 2))(W1, W2, W3, x), jax.grad(f3, (0, 1, 2))(W1, W2, W3, x)]
    f4 = jax.checkpoint(f2, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    r.append(jax.grad(f4)(W1, W2, W3, x))
    f5 = jax.remat(f2, policy=jax.checkpoint_policies.nothing_saveable)
    r.append(jax.jit(jax.grad(f5))(W1, W2, W3, x))
    def h(x):
        a = __import__('jax.ad_checkpoint').ad_checkpoint.checkpoint_name(jnp.sin(x), 'a') if jax.__name__=='jax' else jax.checkpoint_name(jnp.sin(x), 'a')
        return jnp.sum(jnp.cos(a) * x)
    hc = jax.checkpoint(h, policy=jax.checkpoint_policies.save_only_these_names('a'))
    r.append(jax.grad(hc)(x))
    @partial(jax.checkpoint, static_argnums=(1,))
    def p(x, n): return jnp.sum(x ** n)
    r.append(jax.grad(p)(x, 3))
    return r


def p_scan_remat_unroll(jax, jnp, lax, **k):
    def step(c, x):
        c = jnp.tanh(c * 1.1 + x)
        return c, c ** 2
    xs = jnp.linspace(-1, 1, 7)
    f = lambda c0: jnp.sum(lax.scan(jax.checkpoint(step), c0, xs)[1])
    f2 = lambda c0: jnp.sum(lax.scan(step, c0, xs, unroll=3)[1])
    f3 = lambda c0: jnp.sum(lax.scan(step, c0, xs, unroll=True)[1])
    return jax.grad(f)(0.2), jax.grad(f2)(0.2), jax.grad(f3)(0.2), jax.hessian(f)(0.2)


def p_dynamic_shapes_ok(jax, jnp, lax, **k):
    x = jnp.arange(10.)
    f = jax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (3,)))
    g = jax.jit(lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)))
    h = jax.jit(lambda x: jnp.where(x > 4, x, 0).sum())
    n = jax.jit(lambda x: jnp.nonzero(x > 4, size=3, fill_value=-1))
    return f(x, 2), f(x, 9), g(x, 9), h(x), n(x), lax.dynamic_slice_in_dim(x, 4, 2), lax.dynamic_index_in_dim(x, 3, keepdims=False)


def p_rk4_ode(jax, jnp, lax, **k):
    def f(y, t, a): return jnp.array([y[1], -a * jnp.sin(y[0])])
    def rk4(y0, ts, a):
        def step(y, t_pair):
            t0, t1 = t_pair; h = t1 - t0
            k1 = f(y, t0, a); k2 = f(y + h / 2 * k1, t0 + h / 2, a); k3 = f(y + h / 2 * k2, t0 + h / 2, a); k4 = f(y + h * k3, t1, a)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return y, y
        _, ys = lax.scan(step, y0, (ts[:-1], ts[1:]))
        return ys
    ts = jnp.linspace(0, 2, 21); y0 = jnp.array([1.0, 0.0])
    loss = lambda a: jnp.sum(rk4(y0, ts, a)[:, 0] ** 2)
    return rk4(y0, ts, 2.0)[-1], jax.grad(loss)(2.0), jax.jit(jax.grad(loss))(2.0), jax.vmap(jax.grad(loss))(jnp.array([1.0, 3.0])), jax.jacfwd(lambda y0: rk4(y0, ts, 1.0)[-1])(y0)


def p_kalman(jax, jnp, lax, **k):
    A = jnp.array([[1., 1.], [0., 1.]]); C = jnp.array([[1., 0.]]); Q = 0.01 * jnp.eye(2); R = jnp.array([[0.5]])
    ys = jnp.sin(jnp.linspace(0, 3, 10))[:, None]
    def kf(q_scale):
        def step(carry, y):
            m, P = carry
            m = A @ m; P = A @ P @ A.T + Q * q_scale
            S = C @ P @ C.T + R
            K = jnp.linalg.solve(S, C @ P).T
            r = y - C @ m
            ll = -0.5 * (r @ jnp.linalg.solve(S, r) + jnp.linalg.slogdet(S)[1] + jnp.log(2 * jnp.pi))
            m = m + K @ r; P = P - K @ S @ K.T
            return (m, P), ll
        _, lls = lax.scan(step, (jnp.zeros(2), jnp.eye(2)), ys)
        return jnp.sum(lls)
    return kf(1.0), jax.grad(kf)(1.0), jax.hessian(kf)(1.0)


def p_gp_regression(jax, jnp, jsp, **k):
    X = jnp.linspace(0, 1, 8)[:, None]; y = jnp.sin(6 * X[:, 0])
    def nll(params):
        ls, sf, sn = jnp.exp(params)
        d = X - X.T
        K = sf ** 2 * jnp.exp(-0.5 * d ** 2 / ls ** 2) + (sn ** 2 + 1e-6) * jnp.eye(8)
        L = jnp.linalg.cholesky(K)
        alpha = jsp.linalg.cho_solve((L, True), y)
        z = jsp.linalg.solve_triangular(L, y, lower=True)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(L))) + 0.5 * 8 * jnp.log(2 * jnp.pi) + 0 * jnp.sum(z)
    p = jnp.array([-1.0, 0.0, -2.0])
    return nll(p), jax.grad(nll)(p), jax.hessian(nll)(p)


def p_newton(jax, jnp, **k):
    f = lambda x: jnp.sum((x - jnp.array([1., 2.])) ** 4) + jnp.sum(x ** 2)
    x = jnp.array([0., 0.])
    for _ in range(5):
        x = x - jnp.linalg.solve(jax.hessian(f)(x), jax.grad(f)(x))
    return x


def p_bisection(jax, jnp, lax, **k):
    def root(c):
        def body(s):
            lo, hi = s; mid = (lo + hi) / 2
            return lax.cond(mid ** 3 - c > 0, lambda: (lo, mid), lambda: (mid, hi))
        lo, hi = lax.while_loop(lambda s: s[1] - s[0] > 1e-10, body, (0., 10.))
        return (lo + hi) / 2
    return root(2.0), jax.vmap(root)(jnp.array([1.0, 8.0, 27.0])), jax.jit(root)(5.0)


def p_vmap_cond_while_batched(jax, jnp, lax, **k):
    def collatz(n):
        return lax.while_loop(lambda s: s[0] != 1, lambda s: (lax.cond(s[0] % 2 == 0, lambda m: m // 2, lambda m: 3 * m + 1, s[0]), s[1] + 1), (n, 0))[1]
    return jax.vmap(collatz)(jnp.array([1, 2, 3, 6, 7, 27])), jax.jit(jax.vmap(collatz))(jnp.array([9, 10]))


def p_fori_traced_bounds(jax, jnp, lax, **k):
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x + i, 1.0)
    return jax.jit(f)(1.5, 4), jax.vmap(f, (None, 0))(1.5, jnp.array([1, 2, 3])), jax.jvp(lambda x: f(x, 3), (2.0,), (1.0,))


def p_custom_vjp_pytree_scan(jax, jnp, lax, **k):
    @jax.custom_vjp
    def f(p, x): return {'y': p['w'] * jnp.sin(x), 'z': p['b'] + x}
    def fwd(p, x): return f(p, x), (p, x)
    def bwd(res, g):
        p, x = res
        return ({'w': g['y'] * jnp.sin(x), 'b': g['z']}, g['y'] * p['w'] * jnp.cos(x) + g['z'])
    f.defvjp(fwd, bwd)
    p = {'w': 2.0, 'b': 0.5}
    loss = lambda p, xs: jnp.sum(lax.scan(lambda c, x: (c + f(p, x)['y'] * f(p, x)['z'], c), 0.0, xs)[1])
    xs = jnp.linspace(0, 1, 5)
    return jax.grad(loss)(p, xs), jax.jit(jax.grad(loss, 1))(p, xs), jax.vmap(jax.grad(loss), (None, 0))(p, jnp.stack([xs, xs * 2]))


def p_custom_jvp_vmap_jit(jax, jnp, **k):
    @jax.custom_jvp
    def safe_norm(x):
        return jnp.sqrt(jnp.sum(x ** 2))
    @safe_norm.defjvp
    def _(primals, tangents):
        x, = primals; t, = tangents
        n = safe_norm(x)
        return n, jnp.where(n == 0, 0.0, jnp.dot(x, t) / jnp.where(n == 0, 1.0, n))
    xs = jnp.array([[3., 4.], [0., 0.]])
    return jax.vmap(jax.grad(safe_norm))(xs), jax.jit(jax.vmap(jax.grad(safe_norm)))(xs), jax.hessian(safe_norm)(xs[0]), jax.jacrev(jax.vmap(safe_norm))(xs)


def p_partial_tree(jax, jnp, tu, **k):
    p = tu.Partial(jnp.add, 1.0)
    f = jax.jit(lambda g, x: g(x))
    return f(p, 2.0), tu.tree_leaves(p)


def p_vectorize(jax, jnp, **k):
    f = jnp.vectorize(lambda a, b: jnp.dot(a, b), signature='(n),(n)->()')
    g = jnp.vectorize(lambda x: x ** 2 if False else jnp.sin(x) * 2)
    return f(jnp.ones((3, 4)), jnp.arange(4.)), g(jnp.arange(3.)), jax.grad(lambda x: jnp.sum(f(x, x)))(jnp.ones((2, 3)))


def p_named_scope_eval(jax, jnp, **k):
    @jax.jit
    def f(x):
        with jax.named_scope('layer1'):
            y = jnp.sin(x)
        with jax.ensure_compile_time_eval():
            c = jnp.arange(3.) * 2
        return y + c
    return f(jnp.ones(3))


def p_transform_options(jax, jnp, lax, **k):
    f = lambda x, y: (jnp.sin(x) * y, {'aux': x + y})
    r = [jax.vjp(f, 1.0, 2.0, has_aux=True)[2], jax.vjp(f, 1.0, 2.0, has_aux=True)[1](1.0)]
    r.append(jax.jvp(f, (1.0, 2.0), (1.0, 0.0), has_aux=True))
    r.append(jax.jacfwd(f, argnums=(0, 1), has_aux=True)(1.0, 2.0))
    r.append(jax.jacrev(lambda d: jnp.stack([d['a'] * d['b'], d['a']]), )({'a': 1.0, 'b': 3.0}))
    y, fl = jax.linearize(lambda x, y: x * jnp.sin(y), 2.0, 1.0)
    r += [y, fl(1.0, 1.0)]
    lt = jax.linear_transpose(lambda x: jnp.array([x[0] + x[1], 2 * x[1]]), jnp.ones(2))
    r.append(lt(jnp.array([1.0, 1.0])))
    r.append(jax.hessian(lambda p: p['a'] ** 2 * p['b'])({'a': 1.0, 'b': 2.0}))
    r.append(jax.vmap(lambda d: d['x'] * d['y'], in_axes=({'x': 0, 'y': None},), out_axes=0)({'x': jnp.arange(3.), 'y': 2.}))
    r.append(jax.vmap(lambda x: (x, 5.0), out_axes=(0, None))(jnp.arange(3.)))
    r.append(jax.jit(lambda x, *, scale: x * scale, static_argnames='scale')(2.0, scale=3))
    r.append(jax.grad(lambda x, y: x * y, argnums=1)(2.0, 5.0))
    r.append(jax.value_and_grad(lambda z: jnp.abs(z) ** 2, holomorphic=False)(1. + 2j))
    r.append(jax.jacfwd(lambda z: z ** 2, holomorphic=True)(jnp.array([1. + 1j, 2. + 0j])))
    r.append(jax.jacrev(lambda z: z ** 2, holomorphic=True)(jnp.array([1. + 1j, 2. + 0j])))
    return r


def p_checkpoint_policies(jax, jnp, **k):
    W = jax.device_put(np.random.RandomState(0).randn(4, 4))
    f = lambda x: jnp.sum(jnp.tanh(W @ jnp.tanh(W @ x)))
    x = jnp.arange(4.)
    pols = ['everything_saveable', 'nothing_saveable', 'dots_saveable', 'checkpoint_dots', 'dots_with_no_batch_dims_saveable']
    return [jax.grad(jax.checkpoint(f, policy=getattr(jax.checkpoint_policies, p)))(x) for p in pols] + [jax.grad(jax.checkpoint(f, prevent_cse=False))(x)]


def p_custom_root_linear_solve(jax, jnp, lax, **k):
    def sqrt_newton(a):
        def f(x): return x ** 2 - a
        def solve(f, x0):
            return lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x0)
        def tangent_solve(g, y): return y / g(1.0)
        return lax.custom_root(f, 1.0, solve, tangent_solve)
    A = jnp.array([[4., 1.], [1., 3.]])
    def ls(b):
        return lax.custom_linear_solve(lambda x: A @ x, b, solve=lambda mv, b: jnp.linalg.solve(A, b), symmetric=True)
    return sqrt_newton(2.0), jax.grad(sqrt_newton)(2.0), ls(jnp.array([1., 2.])), jax.jacfwd(ls)(jnp.array([1., 2.])), jax.grad(lambda b: jnp.sum(ls(b) ** 2))(jnp.array([1., 2.]))


def p_reductions_where(jax, jnp, **k):
    x = jnp.arange(6.).reshape(2, 3); m = x % 2 == 0
    return (jnp.sum(x, where=m), jnp.max(x, axis=1, where=m, initial=-1.), jnp.mean(x, where=m), jnp.min(x, initial=0.5), jnp.prod(x + 1, axis=0, keepdims=True),
            jnp.argmax(x, axis=1, keepdims=True), jnp.take(jnp.arange(5.), jnp.array([0, 7]), mode='clip'), jnp.take(jnp.arange(5.), jnp.array([0, 7]), mode='fill', fill_value=-1.),
            jnp.var(x, where=m), jax.grad(lambda x: jnp.sum(x, where=m))(x), jax.grad(lambda x: jnp.max(x, where=m, initial=0.))(x),
            jnp.any(m, axis=0), jnp.count_nonzero(m), jnp.ptp(x, axis=1), jnp.average(x, axis=1, weights=jnp.array([1., 2., 3.])), jnp.cumprod(x + 1, axis=1),
            jnp.linalg.norm(x, ord=1), jnp.linalg.norm(x, ord='nuc'), jnp.linalg.norm(x[0], ord=jnp.inf), jnp.nanargmax(jnp.array([jnp.nan, 1., 3.])))


def p_conv_tutorial(jax, jnp, lax, jsp, **k):
    rs = np.random.RandomState(0)
    kernel = jax.device_put(rs.randn(3, 3, 3, 4)) # HWIO
    img = jax.device_put(rs.randn(1, 9, 9, 3))  # NHWC
    dn = lax.conv_dimension_numbers(img.shape, kernel.shape, ('NHWC', 'HWIO', 'NHWC'))
    out = lax.conv_general_dilated(img, kernel, (1, 1), 'SAME', (1, 1), (1, 1), dn)
    out2 = lax.conv_general_dilated(img, kernel, (2, 2), 'VALID', (1, 1), (2, 2), dn)
    out3 = lax.conv_general_dilated(img, kernel, (1, 1), ((1, 1), (2, 0)), (2, 2), (1, 1), dn)  # transposed-like lhs dilation
    out4 = lax.conv_transpose(img, kernel, (2, 2), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    g = jax.grad(lambda k: jnp.sum(lax.conv_general_dilated(img, k, (1, 1), 'SAME', dimension_numbers=dn) ** 2))(kernel)
    dw = lax.conv_general_dilated(img, jnp.ones((3, 3, 1, 3)), (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'), feature_group_count=3)
    x1 = jnp.linspace(0, 1, 10); w1 = jnp.array([1., -2., 1.])
    red = lambda a: (a.shape, a.ravel()[::17], jnp.sum(a), jnp.sum(a ** 2))
    return ([red(a) for a in (out, out2, out3, out4, g, dw)], jnp.convolve(x1, w1, mode='same'), jnp.convolve(x1, w1, mode='valid'), jsp.signal.convolve2d(jnp.eye(4), jnp.ones((2, 2)), mode='same'),
            jnp.correlate(x1, w1, mode='full'), jsp.signal.convolve(x1, w1))


def p_custom_symbolic_zeros(jax, jnp, **k):
    @jax.custom_vjp
    def f(x, y): return x * y
    def fwd(x, y):
        return f(x.value, y.value), (x.value, y.value, x.perturbed, y.perturbed)
    def bwd(res, g):
        x, y, px, py = res
        return (g * y if px else None, g * x if py else None)
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    @jax.custom_jvp
    def h(x, y): return jnp.sin(x) * y
    @partial(h.defjvp, symbolic_zeros=True)
    def h_jvp(primals, tangents):
        x, y = primals; tx, ty = tangents
        out = h(x, y)
        t = 0.
        if type(tx) is not jax.custom_derivatives.SymbolicZero: t = t + jnp.cos(x) * y * tx
        if type(ty) is not jax.custom_derivatives.SymbolicZero: t = t + jnp.sin(x) * ty
        return out, t
    return jax.grad(f)(2., 3.), jax.grad(f, 1)(2., 3.), jax.grad(h)(1., 2.), jax.grad(h, (0, 1))(1., 2.)


def p_custom_vjp_int_arg(jax, jnp, **k):
    @jax.custom_vjp
    def f(x, n): return x ** n
    def fwd(x, n): return f(x, n), (x, n)
    def bwd(res, g):
        x, n = res
        return (g * n * x ** (n - 1), None)
    f.defvjp(fwd, bwd)
    return jax.grad(f)(2.0, 3), jax.vmap(jax.grad(f), (0, None))(jnp.array([1.0, 2.0]), 2)


def p_custom_gradient(jax, jnp, **k):
    @jax.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * 10 * x,)
    return jax.grad(f)(3.0), jax.vmap(jax.grad(f))(jnp.array([1.0, 2.0]))


def p_custom_vjp_closure_convert(jax, jnp, **k):
    def outer(a):
        @jax.custom_vjp
        def f(x): return a * x
        f.defvjp(lambda x: (f(x), None), lambda r, g: (g * 7,))
        return f
    return jax.grad(outer(2.0))(1.0), jax.jit(jax.grad(outer(2.0)))(1.0)


def p_lax_special_reduce_window(jax, jnp, lax, **k):
    x = jnp.arange(16.).reshape(1, 4, 4, 1)
    maxpool = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')
    avgpool = lambda x: lax.reduce_window(x, 0., lax.add, (1, 2, 2, 1), (1, 1, 1, 1), 'SAME') / 4
    return maxpool(x), avgpool(x), jax.grad(lambda x: jnp.sum(maxpool(x) ** 2))(x), jax.grad(lambda x: jnp.sum(avgpool(x) ** 2))(x)


def p_tree_new_api(jax, jnp, **k):
    t = {'a': jnp.ones(2), 'b': [jnp.zeros(1), 3.0]}
    leaves, td = jax.tree.flatten(t)
    return (jax.tree.map(lambda x: x * 2, t), jax.tree.leaves(t), jax.tree.unflatten(td, leaves),
            jax.tree.reduce(lambda a, b: a + jnp.sum(b), t, 0.0), jax.tree.structure(t).num_leaves,
            jax.tree.map(lambda x, y: x + y, t, t), jax.tree.all(jax.tree.map(lambda x: True, t)))


def p_misc_jnp(jax, jnp, **k):
    rs = np.random.RandomState(0); A = jax.device_put(rs.randn(3, 3)); B = jax.device_put(rs.randn(3, 4))
    r = [jnp.einsum('ij,jk->ik', A, B), jnp.einsum('ii', A), jnp.linalg.norm(A), jnp.linalg.norm(A, axis=0), jnp.linalg.inv(A), jnp.linalg.solve(A, B),
         jnp.linalg.det(A), jnp.linalg.slogdet(A), jnp.take_along_axis(B, jnp.argsort(B, axis=1), axis=1), jnp.clip(A, -0.5, 0.5),
         jnp.where(A > 0, A, 0), jnp.tril(A), jnp.triu(A, 1), jnp.outer(A[0], B[0]), jnp.kron(A[:2, :2], jnp.eye(2)), jnp.diag(A), jnp.trace(A),
         jnp.meshgrid(jnp.arange(2), jnp.arange(3)), jnp.stack([A, A], -1).shape, jnp.concatenate([A, B], 1).shape, jnp.pad(A, 1), jnp.pad(A, ((0, 1), (2, 0)), mode='edge'),
         jnp.roll(A, 1, 0), jnp.flip(A), jnp.argsort(A[0]), jnp.sort(A, axis=0), jnp.unique(jnp.array([3, 1, 3, 2])), jnp.cumsum(A, axis=1),
         jnp.linalg.eigh(A + A.T)[0], jnp.linalg.svd(A, compute_uv=False), jnp.linalg.qr(A)[1].shape, jnp.linalg.cholesky(A @ A.T + jnp.eye(3)),
         jnp.histogram(B.ravel(), bins=3)[0].astype(jnp.int64), jnp.percentile(B, 30.), jnp.median(B, axis=1), jnp.var(B, ddof=1), jnp.std(B, axis=0),
         jnp.allclose(A, A), jnp.array_equal(A, A), jnp.searchsorted(jnp.arange(5.), 2.5).astype(jnp.int64), jnp.interp(1.5, jnp.arange(3.), jnp.array([0., 10., 20.])),
         jnp.convolve(jnp.arange(4.), jnp.ones(2)), jnp.polyval(jnp.array([1., 2., 3.]), 2.), jnp.linalg.matrix_power(A, 3), jnp.linalg.pinv(B),
         jnp.logaddexp(1., 2.), jnp.round(2.5), jnp.round(3.14159, 2), jnp.sign(jnp.array([-2., 0., 3.])), jnp.expand_dims(A, (0, 2)).shape, jnp.squeeze(jnp.ones((1, 3, 1))).shape,
         jnp.split(jnp.arange(6), 3), jnp.array_split(jnp.arange(7), 3), jnp.repeat(jnp.arange(3), 2), jnp.tile(jnp.arange(2), (2, 2)), jnp.moveaxis(jnp.ones((2, 3, 4)), 0, -1).shape,
         jnp.swapaxes(B, 0, 1).shape, jnp.matmul(A, B), A @ B, jnp.vdot(A, A), jnp.tensordot(A, B, axes=1), jnp.isclose(1., 1. + 1e-10), jnp.ravel(A).shape]
    return r


def p_lax_ops(jax, jnp, lax, **k):
    x = jnp.arange(6.).reshape(2, 3)
    r = [lax.add(1., 2.), lax.dot(x, x.T), lax.dot_general(x, x, (((1,), (1,)), ((), ()))), lax.broadcast(jnp.ones(2), (3,)), lax.reshape(x, (3, 2)),
         lax.transpose(x, (1, 0)), lax.slice(x, (0, 1), (2, 3)), lax.pad(x, 0., [(1, 0, 0), (0, 1, 1)]), lax.concatenate([x, x], 0), lax.select(x > 2, x, -x),
         lax.clamp(1., x, 3.), lax.rsqrt(x + 1), lax.integer_pow(x, 3), lax.convert_element_type(x, jnp.int32), lax.rev(x, (1,)), lax.expand_dims(x, (0,)).shape,
         lax.squeeze(jnp.ones((1, 2)), (0,)), lax.sort(jnp.array([3., 1., 2.])), lax.top_k(jnp.array([1., 5., 3., 4.]), 2), lax.argmax(x, 1, jnp.int32),
         lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 1), 'VALID'), lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((2, 1, 3, 3)), (1, 1), 'SAME'),
         lax.conv_general_dilated(jnp.ones((1, 5, 5, 1)), jnp.ones((3, 3, 1, 2)), (1, 1), 'VALID', dimension_numbers=('NHWC', 'HWIO', 'NHWC')).shape,
         lax.iota(jnp.int32, 4), lax.erf(0.5), lax.lgamma(3.5), lax.logistic(0.3), lax.square(3.), lax.stop_gradient(x), lax.full((2,), 3.),
         lax.sub(x, 1.0), lax.max(x, 2.), lax.rem(7., 3.), lax.sign(-2.), lax.cos(1.), lax.batch_matmul(jnp.ones((2, 2, 3)), jnp.ones((2, 3, 1))),
         lax.dynamic_update_index_in_dim(x, jnp.ones(3), 1, 0), lax.index_in_dim(x, 1, 0, keepdims=False), lax.slice_in_dim(x, 1, 3, axis=1),
         lax.broadcast_in_dim(jnp.ones(3), (2, 3), (1,)), lax.collapse(jnp.ones((2, 3, 4)), 0, 2).shape]
    r.append(jax.grad(lambda x: jnp.sum(lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), 'SAME') ** 2))(x))
    return r


def p_mlp_training(jax, jnp, jsp, random, **k):

    logsumexp = jsp.special.logsumexp
    def random_layer_params(m, n, key, scale=1e-2):
        w_key, b_key = random.split(key)
        return scale * random.normal(w_key, (n, m)), scale * random.normal(b_key, (n,))
    def init_network_params(sizes, key):
        keys = random.split(key, len(sizes))
        return [random_layer_params(m, n, k) for m, n, k in zip(sizes[:-1], sizes[1:], keys)]
    layer_sizes = [8, 16, 16, 3]
    step_size = 0.5
    params = init_network_params(layer_sizes, random.key(0))
    def relu(x): return jnp.maximum(0, x)
    def predict(params, image):
        activations = image
        for w, b in params[:-1]:
            activations = relu(jnp.dot(w, activations) + b)
        final_w, final_b = params[-1]
        logits = jnp.dot(final_w, activations) + final_b
        return logits - logsumexp(logits)
    batched_predict = jax.vmap(predict, in_axes=(None, 0))
    def one_hot(x, k, dtype=jnp.float32): return jnp.array(x[:, None] == jnp.arange(k), dtype)
    def accuracy(params, images, targets):
        target_class = jnp.argmax(targets, axis=1)
        predicted_class = jnp.argmax(batched_predict(params, images), axis=1)
        return jnp.mean((predicted_class == target_class).astype(jnp.float64))
    def loss(params, images, targets):
        preds = batched_predict(params, images)
        return -jnp.mean(preds * targets)
    @jax.jit
    def update(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]
    rs = np.random.RandomState(0)
    x = jax.device_put(rs.randn(64, 8)); labels = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5).astype(int)
    y = one_hot(labels, 3, jnp.float64)
    for epoch in range(30):
        for i in range(0, 64, 16):
            params = update(params, x[i:i + 16], y[i:i + 16])
    return params, accuracy(params, x, y), loss(params, x, y), one_hot(jnp.array([0, 2]), 3).dtype.name


def p_integer_overflow(jax, jnp, **k):
    return (jnp.array(2**31 - 1, jnp.int32) + jnp.array(1, jnp.int32), jnp.array([200], jnp.uint8) * jnp.array([2], jnp.uint8),
            jnp.arange(3, dtype=jnp.int8) * 100, jnp.cumsum(jnp.array([127, 1], jnp.int8), dtype=jnp.int8), jnp.int32(2) ** 31)


def p_weak_types(jax, jnp, **k):
    x32 = jnp.ones(3, jnp.float32)
    r = [(x32 + 1).dtype.name, (x32 * 2.0).dtype.name, (jnp.ones(3, jnp.int32) * 2).dtype.name, (jnp.ones(3, jnp.int32) * 2.0).dtype.name,
         (jnp.ones(3, jnp.float16) + 3).dtype.name, jax.jit(lambda x: x * 2.0)(x32).dtype.name, jax.grad(lambda x: jnp.sum(x * 2.0))(x32).dtype.name,
         jax.vmap(lambda x: x + 1.0)(x32).dtype.name, jnp.where(x32 > 0, x32, 0.0).dtype.name, jnp.maximum(x32, 0.).dtype.name,
         jnp.clip(x32, 0., 1.).dtype.name, (x32 @ x32).dtype.name, jnp.mean(x32).dtype.name, jnp.sum(jnp.ones(2, jnp.int32)).dtype.name,
         (jnp.ones(3, jnp.complex64) * 2.0).dtype.name, (jnp.ones(2, jnp.bfloat16 if False else jnp.float16) * 1.0).dtype.name,
         jax.grad(lambda x: (x ** 2).sum())(jnp.ones(2, jnp.float32)).dtype.name,
         jax.value_and_grad(lambda x: jnp.sum(jnp.sin(x)))(jnp.ones(2, jnp.float32))[0].dtype.name,
         jax.jacrev(lambda x: jnp.sin(x))(jnp.ones(2, jnp.float32)).dtype.name, jax.hessian(lambda x: jnp.sum(x ** 3))(jnp.ones(2, jnp.float32)).dtype.name,
         jax.lax.scan(lambda c, x: (c + x, c), jnp.float32(0), jnp.ones(3, jnp.float32))[0].dtype.name,
         jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, jnp.ones(2, jnp.float32)).dtype.name]
    return r


def p_nn_training(jax, jnp, random, **k):
    # an MLP with jax.nn and jax.nn.initializers, trained with a jitted SGD step
    def predict(params, x):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        return jax.nn.log_softmax(x @ w + b)
    def loss(params, x, y):
        return -jnp.mean(jnp.sum(predict(params, x) * jax.nn.one_hot(y, 3), axis=-1))
    @jax.jit
    def update(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    keys = random.split(random.PRNGKey(0), 2)
    init = jax.nn.initializers.glorot_normal()
    params = [(init(keys[0], (4, 8)), jnp.zeros(8)), (init(keys[1], (8, 3)), jnp.zeros(3))]
    x = jax.device_put(np.random.RandomState(0).normal(size=(32, 4)))
    y = (x[:, 0] > 0).astype(jnp.int32) + (x[:, 1] > 0).astype(jnp.int32)
    for _ in range(20):
        params = update(params, x, y)
    return params, loss(params, x, y)


# ---- second round: the sharp bits' random keys and promotion, NaN debugging, physics, attention,
# linear algebra gradients, meta-learning, MCMC, flows, implicit differentiation, pytrees,
# collectives, jit's static arguments, recurrent nets, complex numbers, graphs, FFT

def p_random_keys(jax, jnp, random, **k):
    key = random.PRNGKey(0)
    k1, k2 = random.split(key)
    ks = random.split(key, 4)
    tk = random.key(1)
    r = [key, k1, k2, ks, random.key_data(tk), random.key_data(random.split(tk, (2, 3))).shape, random.fold_in(key, 7),
         random.key_data(random.fold_in(tk, 3)), random.bits(k1, (3,), jnp.uint32), random.bits(k1, (2,), jnp.uint8)]
    r += [random.normal(k1, (3,)), random.uniform(k2, (2, 2), minval=-1., maxval=3.), random.randint(k1, (5,), 0, 10),
          random.bernoulli(k2, 0.3, (6,)), random.categorical(k1, jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(8,)),
          random.permutation(k2, 6), random.permutation(k2, jnp.arange(10.).reshape(5, 2)), random.choice(k1, 5, (3,), replace=False),
          random.choice(k1, jnp.arange(10.), (4,), p=jnp.linspace(0.1, 1., 10) / jnp.sum(jnp.linspace(0.1, 1., 10))),
          random.gumbel(k2, (3,)), random.truncated_normal(k1, -1., 1., (4,)), random.exponential(k2, (3,)),
          random.laplace(k1, (2,)), random.logistic(k2, (2,)), random.cauchy(k1, (2,)),
          random.multivariate_normal(k2, jnp.zeros(2), jnp.array([[2., 0.5], [0.5, 1.]]), (3,)),
          random.normal(k1, (2,), dtype=jnp.float32), random.uniform(k1, (), dtype=jnp.float32), random.rademacher(k2, (5,)),
          random.randint(k2, (4,), -3, 3, dtype=jnp.int8)]
    # the sharp bit: reusing a key gives the same numbers, split keys give new ones
    r += [random.normal(key) == random.normal(key), random.normal(k1) == random.normal(k2)]
    return r


def p_random_derived(jax, jnp, random, **k):
    key = random.PRNGKey(42)
    ks = random.split(key, 8)
    return [random.gamma(ks[0], 2.5, (4,)), random.beta(ks[1], 2., 3., (3,)), random.dirichlet(ks[2], jnp.array([1., 2., 3.])),
            random.poisson(ks[3], 3.0, (5,)), random.t(ks[4], 5., (3,)), random.chisquare(ks[5], 3., (2,)),
            random.lognormal(ks[6], 0.5, (2,)), random.ball(ks[7], 3), random.orthogonal(ks[0], 3),
            jax.grad(lambda a: jnp.sum(random.gamma(ks[1], a, (3,))))(2.0),
            jax.vmap(lambda k: random.normal(k, (2,)))(ks[:3]), jax.jit(lambda k: random.uniform(k, (3,)))(ks[4])]


def p_dtype_promotion(jax, jnp, **k):
    # (funcgrad's promotion is NumPy's: the pairs where JAX's lattice differs, such as int32 with
    # float32 or int16 with float16, are left out; docs/porting.md)
    dts = [jnp.bool_, jnp.uint8, jnp.int8, jnp.int16, jnp.uint32, jnp.int64, jnp.float64, jnp.complex128]
    table = [[jnp.promote_types(a, b).name for b in dts] for a in dts]
    small = [jnp.bool_, jnp.uint8, jnp.int8, jnp.float16, jnp.float32, jnp.complex64]
    table2 = [[jnp.promote_types(a, b).name for b in small] for a in small]
    r = [table, table2]
    r += [jnp.result_type(jnp.int8, 1.0).name, jnp.result_type(jnp.float16, 1).name, jnp.result_type(jnp.uint8, 300).name if False else 'skip',
          (jnp.array([1], jnp.uint8) + 3).dtype.name, (jnp.array([1], jnp.int8) + jnp.array([1], jnp.uint8)).dtype.name,
          (jnp.array(True) + 1).dtype.name,
          jnp.array(1).dtype.name, jnp.array(1.).dtype.name, jnp.array(1j).dtype.name, jnp.arange(3).dtype.name, jnp.zeros(2).dtype.name,
          jnp.array([1, 2], dtype=jnp.float32).astype(jnp.int8).dtype.name, (jnp.float32(1) + 2.0).dtype.name,
          jnp.iinfo(jnp.int8).max, jnp.finfo(jnp.float32).eps, jnp.finfo(jnp.float16).max, jnp.issubdtype(jnp.float32, jnp.floating),
          jnp.issubdtype(jnp.int8, jnp.integer), jnp.can_cast(jnp.int64, jnp.float32), jnp.true_divide(jnp.array([3]), 2).dtype.name,
          (jnp.array([3]) // 2).dtype.name,
         
          (jnp.array([1, 2], jnp.int16) * 1.5).dtype.name]
    return r


def p_nan_where_trick(jax, jnp, **k):
    # the "double where" sharp bit: the unselected branch's NaN gradient leaks through where
    def f_good(x):
        safe = jnp.where(x > 0, x, 1.)
        return jnp.where(x > 0, jnp.sqrt(safe), 0.)
    xs = jnp.array([0., 1., -1.])
    norm_good = jax.grad(lambda v: jnp.sqrt(jnp.maximum(jnp.sum(v ** 2), 1e-12)))(jnp.zeros(2))
    return (jax.vmap(jax.grad(f_good))(xs), norm_good,
            jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf, -jnp.inf, 1.])), jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf]), nan=-1., posinf=9.),
            jnp.isnan(jnp.array([0.]) / 0.), jnp.nanmean(jnp.array([1., jnp.nan, 3.])), jnp.nansum(jnp.array([[1., jnp.nan], [2., 3.]]), axis=0),
            jax.grad(lambda x: jnp.nansum(x * jnp.array([1., jnp.nan])))(jnp.ones(2)), jnp.nanmax(jnp.array([jnp.nan, 2.])),
            jax.grad(lambda x: jnp.log(x))(0.), jax.grad(lambda x: x ** 0.5)(0.),
            jax.grad(lambda x: jnp.maximum(x, 0.))(0.), jax.grad(lambda x: jnp.minimum(x, 0.))(0.), jax.grad(jnp.sign)(0.),
            jax.grad(lambda x: jnp.clip(x, 0., 1.))(0.5), jax.grad(lambda x: jnp.clip(x, 0., 1.))(2.),
            jax.grad(lambda x: x ** 2.)(0.), jax.grad(lambda x: jnp.sqrt(x) * 0.)(0.), jax.grad(lambda x: jnp.arctan2(x, 0.))(0.),
            jax.grad(lambda x: jnp.max(jnp.array([x, x, 1.])))(2.), jax.grad(lambda x: jnp.sort(jnp.array([x, 2. * x]))[1])(1.))


def p_lennard_jones(jax, jnp, **k):
    R = jnp.array([[0., 0., 0.], [1.1, 0., 0.], [0., 1.2, 0.], [0.9, 0.8, 0.3], [0.2, 0.1, 1.05]])
    box = 3.0
    def displacement(Ra, Rb):
        d = Ra - Rb
        return d - box * jnp.round(d / box)
    def energy(R, sigma=1.0, epsilon=1.0):
        dR = jax.vmap(jax.vmap(displacement, (None, 0)), (0, None))(R, R)
        n = R.shape[0]
        mask = ~jnp.eye(n, dtype=bool)
        dr2 = jnp.where(mask, jnp.sum(dR ** 2, axis=-1), 1.0)
        inv6 = (sigma ** 2 / dr2) ** 3
        e = 4 * epsilon * (inv6 ** 2 - inv6)
        return 0.5 * jnp.sum(jnp.where(mask, e, 0.))
    force = lambda R: -jax.grad(energy)(R)
    def fire_like(R, steps=20, dt=1e-3):
        def step(i, s):
            R, V = s
            F = force(R)
            V = V + dt * F
            return R + dt * V, V
        return jax.lax.fori_loop(0, steps, step, (R, jnp.zeros_like(R)))
    Rf, Vf = fire_like(R)
    return (energy(R), force(R), jax.jit(force)(R), jnp.sum(force(R), axis=0), jax.grad(energy, argnums=1)(R, 1.0, 1.0),
            energy(Rf), Vf, jax.hessian(energy)(R[:2]).shape, jax.hessian(energy)(R[:3])[0, 0], jax.jacfwd(force)(R)[1, 0])


def p_attention_masked(jax, jnp, random, **k):
    ks = random.split(random.PRNGKey(3), 5)
    B, T, D, H = 2, 4, 8, 2
    x = random.normal(ks[0], (B, T, D))
    params = {n: random.normal(kk, (D, D)) / jnp.sqrt(D) for n, kk in zip(['q', 'k', 'v', 'o'], ks[1:])}
    def mha(params, x, mask):
        q = (x @ params['q']).reshape(B, T, H, D // H)
        kk = (x @ params['k']).reshape(B, T, H, D // H)
        v = (x @ params['v']).reshape(B, T, H, D // H)
        logits = jnp.einsum('bthd,bshd->bhts', q, kk) / jnp.sqrt(D // H)
        logits = jnp.where(mask, logits, -1e30)
        w = jax.nn.softmax(logits, axis=-1)
        out = jnp.einsum('bhts,bshd->bthd', w, v).reshape(B, T, D)
        return out @ params['o'], w
    causal = jnp.tril(jnp.ones((T, T), dtype=bool))[None, None]
    pad = (jnp.arange(T)[None, :] < jnp.array([4, 2])[:, None])[:, None, None, :]
    out, w = mha(params, x, causal & pad)
    loss = lambda p: jnp.sum(mha(p, x, causal & pad)[0] ** 2)
    g = jax.grad(loss)(params)
    gj = jax.jit(jax.grad(loss))(params)
    gx = jax.grad(lambda x: jnp.sum(mha(params, x, causal)[0]))(x)
    ref = jax.nn.dot_product_attention(x.reshape(B, T, H, D // H), x.reshape(B, T, H, D // H), x.reshape(B, T, H, D // H), is_causal=True)
    return out, w, g, gj, gx, ref.astype(jnp.float32)  # JAX's own is float32-accurate

def p_linalg_grads(jax, jnp, jsp, **k):
    rs = np.random.RandomState(11)
    A = jax.device_put(rs.randn(4, 4)); S = A @ A.T + 4 * jnp.eye(4); B = jax.device_put(rs.randn(5, 3)); y = jax.device_put(rs.randn(5))
    r = []
    r.append(jax.grad(lambda A: jnp.linalg.slogdet(A)[1])(A))
    r.append(jax.grad(lambda A: jnp.linalg.det(A))(A))
    r.append(jax.grad(lambda S: jnp.sum(jnp.linalg.eigh(S)[0] ** 2))(S))
    r.append(jax.grad(lambda S: jnp.sum(jnp.abs(jnp.linalg.eigh(S)[1][:, -1]) * jnp.arange(4.)))(S))
    r.append(jax.grad(lambda S: jnp.linalg.eigvalsh(S)[0])(S))
    r.append(jax.grad(lambda B: jnp.sum(jnp.linalg.svd(B, compute_uv=False)))(B))
    r.append(jax.grad(lambda B: jnp.linalg.norm(B, 2))(B))
    r.append(jax.grad(lambda B: jnp.linalg.norm(B, 'nuc'))(B))
    r.append(jax.grad(lambda B: jnp.sum(jnp.abs(jnp.linalg.qr(B)[1])))(B))
    r.append(jax.grad(lambda B: jnp.sum(jnp.linalg.qr(B)[0] ** 3))(B))
    r.append(jax.grad(lambda y: jnp.sum(jnp.linalg.lstsq(B, y)[0] ** 2))(y))
    r.append(jax.grad(lambda B: jnp.sum(jnp.linalg.lstsq(B, y)[0]))(B))
    r.append((jnp.linalg.lstsq(B, y)[1], int(jnp.linalg.lstsq(B, y)[2])))
    r.append(jax.grad(lambda A: jnp.sum(jnp.linalg.inv(A)))(A))
    r.append(jax.jacfwd(lambda A: jnp.linalg.solve(A, y[:4]))(A))
    r.append(jax.grad(lambda S: jnp.sum(jnp.linalg.cholesky(S)))(S))
    r.append(jax.grad(lambda A: jnp.sum(jsp.linalg.expm(0.3 * A)))(A))
    r.append(jax.grad(lambda B: jnp.sum(jnp.linalg.pinv(B)))(B))
    r.append(jax.grad(lambda A: jnp.sum(jnp.linalg.matrix_power(A, 3)))(A))
    r.append(jax.grad(lambda S: jnp.trace(jsp.linalg.solve(S, A)))(S))
    r.append(jax.hessian(lambda x: jnp.linalg.slogdet(S + jnp.diag(x))[1])(jnp.ones(4)))
    r.append(jax.vmap(jnp.linalg.slogdet)(jnp.stack([A, S])))
    r.append(jax.grad(lambda S: jsp.linalg.eigh(S, eigvals_only=True)[-1])(S))
    lu, piv = jsp.linalg.lu_factor(A)
    r.append(jsp.linalg.lu_solve((lu, piv), y[:4]))
    r.append(jax.grad(lambda A: jnp.sum(jsp.linalg.lu_solve(jsp.linalg.lu_factor(A), y[:4])))(A))
    return r


def p_einsum_heavy(jax, jnp, **k):
    rs = np.random.RandomState(2)
    a = jax.device_put(rs.randn(2, 3, 4)); b = jax.device_put(rs.randn(2, 4, 5)); c = jax.device_put(rs.randn(5, 3))
    M = jax.device_put(rs.randn(3, 3)); v = jax.device_put(rs.randn(3)); w = jax.device_put(rs.randn(4))
    r = [jnp.einsum('bij,bjk->bik', a, b), jnp.einsum('bij,bjk,kl->bil', a, b, c), jnp.einsum('ii->i', M), jnp.einsum('ii->', M),
         jnp.einsum('i,j->ij', v, w), jnp.einsum('...ij,...jk->...ik', a, b), jnp.einsum('bij->jbi', a), jnp.einsum('i,ij,j', v, M, v),
         jnp.einsum('bij,j->bi', a, w), jnp.einsum(a, [0, 1, 2], w, [2], [0, 1]), jnp.einsum('ijk,ijk->', a, a),
         jnp.einsum('bij,bkj->bik', a, a), jnp.einsum('ij,ij->i', M, M), jnp.einsum('b i j, b j k -> b i k', a, b) if False else jnp.zeros(1),
         jnp.einsum('bij,bjk,kl->bil', a, b, c, optimize='greedy'), jnp.einsum('ij,jk', M, M, precision='highest'),
         jnp.einsum('...i,...i->...', a, a), jnp.einsum('i...->...i', a)]
    f = lambda a, b, c: jnp.sum(jnp.einsum('bij,bjk,kl->bil', a, b, c) ** 2)
    r.append(jax.grad(f, (0, 1, 2))(a, b, c))
    r.append(jax.grad(lambda M: jnp.einsum('i,ij,j', v, M, v) + jnp.einsum('ii', M @ M))(M))
    r.append(jax.vmap(lambda x, y: jnp.einsum('ij,jk->ik', x, y))(a, b))
    r.append(jax.jacfwd(lambda v: jnp.einsum('i,ij,j->', v, M, v))(v))
    r.append(jax.jit(partial(jnp.einsum, 'bij,bjk->bik'))(a, b))
    r.append(jnp.einsum('ij,j->i', jnp.ones((2, 3), jnp.int32), jnp.arange(3, dtype=jnp.int32)))
    return r


def p_maml(jax, jnp, random, **k):
    def net(params, x):
        h = jnp.tanh(x @ params['w1'] + params['b1'])
        return h @ params['w2'] + params['b2']
    def loss(params, x, y): return jnp.mean((net(params, x) - y) ** 2)
    alpha = 0.1
    def inner_update(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - alpha * g, params, grads)
    def maml_loss(params, x1, y1, x2, y2):
        return loss(inner_update(params, x1, y1), x2, y2)
    def batch_maml_loss(params, X1, Y1, X2, Y2):
        return jnp.mean(jax.vmap(partial(maml_loss, params))(X1, Y1, X2, Y2))
    ks = random.split(random.PRNGKey(0), 6)
    params = {'w1': random.normal(ks[0], (1, 16)) * 0.5, 'b1': jnp.zeros(16), 'w2': random.normal(ks[1], (16, 1)) * 0.5, 'b2': jnp.zeros(1)}
    amps = random.uniform(ks[2], (4, 1, 1), minval=0.1, maxval=5.0); phases = random.uniform(ks[3], (4, 1, 1), maxval=jnp.pi)
    X1 = random.uniform(ks[4], (4, 10, 1), minval=-5, maxval=5); X2 = random.uniform(ks[5], (4, 10, 1), minval=-5, maxval=5)
    Y1 = amps * jnp.sin(X1 + phases); Y2 = amps * jnp.sin(X2 + phases)
    @jax.jit
    def step(params):
        l, g = jax.value_and_grad(batch_maml_loss)(params, X1, Y1, X2, Y2)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, g), l
    ls = []
    for _ in range(5):
        params, l = step(params)
        ls.append(l)
    first_order = jax.grad(lambda p: loss(jax.lax.stop_gradient(inner_update(p, X1[0], Y1[0])), X2[0], Y2[0]))(params)
    return params, ls, first_order


def p_hmc(jax, jnp, lax, random, **k):
    mu = jnp.array([1.0, -1.0]); cov = jnp.array([[1.0, 0.8], [0.8, 1.0]]); prec = jnp.linalg.inv(cov)
    def log_prob(x):
        d = x - mu
        return -0.5 * d @ prec @ d
    def leapfrog(q, p, step_size, n_steps):
        p = p + 0.5 * step_size * jax.grad(log_prob)(q)
        def body(i, qp):
            q, p = qp
            q = q + step_size * p
            p = p + step_size * jax.grad(log_prob)(q)
            return q, p
        q, p = lax.fori_loop(0, n_steps - 1, body, (q, p))
        q = q + step_size * p
        p = p + 0.5 * step_size * jax.grad(log_prob)(q)
        return q, p
    def hmc_step(q, key):
        k1, k2 = random.split(key)
        p0 = random.normal(k1, q.shape)
        q1, p1 = leapfrog(q, p0, 0.2, 10)
        h0 = -log_prob(q) + 0.5 * p0 @ p0
        h1 = -log_prob(q1) + 0.5 * p1 @ p1
        accept = jnp.log(random.uniform(k2)) < h0 - h1
        return jnp.where(accept, q1, q), (jnp.where(accept, q1, q), accept)
    keys = random.split(random.PRNGKey(1), 50)
    _, (samples, accepts) = lax.scan(hmc_step, jnp.zeros(2), keys)
    chains = jax.vmap(lambda k: lax.scan(hmc_step, jnp.zeros(2), random.split(k, 10))[0])(random.split(random.PRNGKey(2), 3))
    return samples[-5:], jnp.mean(accepts.astype(jnp.float64)), jnp.mean(samples, axis=0), chains, jax.jit(leapfrog, static_argnums=3)(jnp.zeros(2), jnp.ones(2), 0.1, 5)


def p_realnvp_flow(jax, jnp, random, **k):
    D = 4
    mask = jnp.array([1., 1., 0., 0.])
    def mlp(params, x):
        h = jnp.tanh(x @ params['w1'] + params['b1'])
        return h @ params['ws'], h @ params['wt']
    def coupling_forward(params, x, mask):
        xm = x * mask
        s, t = mlp(params, xm)
        s = jnp.tanh(s) * (1 - mask); t = t * (1 - mask)
        y = xm + (1 - mask) * (x * jnp.exp(s) + t)
        return y, jnp.sum(s, axis=-1)
    def coupling_inverse(params, y, mask):
        ym = y * mask
        s, t = mlp(params, ym)
        s = jnp.tanh(s) * (1 - mask); t = t * (1 - mask)
        return ym + (1 - mask) * (y - t) * jnp.exp(-s)
    def flow_forward(all_params, x):
        logdet = jnp.zeros(x.shape[0])
        for i, p in enumerate(all_params):
            m = mask if i % 2 == 0 else 1 - mask
            x, ld = coupling_forward(p, x, m)
            logdet = logdet + ld
        return x, logdet
    def flow_inverse(all_params, y):
        for i, p in reversed(list(enumerate(all_params))):
            m = mask if i % 2 == 0 else 1 - mask
            y = coupling_inverse(p, y, m)
        return y
    def nll(all_params, x):
        z, logdet = flow_forward(all_params, x)
        logp = -0.5 * jnp.sum(z ** 2, -1) - 0.5 * D * jnp.log(2 * jnp.pi)
        return -jnp.mean(logp + logdet)
    keys = random.split(random.PRNGKey(0), 12)
    all_params = [{'w1': random.normal(keys[3 * i], (D, 8)) * 0.3, 'b1': jnp.zeros(8), 'ws': random.normal(keys[3 * i + 1], (8, D)) * 0.3,
                   'wt': random.normal(keys[3 * i + 2], (8, D)) * 0.3} for i in range(4)]
    x = random.normal(random.PRNGKey(5), (16, D)) * jnp.array([1., 2., 0.5, 1.]) + 1.
    z, ld = flow_forward(all_params, x)
    x_rec = flow_inverse(all_params, z)
    # the log-determinant agrees with the Jacobian computed by autodiff
    J = jax.vmap(jax.jacfwd(lambda x: flow_forward(all_params, x[None])[0][0]))(x[:3])
    ld_ad = jnp.linalg.slogdet(J)[1]
    update = jax.jit(lambda p, x: jax.tree_util.tree_map(lambda a, g: a - 0.05 * g, p, jax.grad(nll)(p, x)))
    p = all_params
    for _ in range(10):
        p = update(p, x)
    return z, ld, jnp.max(jnp.abs(x_rec - x)) < 1e-10, ld_ad, nll(all_params, x), nll(p, x)


def p_planar_flow_vi(jax, jnp, random, **k):
    def log_target(z):  # a banana
        return -0.5 * (z[..., 0] ** 2 / 4 + (z[..., 1] - 0.25 * z[..., 0] ** 2) ** 2)
    def planar(params, z):
        u, w, b = params['u'], params['w'], params['b']
        wu = w @ u
        u_hat = u + (jax.nn.softplus(wu) - 1 - wu) * w / jnp.sum(w ** 2)
        a = jnp.tanh(z @ w + b)
        psi = (1 - a ** 2)[..., None] * w
        return z + u_hat * a[..., None], jnp.log(jnp.abs(1 + psi @ u_hat))
    def elbo(params, eps):
        z = eps; ld = 0.
        for p in params:
            z, l = planar(p, z)
            ld = ld + l
        logq = -0.5 * jnp.sum(eps ** 2, -1) - jnp.log(2 * jnp.pi) - ld
        return jnp.mean(log_target(z) - logq)
    ks = random.split(random.PRNGKey(7), 6)
    params = [{'u': random.normal(ks[i], (2,)) * 0.1, 'w': random.normal(ks[i + 3], (2,)) * 0.1, 'b': jnp.array(0.)} for i in range(3)]
    eps = random.normal(random.PRNGKey(8), (64, 2))
    g = jax.grad(elbo)(params, eps)
    for i in range(20):
        params = jax.tree_util.tree_map(lambda p, g: p + 0.05 * g, params, jax.grad(elbo)(params, random.normal(random.fold_in(ks[0], i), (64, 2))))
    return g, elbo(params, eps)


def p_hvp_four_ways(jax, jnp, **k):
    def f(p):
        return jnp.sum(jnp.tanh(p['w'] @ p['x']) ** 2) + jnp.sum(p['x'] ** 4) * jnp.sum(jnp.sin(p['w']))
    rs = np.random.RandomState(4)
    p = {'w': jax.device_put(rs.randn(3, 2)), 'x': jax.device_put(rs.randn(2))}
    v = {'w': jax.device_put(rs.randn(3, 2)), 'x': jax.device_put(rs.randn(2))}
    def hvp_fwd_rev(f, x, v): return jax.jvp(jax.grad(f), (x,), (v,))[1]
    def hvp_rev_fwd(f, x, v): return jax.grad(lambda x: jax.jvp(f, (x,), (v,))[1])(x)
    def hvp_rev_rev(f, x, v): return jax.grad(lambda x: jax.tree_util.tree_reduce(lambda a, b: a + b, jax.tree_util.tree_map(jnp.vdot, jax.grad(f)(x), v)))(x)
    def hvp_fwd_fwd(f, x, v):
        from_flat = lambda flat: {'w': flat[:6].reshape(3, 2), 'x': flat[6:]}
        flat = lambda t: jnp.concatenate([t['w'].ravel(), t['x']])
        H = jax.jacfwd(jax.jacfwd(lambda z: f(from_flat(z))))(flat(x))
        return from_flat(H @ flat(v))
    batched = jax.vmap(hvp_fwd_rev, in_axes=(None, None, 0))(f, p, jax.tree_util.tree_map(lambda a: jnp.stack([a, 2 * a]), v)) if False else \
        jax.vmap(lambda v: hvp_fwd_rev(f, p, v))(jax.tree_util.tree_map(lambda a: jnp.stack([a, 2 * a]), v))
    return (hvp_fwd_rev(f, p, v), hvp_rev_fwd(f, p, v), hvp_rev_rev(f, p, v), hvp_fwd_fwd(f, p, v), batched,
            jax.jit(partial(hvp_fwd_rev, f))(p, v))


def p_implicit_ridge(jax, jnp, lax, **k):
    rs = np.random.RandomState(9)
    X = jax.device_put(rs.randn(20, 3)); y = jax.device_put(rs.randn(20))
    def ridge_closed(lam):
        return jnp.linalg.solve(X.T @ X + lam * jnp.eye(3), X.T @ y)
    def ridge_gd(lam):
        grad_obj = lambda w, lam: X.T @ (X @ w - y) + lam * w
        def solve(f, w0):
            return lax.fori_loop(0, 500, lambda i, w: w - 0.01 * f(w), w0)
        def tangent_solve(g, r):
            return jnp.linalg.solve(jax.jacobian(g)(r), r)
        return lax.custom_root(lambda w: grad_obj(w, lam), jnp.zeros(3), solve, tangent_solve)
    def newton_vec(a):
        F = lambda x: jnp.array([x[0] ** 2 + x[1] - a, x[0] - x[1] ** 3])
        def solve(F, x0):
            return lax.fori_loop(0, 30, lambda i, x: x - jnp.linalg.solve(jax.jacobian(F)(x), F(x)), x0)
        return lax.custom_root(F, jnp.array([1.0, 1.0]), solve, lambda g, r: jnp.linalg.solve(jax.jacobian(g)(r), r))
    return (ridge_closed(0.5), ridge_gd(0.5), jax.jacobian(ridge_closed)(0.5), jax.jacobian(ridge_gd)(0.5), newton_vec(3.0), jax.jacobian(newton_vec)(3.0),
            jax.jacrev(newton_vec)(3.0))

def p_pytree_advanced(jax, jnp, tu, **k):
    import dataclasses
    from typing import NamedTuple
    class Point(NamedTuple):
        x: object
        y: object
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        name: str = 'layer'
    tu.register_dataclass(Layer, data_fields=['w', 'b'], meta_fields=['name'])
    tree = {'pts': [Point(1., 2.), Point(3., 4.)], 'layer': Layer(jnp.ones(2), jnp.zeros(()), 'fc'), 'none': None, 't': (5,)}
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree)[0]]
    leaves_isleaf = tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, Point))
    n_isleaf = len(leaves_isleaf)
    mapped = tu.tree_map(lambda p: p.x + p.y if isinstance(p, Point) else p, tree['pts'], is_leaf=lambda x: isinstance(x, Point))
    outer = tu.tree_structure([0, 0]); inner = tu.tree_structure({'a': 0, 'b': 0})
    tr = tu.tree_transpose(outer, inner, [{'a': 1, 'b': 2}, {'a': 3, 'b': 4}])
    td = tu.tree_structure(tree)
    flat, unravel = jax.flatten_util.ravel_pytree({'a': jnp.ones((2, 2)), 'b': jnp.arange(3.)})
    un = unravel(flat * 2)
    class Tagged:
        def __init__(self, v, tag): self.v = v; self.tag = tag
    tu.register_pytree_with_keys(Tagged, lambda t: (((tu.GetAttrKey('v'), t.v),), t.tag), lambda tag, ch: Tagged(ch[0], tag))
    kp = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path([Tagged(jnp.ones(1), 'q')])[0]]
    wp = tu.tree_map_with_path(lambda p, x: len(p), tree)
    mp = jax.tree.map_with_path(lambda p, x: tu.keystr(p), {'a': [1, 2]})
    keys_kinds = [type(k).__name__ for k in tu.tree_flatten_with_path(tree)[0][3][0]]
    return (paths, n_isleaf, mapped, tr, td.num_leaves, td.num_nodes, flat, un, kp, wp, mp, keys_kinds,
            tu.tree_structure(Point(1, 2)) == tu.tree_structure(Point(3, 4)), tu.tree_leaves(tu.tree_unflatten(td, list(range(td.num_leaves)))),
            jax.grad(lambda t: t['layer'].w.sum() * t['pts'][1].y)({'layer': tree['layer'], 'pts': tree['pts']})['pts'][1].y, len(tu.tree_leaves([None, [None]])),
            tu.tree_map(lambda x, y: x * y, {'a': 2., 'b': None}, {'a': 3., 'b': None}), tu.all_leaves([1., jnp.ones(2)]),
            [str(k) for k in tu.tree_flatten_with_path(tree)[0][0][0]])


def p_vmap_collectives_nested(jax, jnp, lax, **k):
    x = jnp.arange(6.).reshape(2, 3)
    f = lambda v: v / lax.psum(v, ('i', 'j'))
    r = [jax.vmap(jax.vmap(f, axis_name='j'), axis_name='i')(x)]
    r.append(jax.vmap(jax.vmap(lambda v: lax.psum(v, 'i'), axis_name='j'), axis_name='i')(x))
    r.append(jax.vmap(jax.vmap(lambda v: lax.pmean(v, 'j'), axis_name='j'), axis_name='i')(x))
    r.append(jax.vmap(jax.vmap(lambda v: lax.axis_index('i') * 10 + lax.axis_index('j'), axis_name='j'), axis_name='i')(x))
    r.append(jax.vmap(lambda v: lax.pmin(v, 'i'), axis_name='i')(x))
    r.append(jax.vmap(lambda v: lax.all_gather(v, 'i', tiled=True), axis_name='i')(x))
    r.append(jax.vmap(lambda v: lax.all_gather(v, 'i', axis=1), axis_name='i')(x))
    r.append(jax.vmap(lambda v: lax.ppermute(v, 'i', perm=[(0, 1), (1, 0)]), axis_name='i')(x))
    r.append(jax.vmap(lambda v: lax.psum_scatter(v, 'i', tiled=True), axis_name='i')(jnp.arange(8.).reshape(2, 4)))
    r.append(jax.vmap(lambda v: lax.all_to_all(v, 'i', 0, 0), axis_name='i')(jnp.arange(4.).reshape(2, 2)))
    loss = lambda w, xs: jnp.sum(jax.vmap(lambda x: (w * x - lax.pmean(w * x, 'b')) ** 2, axis_name='b')(xs))
    r.append(jax.grad(loss)(1.5, jnp.arange(4.)))
    r.append(jax.vmap(lambda v: lax.psum(1, 'i'), axis_name='i')(x))
    r.append(jax.vmap(lambda d: {'s': lax.psum(d['a'], 'i'), 'm': d['b']}, in_axes=({'a': 0, 'b': None},), out_axes={'s': 0, 'm': None}, axis_name='i')(
        {'a': jnp.arange(3.), 'b': 7.}))
    return r


def p_jit_static_retrace(jax, jnp, **k):
    traces = []
    def f(x, n, mode='add'):
        traces.append((np.shape(x), n, mode))
        for _ in range(n):
            x = x + 1 if mode == 'add' else x * 2
        return x
    jf = jax.jit(f, static_argnums=1, static_argnames='mode')
    r = [jf(jnp.ones(2), 2), jf(jnp.ones(2), 2), jf(jnp.ones(3), 2), jf(jnp.ones(2), 3), jf(jnp.ones(2), 2, mode='mul'), jf(jnp.zeros(2), 2, mode='mul')]
    r.append(len(traces))
    g = jax.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    r.append(g(jnp.arange(3.), 1.0))
    h = jax.jit(lambda x, y: x @ y, donate_argnames='x')
    r.append(h(jnp.eye(2), jnp.ones(2)))
    @partial(jax.jit, static_argnames=('axis',))
    def norm_along(x, axis): return x / jnp.sum(x, axis=axis, keepdims=True)
    r += [norm_along(jnp.ones((2, 3)), axis=0), norm_along(jnp.ones((2, 3)), axis=1)]
    lowered = jax.jit(lambda x: jnp.sin(x) * 2).lower(jnp.ones(3))
    r.append(lowered.compile()(jnp.ones(3)))
    r.append([(s.shape, s.dtype.name) for s in jax.eval_shape(lambda x, y: (x @ y, jnp.sum(x)), jax.ShapeDtypeStruct((2, 3), jnp.float32), jax.ShapeDtypeStruct((3, 4), jnp.float32))])
    class Cfg:
        def __init__(self, s): self.s = s
        def __hash__(self): return hash(self.s)
        def __eq__(self, o): return isinstance(o, Cfg) and o.s == self.s
    cnt = []
    jg = jax.jit(lambda x, c: (cnt.append(1), x * c.s)[1], static_argnums=1)
    r += [jg(1.0, Cfg(2)), jg(2.0, Cfg(2)), jg(1.0, Cfg(3)), len(cnt)]
    r.append(jax.jit(lambda x: x.shape[0] * x)(jnp.ones(4)))
    return r



def p_lstm_scan(jax, jnp, lax, random, **k):
    H, D, T, B = 4, 3, 6, 2
    ks = random.split(random.PRNGKey(0), 4)
    params = {'Wx': random.normal(ks[0], (D, 4 * H)) * 0.3, 'Wh': random.normal(ks[1], (H, 4 * H)) * 0.3, 'b': jnp.zeros(4 * H),
              'Wo': random.normal(ks[2], (H, 1)) * 0.3}
    xs = random.normal(ks[3], (T, B, D))
    def cell(params, carry, x):
        h, c = carry
        z = x @ params['Wx'] + h @ params['Wh'] + params['b']
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f + 1.0) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    def run(params, xs, reverse=False):
        init = (jnp.zeros((B, H)), jnp.zeros((B, H)))
        (h, c), hs = lax.scan(partial(cell, params), init, xs, reverse=reverse)
        return hs
    def loss(params, xs):
        fwd = run(params, xs); bwd = run(params, xs, reverse=True)
        return jnp.mean((jnp.concatenate([fwd, bwd], -1)[..., :H] @ params['Wo']) ** 2) + jnp.mean(bwd ** 2)
    g = jax.grad(loss)(params, xs)
    gj = jax.jit(jax.grad(loss))(params, xs)
    gx = jax.grad(loss, 1)(params, xs)
    g_unroll = jax.grad(lambda p: jnp.sum(lax.scan(partial(cell, p), (jnp.zeros((B, H)), jnp.zeros((B, H))), xs, unroll=2)[1]))(params)
    per_ex = jax.vmap(jax.grad(loss), in_axes=(None, 1))(params, xs[:, :, None, :]) if False else jax.vmap(lambda x: jax.grad(lambda p: jnp.sum(run(p, jnp.repeat(x[:, None], B, 1))))(params)['Wh'], in_axes=1)(xs)
    return run(params, xs)[-1], loss(params, xs), g, gj, gx, g_unroll, per_ex


def p_complex_programs(jax, jnp, **k):
    z = jnp.array([1. + 2j, -0.5 + 0.3j, 2. - 1j])
    W = jnp.array([[1. + 1j, 0.5], [2j, -1. + 0.5j]])
    f_hol = lambda z: jnp.sum(jnp.exp(z) * z ** 2)
    r = [jax.grad(f_hol, holomorphic=True)(z), jax.jacfwd(lambda z: jnp.exp(z) * z, holomorphic=True)(z),
         jax.jacrev(lambda z: jnp.log(z) + z ** 3, holomorphic=True)(z), jax.grad(lambda z: jnp.sum(jnp.abs(z) ** 2))(z),
         jax.grad(lambda z: jnp.real(jnp.sum(z * jnp.conj(z) * 2)))(z), jax.grad(lambda W: jnp.abs(jnp.linalg.det(W)))(W),
         jax.grad(lambda W: jnp.real(jnp.trace(jnp.linalg.inv(W))))(W), jax.grad(lambda x: jnp.abs(jnp.fft.fft(x)).sum())(jnp.arange(4.)),
         jax.grad(lambda x: jnp.real(jnp.fft.ifft(jnp.fft.fft(x) * jnp.array([1., 0.5, 0., 0.5]))).sum())(jnp.arange(4.) ** 2),
         jax.vjp(lambda z: z ** 2, 1. + 1j)[1](1. + 0j), jax.jvp(lambda z: jnp.conj(z) * z, (1. + 1j,), (1j,)),
         jax.grad(lambda t: jnp.abs(jnp.exp(1j * t) * 2.))(0.3), jax.grad(lambda t: jnp.real(jnp.exp(1j * t)))(0.3),
         jax.grad(lambda x: jnp.angle(x + 1j))(0.5), jax.grad(lambda x: jnp.real(jnp.sqrt(x + 0j)))(-4.0) if False else jnp.zeros(1),
         jax.jacfwd(lambda x: jnp.fft.rfft(x))(jnp.arange(4.)), jax.jacrev(lambda x: jnp.abs(jnp.fft.rfft(x)))(jnp.arange(1., 5.)),
         jax.grad(lambda z: jnp.abs(z), holomorphic=False)(3. + 4j), jax.vmap(jax.grad(lambda z: jnp.sin(z), holomorphic=True))(z),
         jax.hessian(lambda x: jnp.abs(jnp.sum(jnp.exp(1j * x))) ** 2)(jnp.array([0.1, 0.5]))]
    return r


def p_segment_gnn(jax, jnp, **k):
    senders = jnp.array([0, 1, 2, 2, 3]); receivers = jnp.array([1, 2, 0, 3, 3])
    nodes = jnp.arange(8.).reshape(4, 2)
    W = jnp.array([[0.5, -0.3], [0.2, 0.8]])
    def gnn(W, nodes):
        msgs = jnp.tanh(nodes[senders] @ W)
        agg = jax.ops.segment_sum(msgs, receivers, num_segments=4)
        deg = jax.ops.segment_sum(jnp.ones_like(receivers, dtype=nodes.dtype), receivers, num_segments=4)
        mx = jax.ops.segment_max(msgs, receivers, num_segments=4)
        return nodes + agg / jnp.maximum(deg, 1.)[:, None] + jnp.where(jnp.isfinite(mx), mx, 0.)
    out = gnn(W, nodes)
    return (out, jax.grad(lambda W: jnp.sum(gnn(W, nodes) ** 2))(W), jax.grad(lambda n: jnp.sum(gnn(W, n) ** 2))(nodes),
            jax.jit(gnn)(W, nodes), jax.ops.segment_min(jnp.array([3., 1., 2., 5.]), jnp.array([0, 0, 1, 1]), num_segments=3),
            jax.ops.segment_prod(jnp.array([3., 1., 2., 5.]), jnp.array([0, 0, 1, 1]), num_segments=2),
            jax.ops.segment_sum(jnp.array([1., 2., 3.]), jnp.array([0, 5, 1]), num_segments=2),
            jax.grad(lambda x: jnp.sum(jax.ops.segment_max(x, jnp.array([0, 0, 1, 1]), num_segments=2)))(jnp.array([3., 3., 2., 5.])),
            jax.ops.segment_sum(jnp.ones(4), jnp.array([0, 0, 1, 2]), num_segments=3, indices_are_sorted=True),
            jax.vmap(lambda d: jax.ops.segment_sum(d, jnp.array([1, 0, 1]), num_segments=2))(jnp.ones((2, 3))))


def p_nn_functions(jax, jnp, **k):
    x = jnp.linspace(-3, 3, 7)
    nn = jax.nn
    r = [nn.relu(x), nn.relu6(x * 3), nn.sigmoid(x), nn.softplus(x), nn.soft_sign(x), nn.silu(x), nn.swish(x), nn.log_sigmoid(x),
         nn.leaky_relu(x, 0.1), nn.hard_tanh(x), nn.elu(x), nn.celu(x, 0.5), nn.selu(x), nn.gelu(x), nn.gelu(x, approximate=False),
         nn.glu(jnp.arange(8.).reshape(2, 4)), nn.hard_sigmoid(x), nn.hard_silu(x), nn.mish(x), nn.squareplus(x),
         nn.softmax(x.reshape(7, 1) * jnp.arange(3.), axis=0), nn.log_softmax(x), nn.logsumexp(x), nn.one_hot(jnp.array([0, 2, 5]), 4),
         nn.standardize(x), nn.logsumexp(jnp.array([1., 2.]), b=jnp.array([1., -1.]), return_sign=True),
         nn.softmax(jnp.array([1., 2., 3.]), where=jnp.array([True, False, True])),
         jax.grad(lambda x: jnp.sum(nn.gelu(x) * nn.softplus(x)))(x), jax.grad(lambda x: nn.logsumexp(x))(x),
         jax.vmap(jax.grad(nn.relu))(x), jax.grad(lambda x: jnp.sum(nn.softmax(x) * jnp.arange(7.)))(x),
         jax.grad(lambda x: jnp.sum(nn.elu(x) + nn.selu(x) + nn.celu(x)))(x), nn.sparse_plus(x), nn.log1mexp(-jnp.abs(x) - 0.1)]
    return r


def p_fft_spectral(jax, jnp, **k):
    N = 16
    xg = jnp.linspace(0, 2 * jnp.pi, N, endpoint=False)
    u = jnp.sin(3 * xg) + 0.5 * jnp.cos(xg)
    kk = jnp.fft.fftfreq(N, d=1.0 / N)
    du = jnp.real(jnp.fft.ifft(1j * kk * jnp.fft.fft(u)))
    du_r = jnp.fft.irfft(1j * jnp.fft.rfftfreq(N, 1.0 / N) * jnp.fft.rfft(u), n=N)
    def heat(u0, nu, t):
        return jnp.fft.irfft(jnp.fft.rfft(u0) * jnp.exp(-nu * jnp.fft.rfftfreq(N, 1.0 / N) ** 2 * t), n=N)
    img = jnp.outer(jnp.sin(xg[:8]), jnp.cos(xg[:8]))
    return (du, du_r, heat(u, 0.1, 0.5), jax.grad(lambda nu: jnp.sum(heat(u, nu, 0.5) ** 2))(0.1),
            jax.grad(lambda u0: jnp.sum(heat(u0, 0.1, 0.5) * xg))(u), jnp.fft.fftshift(kk), jnp.fft.ifftshift(jnp.fft.fftshift(kk)),
            jnp.abs(jnp.fft.fft2(img)), jnp.fft.irfft2(jnp.fft.rfft2(img), s=img.shape), jnp.fft.fftn(img, axes=(0,)).shape,
            jax.grad(lambda im: jnp.sum(jnp.abs(jnp.fft.rfft2(im)) ** 2))(img), jnp.fft.hfft(jnp.array([1., 2j, 3.])), jnp.fft.fft(jnp.arange(4.), n=6),
            jnp.fft.fft(jnp.arange(4.), norm='ortho'), jax.jacfwd(lambda x: jnp.fft.irfft(x + 0j, n=4))(jnp.array([1., 2., 3.])))


# ---- hand-written optimisers, EM, Bayesian special functions, BFGS, bit twiddling, static sizes,
# custom batching and callbacks, pytree control flow, scans, more linear algebra and numerics,
# jax.dtypes and scoped flags, a VAE, a diffusion model, a neural ODE

def p_adam_by_hand(jax, jnp, random, lax, **k):
    def init_adam(params):
        z = jax.tree_util.tree_map(jnp.zeros_like, params)
        return {'m': z, 'v': z, 't': jnp.array(0)}
    def adam_update(grads, state, params, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
        t = state['t'] + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state['m'], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g ** 2, state['v'], grads)
        mhat = jax.tree_util.tree_map(lambda m: m / (1 - b1 ** t), m)
        vhat = jax.tree_util.tree_map(lambda v: v / (1 - b2 ** t), v)
        lr_t = jnp.where(t < 10, lr * t / 10, lr)  # warmup schedule
        new = jax.tree_util.tree_map(lambda p, m, v: p - lr_t * m / (jnp.sqrt(v) + eps), params, mhat, vhat)
        return new, {'m': m, 'v': v, 't': t}
    def clip_by_global_norm(g, max_norm):
        norm = jnp.sqrt(sum(jnp.sum(x ** 2) for x in jax.tree_util.tree_leaves(g)))
        scale = jnp.minimum(1.0, max_norm / (norm + 1e-6))
        return jax.tree_util.tree_map(lambda x: x * scale, g), norm
    ks = random.split(random.PRNGKey(0), 3)
    X = random.normal(ks[0], (64, 3)); w_true = jnp.array([1.5, -2., 0.5]); y = X @ w_true + 0.1 * random.normal(ks[1], (64,))
    params = {'w': jnp.zeros(3), 'b': jnp.zeros(())}
    loss = lambda p, X, y: jnp.mean((X @ p['w'] + p['b'] - y) ** 2)
    @jax.jit
    def step(params, state, X, y):
        # gradient accumulation over 4 micro-batches with scan
        def micro(acc, batch):
            g = jax.grad(loss)(params, *batch)
            return jax.tree_util.tree_map(jnp.add, acc, g), None
        g, _ = lax.scan(micro, jax.tree_util.tree_map(jnp.zeros_like, params), (X.reshape(4, 16, 3), y.reshape(4, 16)))
        g = jax.tree_util.tree_map(lambda x: x / 4, g)
        g, norm = clip_by_global_norm(g, 1.0)
        params, state = adam_update(g, state, params)
        return params, state, norm
    state = init_adam(params)
    norms = []
    for _ in range(60):
        params, state, n = step(params, state, X, y)
        norms.append(n)
    # an EMA "target network" updated with stop_gradient
    target = jax.tree_util.tree_map(lambda p: jax.lax.stop_gradient(p * 0.5), params)
    return params, state['t'], jnp.stack(norms)[::10], loss(params, X, y), target


def p_gmm_em(jax, jnp, jsp, random, **k):
    ks = random.split(random.PRNGKey(3), 3)
    X = jnp.concatenate([random.normal(ks[0], (30, 2)) * 0.5 + jnp.array([2., 2.]), random.normal(ks[1], (30, 2)) * 0.7 - 1.])
    K = 2
    means = jnp.array([[1., 1.], [0., 0.]]); covs = jnp.stack([jnp.eye(2)] * K); w = jnp.ones(K) / K
    def e_step(means, covs, w):
        logp = jnp.stack([jsp.stats.multivariate_normal.logpdf(X, means[j], covs[j]) for j in range(K)], 1) + jnp.log(w)
        ll = jsp.special.logsumexp(logp, axis=1)
        return jnp.exp(logp - ll[:, None]), jnp.sum(ll)
    lls = []
    for _ in range(8):
        r, ll = e_step(means, covs, w)
        lls.append(ll)
        nk = r.sum(0)
        means = (r.T @ X) / nk[:, None]
        d = X[None] - means[:, None]
        covs = jnp.einsum('nk,kni,knj->kij', r, d, d) / nk[:, None, None] + 1e-6 * jnp.eye(2)
        w = nk / X.shape[0]
    g = jax.grad(lambda m: e_step(m, covs, w)[1])(means)
    return means, covs, w, jnp.stack(lls), g, jsp.stats.norm.logpdf(jnp.array([0., 1.]), 0.5, 2.), jsp.stats.norm.cdf(1.3), jsp.stats.norm.ppf(0.2)


def p_bayes_special(jax, jnp, jsp, **k):
    sp = jsp.special
    # Beta-Binomial marginal likelihood, Dirichlet-multinomial, gamma-Poisson: gradients in the hyperparameters
    def log_beta_binom(a, b, k, n):
        return sp.gammaln(n + 1) - sp.gammaln(k + 1) - sp.gammaln(n - k + 1) + sp.betaln(k + a, n - k + b) - sp.betaln(a, b)
    ks = jnp.array([3., 7., 5.]); ns = jnp.array([10., 10., 10.])
    f = lambda ab: jnp.sum(log_beta_binom(ab[0], ab[1], ks, ns))
    def log_dirmult(alpha, counts):
        A = jnp.sum(alpha); N = jnp.sum(counts)
        return sp.gammaln(A) - sp.gammaln(N + A) + jnp.sum(sp.gammaln(counts + alpha) - sp.gammaln(alpha))
    alpha = jnp.array([1.5, 2., 0.7]); counts = jnp.array([4., 1., 6.])
    nb = lambda r, p: jnp.sum(jsp.stats.nbinom.logpmf(jnp.array([0., 2., 5.]), r, p)) if hasattr(jsp.stats, 'nbinom') else 0.
    # (JAX's betaln is accurate to about 1e-7 only: the value is compared in float32)
    return (f(jnp.array([2., 3.])).astype(jnp.float32), jax.grad(f)(jnp.array([2., 3.])).astype(jnp.float32), jax.hessian(f)(jnp.array([2., 3.])).astype(jnp.float32), jax.grad(log_dirmult)(alpha, counts),
            sp.digamma(jnp.array([0.5, 3.])), sp.polygamma(1, 2.5), sp.erf(0.3), sp.erfinv(0.5), sp.ndtri(0.9), sp.expit(2.), sp.logit(0.3),
            sp.xlogy(0., 0.), sp.xlog1py(2., 0.5), sp.entr(jnp.array([0., 0.5])), sp.gammainc(2., 1.5), sp.gammaincc(2., 1.5),
            jax.grad(sp.gammainc, argnums=1)(2., 1.5), sp.i0e(1.), sp.i1(1.2), jax.grad(sp.erf)(0.3), jax.grad(sp.ndtri)(0.9),
            jsp.stats.poisson.logpmf(3., 2.5), jsp.stats.gamma.logpdf(2., 3., scale=0.5), jsp.stats.beta.logpdf(0.3, 2., 5.),
            jsp.stats.t.logpdf(0.5, 4.), jsp.stats.laplace.logpdf(0.3), jsp.stats.cauchy.logpdf(0.4), jax.grad(lambda a: jsp.stats.gamma.logpdf(2., a))(3.),
            jsp.stats.bernoulli.logpmf(1, 0.3), jsp.stats.binom.logpmf(3., 10, 0.4) if hasattr(jsp.stats, 'binom') else 0.)


def p_bfgs_minimize(jax, jnp, jsp, **k):
    def rosen(x): return jnp.sum(100. * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    # (from [-1.2, 1.0, 0.8] JAX's line search fails, jax-ml/jax#40228, and funcgrad's
    # converges: tests/funcgrad/scipy/test_optimize.py)
    res = jsp.optimize.minimize(rosen, jnp.array([1.3, 0.7, 0.8]), method='BFGS')
    rs = np.random.RandomState(1)
    X = jax.device_put(rs.randn(40, 3)); y = (X @ jnp.array([1., -1., 0.5]) > 0).astype(jnp.float64)
    def nll(w):
        z = X @ w
        return jnp.sum(jnp.logaddexp(0., z) - y * z) + 0.05 * jnp.sum(w ** 2)
    res2 = jsp.optimize.minimize(nll, jnp.zeros(3), method='BFGS', options={'maxiter': 100})
    return res.x, res.success, res2.x, res2.fun, jnp.linalg.norm(res2.jac) < 1e-4


def p_bit_ops(jax, jnp, lax, **k):
    a = jnp.array([0b1011, 0b0110, 255, 1 << 20], dtype=jnp.int32)
    u = jnp.array([3, 250, 128], jnp.uint8)
    return (lax.population_count(a), lax.clz(a), lax.shift_left(a, jnp.int32(2)), lax.shift_right_logical(a, jnp.int32(1)), lax.shift_right_arithmetic(-a, jnp.int32(1)),
            jnp.bitwise_and(a, 6), jnp.bitwise_or(a, 1), jnp.bitwise_xor(a, a >> 1), jnp.invert(u), jnp.left_shift(u, 1), jnp.right_shift(u, 2),
            lax.bitwise_not(a), jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 1, 1], jnp.uint8)), jnp.unpackbits(jnp.array([5, 255], jnp.uint8)),
            lax.reduce_precision(jnp.array([1.0001, 3.14159265]), exponent_bits=8, mantissa_bits=7), lax.bitcast_convert_type(jnp.float32(1.0), jnp.int32),
            lax.bitcast_convert_type(jnp.array([1065353216], jnp.int32), jnp.float32), jnp.gcd(jnp.array([12, 18]), 8), jnp.lcm(4, jnp.array([6, 10])),
            lax.nextafter(jnp.float32(1.0), jnp.float32(2.0)), jnp.frexp(jnp.array([8., 0.3])), jnp.ldexp(jnp.array([0.5, 3.]), jnp.array([4, -1])),
            jnp.bitwise_count(a) if hasattr(jnp, 'bitwise_count') else lax.population_count(a))


def p_static_size_ops(jax, jnp, **k):
    x = jnp.array([3, 1, 3, 0, 2, 1, 3])
    f = jax.jit(lambda x: (jnp.unique(x, size=5, fill_value=-1), jnp.nonzero(x > 1, size=5, fill_value=99), jnp.argwhere(x == 3, size=4),
                           jnp.bincount(x, length=5), jnp.where(x > 2, size=4, fill_value=0), jnp.flatnonzero(x, size=8),
                           jnp.unique(x, return_counts=True, size=4), jnp.unique(x, return_inverse=True, size=4), jnp.unique(x, return_index=True, size=4),
                           jnp.cumsum(jnp.bincount(x, weights=jnp.arange(7.), length=4)), jnp.extract(x > 1, x, size=5) if hasattr(jnp, 'extract') else x,
                           jnp.union1d(x, jnp.array([7, 8]), size=7) if False else x, jnp.intersect1d(x, jnp.array([3, 2, 9]), size=3, fill_value=-5) if False else x,
                           jnp.setdiff1d(x, jnp.array([3]), size=4, fill_value=-9)))
    return f(x), jnp.unique(x), jnp.unique(x, return_counts=True), jnp.bincount(x), jnp.nonzero(x), jnp.argwhere(jnp.eye(2)), jnp.unique(jnp.array([[1, 2], [1, 2], [0, 1]]), axis=0)


def p_custom_vmap_callbacks(jax, jnp, **k):
    @jax.custom_batching.custom_vmap
    def f(x, y): return jnp.sin(x) * y
    @f.def_vmap
    def f_vmap(axis_size, in_batched, xs, ys):
        x_b, y_b = in_batched
        out = jnp.sin(xs) * ys + 100.  # a different result, to see that the rule runs
        return out, x_b or y_b
    xs = jnp.arange(3.)
    r = [f(1., 2.), jax.vmap(f)(xs, xs), jax.vmap(f, (0, None))(xs, 2.), jax.jit(jax.vmap(f))(xs, xs)]
    def host_fn(x): return np.cumsum(np.asarray(x)) * 2
    cb = lambda x: jax.pure_callback(host_fn, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    r += [cb(xs), jax.jit(cb)(xs), jax.vmap(cb)(jnp.ones((2, 3))) if False else jax.vmap(lambda r: jax.pure_callback(host_fn, jax.ShapeDtypeStruct(r.shape, r.dtype), r, vmap_method='sequential'))(jnp.ones((2, 3)))]
    seq = jax.custom_batching.sequential_vmap(lambda x: jnp.sum(x) * 2)
    r.append(jax.vmap(seq)(jnp.ones((3, 2))))
    return r


def p_cond_switch_pytrees(jax, jnp, lax, **k):
    def f(p, x):
        def a(op): return {'y': op[0] * op[1], 'z': jnp.sin(op[1])}
        def b(op): return {'y': op[0] + op[1], 'z': jnp.cos(op[1]) * op[0]}
        return lax.cond(x > 0, a, b, (p, x))
    r = [f(2., 1.), f(2., -1.), jax.grad(lambda p, x: f(p, x)['z'], (0, 1))(2., -1.), jax.vmap(f)(jnp.array([1., 2.]), jnp.array([1., -1.])),
         jax.jacrev(lambda px: f(px[0], px[1])['y'])(jnp.array([2., 1.]))]
    branches = [lambda x: {'a': x, 'b': x * 2}, lambda x: {'a': -x, 'b': x ** 2}, lambda x: {'a': jnp.exp(x), 'b': x - 1}]
    sw = lambda i, x: lax.switch(i, branches, x)
    r += [sw(1, 3.), jax.vmap(sw)(jnp.array([0, 2, 1, 5]), jnp.arange(4.)), jax.grad(lambda x: sw(2, x)['a'] + sw(1, x)['b'])(0.5),
          jax.jit(sw)(jnp.array(-3), 2.), jax.vmap(jax.grad(lambda i, x: sw(i, x)['b'], 1))(jnp.array([0, 1, 2]), jnp.arange(3.))]
    r.append(lax.select_n(jnp.array([0, 1, 2, 1]), jnp.zeros(4), jnp.ones(4), jnp.full(4, 2.)))
    r.append(lax.cond(jnp.array(True), lambda: 1., lambda: 2.))
    r.append(jax.vmap(lambda p: lax.cond(p, lambda x: x + 1, lambda x: x * 10, 3.))(jnp.array([True, False])))
    return r


def p_scan_variants(jax, jnp, lax, **k):
    xs = jnp.arange(1., 7.)
    r = [lax.scan(lambda c, x: (c + x, None), 0., xs), lax.scan(lambda c, _: (c * 2, c), 1., None, length=5),
         lax.scan(lambda c, x: ((c[0] + x, c[1] * x), {'s': c[0], 'p': c[1]}), (0., 1.), xs),
         lax.scan(lambda c, x: (c + x[0] * x[1], x[0] - x[1]), 0., (xs, xs[::-1])),
         lax.scan(lambda c, x: (c + jnp.sum(x), jnp.cumsum(x)), 0., xs.reshape(3, 2)),
         jax.grad(lambda a: lax.scan(lambda c, x: (c * a + x, c), 0., xs)[0])(0.9),
         jax.jacfwd(lambda a: lax.scan(lambda c, x: (c * a + x, c), 0., xs)[1])(0.9),
         jax.vmap(lambda a: lax.scan(lambda c, x: (c * a + x, None), 0., xs)[0])(jnp.array([0.5, 1.])),
         lax.scan(lambda c, x: (c, x), 0., jnp.zeros((0, 2))),
         jax.grad(lambda x0: lax.scan(lambda c, x: (jnp.sin(c) + x, c ** 2), x0, xs, reverse=True)[1].sum())(0.3),
         lax.scan(lambda c, x: (c + 1, c), jnp.int32(0), None, length=3)]
    return r


def p_linalg_more(jax, jnp, jsp, **k):
    rs = np.random.RandomState(21)
    A = jax.device_put(rs.randn(4, 4)); B = jax.device_put(rs.randn(4, 2))
    w, v = jnp.linalg.eig(A)
    idx = jnp.argsort(jnp.abs(w))
    r = [jnp.sort_complex(jnp.linalg.eigvals(A)), jnp.abs(w[idx]), jnp.linalg.matrix_rank(B @ B.T), jnp.linalg.cond(A), jnp.linalg.multi_dot([A, A, B]),
         jnp.linalg.tensorsolve(jnp.eye(4).reshape(2, 2, 2, 2) * 2, jnp.ones((2, 2))), jnp.linalg.tensorinv(jnp.eye(4).reshape(4, 2, 2) * 3, ind=1),
         jnp.linalg.matrix_norm(A, ord=2) if hasattr(jnp.linalg, 'matrix_norm') else 0., jnp.linalg.vector_norm(A, ord=3, axis=0) if hasattr(jnp.linalg, 'vector_norm') else 0.,
         jnp.linalg.svd(A)[1], jnp.abs(jnp.linalg.svd(B, full_matrices=False)[0]), jnp.linalg.det(jnp.stack([A, 2 * A])), jsp.linalg.lu(A)[1].shape,
         jsp.linalg.qr(B, mode='economic')[0].shape, jsp.linalg.svd(B, compute_uv=False), jsp.linalg.inv(A), jsp.linalg.det(A),
         jsp.linalg.sqrtm(A @ A.T + jnp.eye(4)).real if hasattr(jsp.linalg, 'sqrtm') else 0., jsp.linalg.expm(A * 0.1), jsp.linalg.block_diag(A[:2, :2], jnp.ones((1, 1))),
         jsp.linalg.toeplitz(jnp.arange(1., 4.)), jsp.linalg.solve_triangular(jnp.triu(A) + 3 * jnp.eye(4), B, lower=False, trans='T'),
         jsp.linalg.cho_solve(jsp.linalg.cho_factor(A @ A.T + jnp.eye(4), lower=True), B), jsp.linalg.polar(A)[1] if hasattr(jsp.linalg, 'polar') else 0.,
         jax.grad(lambda A: jnp.sum(jnp.abs(jnp.linalg.eigvals(A))))(A), jax.grad(lambda A: jnp.linalg.cond(A))(A),
         jax.vmap(jnp.linalg.eigh)(jnp.stack([A + A.T, A @ A.T]))[0], jax.grad(lambda A: jnp.sum(jsp.linalg.expm(A) @ B))(A * 0.3),
         jax.jacfwd(lambda A: jnp.linalg.pinv(A[:, :2]))(A).shape, jnp.linalg.solve(A, B[:, 0]), jnp.linalg.cross(jnp.array([1., 0., 0.]), jnp.array([0., 1., 0.])) if hasattr(jnp.linalg, 'cross') else 0.]
    return r


def p_numerics_misc(jax, jnp, **k):
    x = jnp.linspace(0, 2, 9)
    y = jnp.sin(x)
    return (jnp.gradient(y, x), jnp.gradient(jnp.outer(y, y)), jnp.trapezoid(y, x), jnp.diff(y, n=2), jnp.diff(y, prepend=0.), jnp.ediff1d(y, to_end=jnp.array([9.])),
            jnp.cross(jnp.array([1., 2., 3.]), jnp.array([4., 5., 6.])), jnp.polyfit(x, y, 3), jnp.polyval(jnp.polyfit(x, y, 2), 0.5), jnp.roots(jnp.array([1., -3., 2.])).astype(jnp.complex128),  # NumPy's roots are real here, JAX's complex
           
            jnp.polyder(jnp.array([1., 2., 3., 4.])), jnp.polyint(jnp.array([3., 2., 1.])), jnp.polymul(jnp.array([1., 1.]), jnp.array([1., -1.])),
            jnp.interp(jnp.array([0.25, 1.7, 3.]), x, y), jax.grad(lambda t: jnp.interp(t, x, y))(0.3), jax.grad(lambda v: jnp.interp(0.3, x, v).sum())(y),
            jnp.cumsum(x, dtype=jnp.float32), jnp.cumulative_sum(x, include_initial=True) if hasattr(jnp, 'cumulative_sum') else x,
            jnp.logspace(0, 2, 3), jnp.geomspace(1, 8, 4), jnp.histogram(y, bins=4, range=(0, 1))[0].astype(jnp.int64), jnp.digitize(y, jnp.array([0.2, 0.6])).astype(jnp.int64),
            jnp.quantile(y, jnp.array([0.1, 0.5, 0.9])), jnp.nanpercentile(jnp.array([1., jnp.nan, 3., 4.]), 50), jnp.corrcoef(y, x), jnp.cov(jnp.stack([x, y])),
            jax.grad(lambda x: jnp.trapezoid(jnp.sin(x), x))(x), jax.grad(lambda x: jnp.sum(jnp.gradient(x ** 2)))(x),
            jnp.convolve(y, jnp.ones(3) / 3, mode='valid'), jnp.apply_along_axis(lambda r: r / r.sum(), 1, jnp.ones((2, 3))), jnp.piecewise(x, [x < 1, x >= 1], [lambda t: t ** 2, lambda t: 2 - t]),
            jnp.select([x < 0.5, x > 1.5], [x, -x], default=0.), jnp.heaviside(x - 1, 0.5), jnp.sinc(x), jnp.i0(x), jnp.trunc(jnp.array([-1.5, 1.5])), jnp.divmod(jnp.array([7, -7]), 3))

def p_scoped_flags_dtypes(jax, jnp, **k):
    @jax.custom_vjp
    def scale(x, n): return x * n
    def fwd(x, n): return scale(x, n), n
    def bwd(n, g): return g * n, np.zeros(np.shape(n), dtype=jax.dtypes.float0)
    scale.defvjp(fwd, bwd)
    traces = []
    f = jax.jit(lambda x: (traces.append(1), jnp.sin(x) @ x)[1])
    with jax.default_matmul_precision('float32'):
        a = f(jnp.ones(3))
    jax.clear_caches()
    b = f(jnp.ones(3))
    return (jax.grad(scale)(2., 3), jax.vmap(jax.grad(scale), (0, None))(jnp.arange(3.), 4), a, b, len(traces),
            jax.dtypes.canonicalize_dtype(jnp.float32).name, bool(jax.dtypes.issubdtype(jnp.int8, jnp.integer)),
            jax.dtypes.result_type(jnp.float32, jnp.float64).name, str(jax.dtypes.float0))


def p_vae(jax, jnp, random, **k):
    D, H, Z = 6, 8, 2
    ks = random.split(random.PRNGKey(0), 6)
    params = {'enc': {'w': random.normal(ks[0], (D, H)) * 0.3, 'b': jnp.zeros(H)}, 'mu': random.normal(ks[1], (H, Z)) * 0.3,
              'logvar': random.normal(ks[2], (H, Z)) * 0.1, 'dec': {'w1': random.normal(ks[3], (Z, H)) * 0.3, 'w2': random.normal(ks[4], (H, D)) * 0.3}}
    x = (random.uniform(ks[5], (16, D)) > 0.5).astype(jnp.float64)
    def elbo(params, x, key):
        h = jax.nn.relu(x @ params['enc']['w'] + params['enc']['b'])
        mu, logvar = h @ params['mu'], h @ params['logvar']
        eps = random.normal(key, mu.shape)
        z = mu + jnp.exp(0.5 * logvar) * eps
        logits = jnp.tanh(z @ params['dec']['w1']) @ params['dec']['w2']
        rec = -jnp.sum(jnp.logaddexp(0., -logits) * x + jnp.logaddexp(0., logits) * (1 - x), axis=-1)
        kl = 0.5 * jnp.sum(jnp.exp(logvar) + mu ** 2 - 1 - logvar, axis=-1)
        return jnp.mean(rec - kl)
    @jax.jit
    def step(params, key):
        l, g = jax.value_and_grad(elbo)(params, x, key)
        return jax.tree_util.tree_map(lambda p, g: p + 0.05 * g, params, g), l
    ls = []
    key = random.PRNGKey(1)
    for i in range(15):
        params, l = step(params, random.fold_in(key, i))
        ls.append(l)
    per_example = jax.vmap(jax.grad(lambda p, xi: elbo(p, xi[None], key)), (None, 0))(params, x[:3])['mu']
    return jnp.stack(ls), params['mu'], per_example


def p_ddpm(jax, jnp, random, lax, **k):
    T = 20
    betas = jnp.linspace(1e-4, 0.2, T)
    alphas = 1 - betas; abar = jnp.cumprod(alphas)
    def q_sample(x0, t, noise): return jnp.sqrt(abar[t])[:, None] * x0 + jnp.sqrt(1 - abar[t])[:, None] * noise
    def eps_model(params, x, t):
        temb = jnp.stack([jnp.sin(t / T * jnp.pi), jnp.cos(t / T * jnp.pi)], -1)
        h = jnp.tanh(jnp.concatenate([x, temb], -1) @ params['w1'] + params['b1'])
        return h @ params['w2']
    ks = random.split(random.PRNGKey(2), 5)
    params = {'w1': random.normal(ks[0], (4, 16)) * 0.3, 'b1': jnp.zeros(16), 'w2': random.normal(ks[1], (16, 2)) * 0.3}
    x0 = random.normal(ks[2], (32, 2)) * 0.3 + 1.
    def loss(params, key):
        k1, k2 = random.split(key)
        t = random.randint(k1, (x0.shape[0],), 0, T)
        noise = random.normal(k2, x0.shape)
        return jnp.mean((eps_model(params, q_sample(x0, t, noise), t.astype(jnp.float64)) - noise) ** 2)
    g = jax.grad(loss)(params, ks[3])
    def sample(params, key):
        def step(x, inp):
            t, k = inp
            eps = eps_model(params, x, jnp.full((x.shape[0],), t, dtype=jnp.float64))
            # (schedules are NumPy arrays in funcgrad: a traced t indexes them through jnp.take)
            b, ab, a = jnp.take(betas, t), jnp.take(abar, t), jnp.take(alphas, t)
            mean = (x - b / jnp.sqrt(1 - ab) * eps) / jnp.sqrt(a)
            z = jnp.where(t > 0, random.normal(k, x.shape), 0.)
            return mean + jnp.sqrt(b) * z, None
        x, _ = lax.scan(step, random.normal(key, (4, 2)), (jnp.arange(T)[::-1], random.split(key, T)))
        return x
    return abar[::5], g, sample(params, ks[4]), jax.jit(sample)(params, ks[4])


def p_neural_ode_params(jax, jnp, lax, random, **k):
    ks = random.split(random.PRNGKey(4), 2)
    params = {'w1': random.normal(ks[0], (2, 8)) * 0.5, 'w2': random.normal(ks[1], (8, 2)) * 0.5}
    def dyn(params, y, t): return jnp.tanh(y @ params['w1'] + jnp.sin(t)) @ params['w2']
    def odeint_rk4(params, y0, ts):
        def step(y, tt):
            t0, t1 = tt; h = t1 - t0
            k1 = dyn(params, y, t0); k2 = dyn(params, y + h / 2 * k1, t0 + h / 2)
            k3 = dyn(params, y + h / 2 * k2, t0 + h / 2); k4 = dyn(params, y + h * k3, t1)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return y, y
        return lax.scan(step, y0, (ts[:-1], ts[1:]))[1]
    ts = jnp.linspace(0., 1., 11)
    y0s = jnp.array([[1., 0.], [0., 1.], [-1., 0.5]])
    target = jnp.array([0.5, -0.5])
    loss = lambda p: jnp.mean(jnp.sum((jax.vmap(lambda y0: odeint_rk4(p, y0, ts)[-1])(y0s) - target) ** 2, -1))
    g = jax.grad(loss)(params)
    gj = jax.jit(jax.grad(loss))(params)
    sens = jax.jacrev(lambda y0: odeint_rk4(params, y0, ts)[-1])(y0s[0])
    return loss(params), g, gj, sens, jax.hessian(lambda s: loss(jax.tree_util.tree_map(lambda p: p * s, params)))(1.0)

def p_image_resize(jax, jnp, random, **k):
    img = random.uniform(random.PRNGKey(0), (6, 8, 3))
    methods = ['nearest', 'bilinear', 'bicubic', 'lanczos3', 'lanczos5', 'area', 'cubic-pytorch']
    ups = [jax.image.resize(img, (9, 13, 3), m) for m in methods]
    downs = [jax.image.resize(img, (3, 5, 3), m, antialias=aa) for m in methods for aa in (True, False)]
    st = jax.image.scale_and_translate(img, (6, 8, 3), (0, 1), jnp.array([1.2, 0.8]), jnp.array([-0.5, 1.0]), 'linear')
    # a differentiable warp: fit a zoom factor by gradient descent
    target = jax.image.scale_and_translate(img, (6, 8, 3), (0, 1), jnp.array([1.3, 1.3]), jnp.array([0., 0.]), 'cubic')
    loss = lambda s: jnp.mean((jax.image.scale_and_translate(img, (6, 8, 3), (0, 1), jnp.array([s, s]), jnp.array([0., 0.]), 'cubic') - target) ** 2)
    s = 1.1
    for _ in range(5):
        s = s - 0.5 * jax.grad(loss)(s) / (jnp.abs(jax.grad(jax.grad(loss))(s)) + 1.)
    g = jax.grad(lambda x: jnp.sum(jax.image.resize(x, (4, 4, 3), 'lanczos3') ** 2))(img)
    batch = jax.vmap(lambda im: jax.image.resize(im, (3, 4, 3), 'bilinear'))(jnp.stack([img, img * 2]))
    ints = jax.image.resize(jnp.arange(12, dtype=jnp.int32).reshape(3, 4), (6, 2), 'nearest')
    return ups, downs, st, s, g, batch, ints, jax.jit(lambda im: jax.image.resize(im, (12, 16, 3), 'bicubic'))(img)[::5, ::5]


# ---- transformation corner cases, jax.nn extras, more sharp bits, an implicit Newton solver

def p_transform_corners(jax, jnp, lax, **k):
    x = jnp.arange(6.).reshape(2, 3)
    r = [jax.vmap(lambda v: v * 2, in_axes=-1, out_axes=-1)(x), jax.vmap(lambda v: v.sum(), in_axes=-2)(x),
         jax.vmap(lambda a, b: a + b, in_axes=(1, None), out_axes=1)(x, jnp.ones(2))]
    f = lambda p, q: {'s': jnp.sum(p['a'] * q), 'v': p['a'] ** 2 * q[0]}
    p = {'a': jnp.array([1., 2.])}; q = jnp.array([3., 4.])
    r += [jax.jacrev(f, argnums=(0, 1))(p, q), jax.jacfwd(f, argnums=(0, 1))(p, q), jax.hessian(lambda p: f(p, q)['s'] ** 2)(p)]
    y, lin = jax.linearize(lambda a, b: jnp.sin(a) * b, 1.0, jnp.array([2., 3.]))
    r += [y, lin(0.5, jnp.array([1., 0.]))]
    r.append(jax.grad(lambda x, n: x * n, allow_int=True, argnums=(0, 1))(2., 3)[0])
    r.append(jax.jit(lambda d, scale=1.0: jax.tree_util.tree_map(lambda v: v * scale, d))({'a': jnp.ones(2), 'b': (3.,)}, scale=2.0))
    r.append(jax.vmap(lambda d: d['x'] @ d['y'])({'x': jnp.ones((3, 2, 2)), 'y': jnp.arange(6.).reshape(3, 2)}))
    r.append(jax.grad(lambda x: jnp.sum(jax.vmap(jax.grad(lambda xi: jnp.sin(xi) ** 2))(x)))(jnp.arange(3.)))
    r.append(jax.jacfwd(jax.jacrev(lambda x: jnp.prod(x) * jnp.sum(x ** 3)))(jnp.array([1., 2., 0.5])))
    r.append(jax.vmap(jax.hessian(lambda x: jnp.sum(jnp.exp(x) * x[::-1])))(jnp.arange(6.).reshape(2, 3) / 3))
    r.append(jax.value_and_grad(lambda x: (jnp.sum(x ** 2), x[0]), has_aux=True)(jnp.array([1., 2.])))
    r.append(jax.vjp(lambda x, y: (x * y, x + y), 2., 3.)[1]((1., 1.)))
    r.append(jax.jvp(lambda d: jax.tree_util.tree_map(jnp.sin, d), ({'a': 1., 'b': [2.]},), ({'a': 1., 'b': [0.5]},)))
    r.append(jax.grad(lambda x: lax.fori_loop(0, 4, lambda i, c: c + jnp.sin(c * i), x))(0.7))
    r.append(jax.jit(jax.vmap(jax.grad(lambda x, y: jnp.sum((x - y) ** 2)), (0, None)))(x, jnp.ones(3)))
    r.append(jax.grad(lambda x: jnp.linalg.norm(x @ x.T, 'fro'))(x))
    r.append(jax.jacrev(lambda x: x[jnp.array([1, 0, 1])] * 2)(jnp.array([1., 2.])))
    r.append(jax.grad(lambda x: jnp.sum(jnp.where(x > 1, x ** 2, -x)))(jnp.array([0., 2., 1.])))
    r.append(jax.grad(lambda x: jnp.max(jnp.abs(x - 1.5)))(jnp.array([0., 2., 3.])))
    return r


def p_nn_extras(jax, jnp, random, **k):
    init = jax.nn.initializers
    ks = random.split(random.PRNGKey(0), 10)
    r = [init.he_normal()(ks[0], (3, 4)), init.he_uniform()(ks[1], (3, 4)), init.lecun_normal()(ks[2], (3, 4)), init.lecun_uniform()(ks[3], (4, 3)),
         init.glorot_uniform()(ks[4], (2, 5)), init.orthogonal()(ks[5], (4, 4)), init.normal(0.5)(ks[6], (3,)), init.uniform(2.)(ks[7], (3,)),
         init.variance_scaling(2.0, 'fan_out', 'truncated_normal')(ks[8], (3, 4)), init.constant(0.3)(ks[9], (2,)), init.zeros(ks[0], (2,)), init.ones(ks[0], (1, 2)),
         init.truncated_normal(0.1)(ks[1], (3,)), init.delta_orthogonal()(ks[2], (3, 3, 4, 4)).shape,
         init.glorot_normal(in_axis=1, out_axis=0)(ks[3], (2, 6)), init.kaiming_normal()(ks[4], (3, 3, 2, 4))]
    x = jnp.linspace(-2, 2, 5)
    r += [jax.nn.softmax(jnp.stack([x, -x]), axis=0), jax.nn.log_softmax(jnp.stack([x, -x]), axis=None), jax.nn.one_hot(jnp.array([1, -1, 3]), 3, dtype=jnp.int32),
          jax.nn.one_hot(jnp.array([[0, 2]]), 3, axis=0), jax.nn.relu(jnp.array([-1, 2], jnp.int32)), jax.nn.sigmoid(jnp.float32(0.5)),
          jax.nn.dot_product_attention(jnp.ones((1, 3, 2, 4)), jnp.ones((1, 5, 2, 4)), jnp.arange(40.).reshape(1, 5, 2, 4), scale=0.5,
                                       key_value_seq_lengths=jnp.array([3], jnp.int32)).astype(jnp.float32)]  # JAX's softmax is float32
    return r

def p_sharp_bits_misc(jax, jnp, lax, random, **k):
    # pure functions: a global captured at trace time, iterators, and jit's caching
    g = 0.
    def impure_uses_globals(x): return x + g
    jf = jax.jit(impure_uses_globals)
    a = jf(4.)
    g = 10.
    b = jf(4.)          # cached: still sees g = 0
    c = jf(jnp.array([4.]))  # new shape: traced again, sees g = 10
    # array updates are out-of-place
    x = jnp.arange(5.)
    y = jax.jit(lambda x: x.at[2].set(9.))(x)
    # out-of-bounds: a traced index is clamped, an update out of range dropped (a static
    # out-of-range x[10] raises IndexError in funcgrad, as NumPy: docs/numpy.md)
    oob = jax.jit(lambda x, i: (x[i], x.at[i].set(1.), jnp.take(x, i, mode='clip')))(x, 10)
    # random: the same key twice gives the same numbers
    key = random.PRNGKey(0)
    same = random.uniform(key) == random.uniform(key)
    keys = random.split(key, 3)
    draws = jax.vmap(lambda k: random.normal(k, (2,)))(keys)
    # control flow: Python control flow on static values under jit, lax.cond on traced ones
    f = jax.jit(lambda x, n: x * n if n > 2 else -x, static_argnums=1)
    h = jax.jit(lambda x: lax.cond(x.sum() > 0, lambda: x * 2, lambda: -x))
    # dynamic shapes: use where instead of boolean masks under jit
    pos_sum = jax.jit(lambda x: jnp.sum(jnp.where(x > 2, x, 0.)))(x)
    # float64 by default (x64), and weakly typed Python scalars
    dt = (jnp.ones(2, jnp.float32) * 2.).dtype.name
    # NaN: 0/0 in a gradient
    nan_grad = jax.grad(lambda x: jnp.sum(x / jnp.linalg.norm(x)))(jnp.array([3., 4.]))
    return a, b, c, y, x, oob, same, draws, f(3., 3), f(3., 1), h(jnp.array([1., -3.])), pos_sum, dt, nan_grad


def p_optimistix_style_newton(jax, jnp, lax, **k):
    # a damped Newton solver for a small nonlinear system in a while_loop, differentiated by
    # the implicit function theorem with custom_vjp
    def F(y, theta):
        return jnp.array([y[0] ** 3 + y[1] - theta[0], jnp.sin(y[0]) + y[1] ** 3 - theta[1]])
    def solve(theta):
        def cond(s): return (s[2] < 50) & (jnp.linalg.norm(F(s[0], theta)) > 1e-12)
        def body(s):
            y, lam, i = s
            J = jax.jacfwd(F)(y, theta)
            step = jnp.linalg.solve(J + lam * jnp.eye(2), F(y, theta))
            return y - step, lam * 0.5, i + 1
        return lax.while_loop(cond, body, (jnp.array([1., 1.]), 1e-2, 0))[0]
    @jax.custom_vjp
    def root(theta): return solve(theta)
    def fwd(theta):
        y = solve(theta)
        return y, (y, theta)
    def bwd(res, g):
        y, theta = res
        Jy = jax.jacfwd(F, 0)(y, theta)
        lam = jnp.linalg.solve(Jy.T, g)
        _, vjp_theta = jax.vjp(lambda t: F(y, t), theta)
        return (-vjp_theta(lam)[0],)
    root.defvjp(fwd, bwd)
    theta = jnp.array([2., 1.5])
    y = root(theta)
    return y, F(y, theta), jax.jacrev(root)(theta), jax.grad(lambda t: jnp.sum(root(t) ** 2))(theta), jax.vmap(root)(jnp.stack([theta, theta * 1.1]))


# ---- SciPy-style programs: warping with map_coordinates, grid interpolation, Krylov solvers,
# short-time Fourier transforms, DCTs, vector quantisation, statistics

def p_scipy_programs(jax, jnp, jsp, random, **k):
    img = jnp.outer(jnp.sin(jnp.linspace(0, 3, 6)), jnp.cos(jnp.linspace(0, 2, 7)))
    coords = jnp.stack([jnp.linspace(0.2, 4.7, 5), jnp.linspace(5.5, 0.3, 5)])
    warp = lambda im, c: jsp.ndimage.map_coordinates(im, [c[0], c[1]], order=1, mode='nearest')
    r = [warp(img, coords), jax.grad(lambda c: jnp.sum(warp(img, c) ** 2))(coords), jax.grad(lambda im: jnp.sum(warp(im, coords)))(img),
         jsp.ndimage.map_coordinates(img, [coords[0], coords[1]], order=0, mode='constant', cval=-1.),
         jsp.ndimage.map_coordinates(img, [coords[0] * 2, coords[1]], order=1, mode='mirror')]  # ('wrap' is SciPy's in funcgrad: docs/scipy.md)
    interp = jsp.interpolate.RegularGridInterpolator((jnp.linspace(0, 1, 6), jnp.linspace(0, 2, 7)), img)
    pts = jnp.array([[0.1, 0.3], [0.55, 1.9], [0.9, 1.0]])
    r += [interp(pts), jax.grad(lambda p: jnp.sum(interp(p)))(pts)]
    A = jnp.array([[4., 1., 0.], [1., 3., 1.], [0., 1., 2.]]); b = jnp.array([1., 2., 3.])
    cg = lambda b: jsp.sparse.linalg.cg(lambda x: A @ x, b, tol=1e-12)[0]
    r += [cg(b), jax.jacobian(cg)(b), jsp.sparse.linalg.gmres(A, b, tol=1e-12)[0], jsp.sparse.linalg.bicgstab(A, b, tol=1e-12)[0]]
    x = jnp.sin(jnp.linspace(0, 12, 64)) + 0.3 * jnp.cos(jnp.linspace(0, 40, 64))
    f, t, Z = jsp.signal.stft(x, nperseg=16)
    r += [f, t, jnp.abs(Z), jsp.signal.istft(Z, nperseg=16)[1][:8], jsp.signal.welch(x, nperseg=16)[1], jsp.signal.correlate(x[:8], x[:3]),
          jsp.signal.fftconvolve(x[:8], x[:3], mode='same'), jsp.signal.detrend(x[:8])]
    r += [jsp.fft.dct(x[:8]), jsp.fft.idct(jsp.fft.dct(x[:8], norm='ortho'), norm='ortho'), jsp.fft.dctn(img, type=2), jax.grad(lambda v: jnp.sum(jsp.fft.dct(v) ** 2))(x[:8])]
    r += [jsp.integrate.trapezoid(x, dx=0.1), jax.grad(lambda v: jsp.integrate.trapezoid(v ** 2, dx=0.1))(x[:5])]
    codes, dist = jsp.cluster.vq.vq(jnp.array([[0., 0.], [1., 1.], [0.9, 0.2]]), jnp.array([[0., 0.], [1., 1.]]))
    r += [codes.astype(jnp.int64), dist, jsp.special.logsumexp(img, axis=0, b=jnp.arange(6.)[:, None] + 1), jsp.stats.norm.logpdf(x[:3]),
          jsp.stats.multivariate_normal.pdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2)), jsp.stats.gaussian_kde(x[:10]).evaluate(jnp.array([0., 0.5])),
          jsp.stats.rankdata(jnp.array([3., 1., 3., 2.])), jsp.stats.mode(jnp.array([1, 2, 2, 3])).mode, jsp.stats.sem(x[:10])]
    return r


# ---- nested control flow under every transformation, random samplers with array parameters

def p_nested_control_flow(jax, jnp, lax, **k):
    def f(theta, xs):
        def step(c, x):
            c = lax.cond(x > 0, lambda c: c * theta + x, lambda c: jnp.sin(c) - x * theta, c)
            def inner(s):
                return (s[0] + 1, s[1] * 0.9 + theta * 0.01)
            n, c = lax.while_loop(lambda s: s[0] < 3, inner, (0, c))
            return c, c ** 2
        c, ys = lax.scan(step, 0.5, xs, unroll=2)
        return c + jnp.sum(ys)
    xs = jnp.array([0.5, -1., 2., -0.3, 0.8])
    thetas = jnp.array([0.3, 0.9, 1.1])
    r = [f(0.7, xs), jax.jvp(lambda t: f(t, xs), (0.7,), (1.,)), jax.vmap(f, (0, None))(thetas, xs),
         jax.vmap(jax.jvp, (None, 0, 0))(lambda t: f(t, xs), (thetas,), (jnp.ones(3),)),
         jax.jacfwd(lambda t: jax.vmap(lambda x: f(t, x))(jnp.stack([xs, -xs])))(0.7),
         jax.jit(jax.vmap(lambda x: f(0.7, x)))(jnp.stack([xs, xs[::-1]]))]
    # reverse mode through scan(cond(...)) with a fixed-trip fori inside
    g = lambda theta: lax.scan(lambda c, x: (lax.cond(x > 0, lambda c: c * theta, lambda c: c + theta, c) + lax.fori_loop(0, 3, lambda i, a: a * theta, x), None), 1., xs)[0]
    r += [jax.grad(g)(0.7), jax.vmap(jax.grad(g))(thetas), jax.hessian(g)(0.7), jax.jit(jax.grad(g))(0.7)]
    r.append(jax.grad(lambda t: jnp.sum(lax.map(lambda x: lax.fori_loop(0, 4, lambda i, a: jnp.tanh(a * t + x), 0., unroll=2), xs, batch_size=2)))(0.7))
    r.append(jax.vmap(lambda x0: lax.while_loop(lambda s: s['n'] < s['lim'], lambda s: {'v': s['v'] * 2., 'n': s['n'] + 1, 'lim': s['lim']}, {'v': x0, 'n': 0, 'lim': 3}))(jnp.array([1., 3.])))
    r.append(jax.vmap(lambda lim: lax.fori_loop(0, lim, lambda i, a: a + i, 0))(jnp.array([2, 5, 0])))
    return r


def p_random_parameter_shapes(jax, jnp, random, **k):
    key = random.PRNGKey(11)
    ks = random.split(key, 12)
    return [random.gamma(ks[0], jnp.array([0.5, 1., 5.])), random.beta(ks[1], jnp.array([1., 2.]), jnp.array([[3.], [4.]])),
            random.categorical(ks[2], jnp.log(jnp.array([[0.2, 0.8], [0.9, 0.1], [0.5, 0.5]])), axis=-1),
            random.categorical(ks[3], jnp.zeros((3, 4)), axis=0, shape=(2, 4)), random.choice(ks[4], jnp.arange(12.).reshape(3, 4), (2,), axis=1),
            random.choice(ks[5], 6, (3,), replace=False, p=jnp.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.5])),
            random.permutation(ks[6], jnp.arange(12.).reshape(3, 4), axis=1, independent=True), random.poisson(ks[7], jnp.array([0.5, 20., 200.])),
            random.bernoulli(ks[8], jnp.array([0.1, 0.9])), random.uniform(ks[9], (2, 3), minval=jnp.array([0., 10., 100.]), maxval=jnp.array([1., 11., 101.])),
            random.randint(ks[10], (4,), jnp.array([0, 10, 100, -5]), 1000), random.normal(ks[11], (2, 2), dtype=jnp.float32),
            jax.jit(lambda k: random.split(k, 3))(key), jax.vmap(random.fold_in, (None, 0))(key, jnp.arange(3)),
            random.key_data(random.wrap_key_data(random.key_data(random.key(3)))), random.truncated_normal(ks[0], jnp.array([-1., 0.]), 2., (3, 2)),
            random.exponential(ks[1], (2,), dtype=jnp.float32), random.dirichlet(ks[2], jnp.ones((2, 3)) * jnp.array([[1.], [5.]]))]
    # (binomial and multinomial are exact in funcgrad but not JAX's draws: docs/random.md)


# --- Programs for features landed late (sharding, sparse, checkify, typed keys, PINN,
# --- Rotation, lax.linalg QR, L-BFGS). JAX's numbers are recorded with 4 host devices
# --- (XLA_FLAGS=--xla_force_host_platform_device_count=4, set by the generator); funcgrad
# --- lists its one device 4 times in the mesh, which is how those JAX tests read here.

def _mesh_devices(jax, n):
    return np.array((jax.local_devices() * n)[:n])


def p_shard_map_data_parallel(jax, jnp, lax, **k):
    P = jax.sharding.PartitionSpec
    mesh = jax.sharding.Mesh(_mesh_devices(jax, 4), ('data',))
    rng = np.random.RandomState(1)
    X = rng.randn(16, 3)
    Y = X @ np.array([1.0, -2.0, 0.5]) + 0.1
    rows = jax.sharding.NamedSharding(mesh, P('data'))
    xs = jax.device_put(X, rows)
    ys = jax.device_put(Y, rows)
    params = {'w': jnp.zeros(3), 'b': jnp.zeros(())}

    def loss(p, x, y):
        return jnp.mean((x @ p['w'] + p['b'] - y) ** 2)

    @jax.jit
    def step(p, x, y):
        def local(p, x, y):
            l, g = jax.value_and_grad(loss)(p, x, y)
            return lax.pmean(l, 'data'), lax.pmean(g, 'data')
        # check_vma=False: the classic semantics (the per-shard gradient of the replicated
        # p, averaged by pmean); with the default check_vma=True, JAX and funcgrad psum that
        # gradient by themselves (the transpose of the implicit pvary; test_shard_map.py)
        l, g = jax.shard_map(local, mesh=mesh, in_specs=(P(), P('data'), P('data')),
                             out_specs=(P(), P()), check_vma=False)(p, x, y)
        return l, jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

    losses = []
    for _ in range(6):
        l, params = step(params, xs, ys)
        losses.append(l)
    shard_shape = rows.shard_shape(X.shape)  # (funcgrad's NumPy arrays have no .sharding)
    per_device = jax.shard_map(lambda x: jnp.sum(x, keepdims=True)[None], mesh=mesh,
                               in_specs=P('data'), out_specs=P('data'))(xs)
    return losses, params, tuple(shard_shape), per_device


def p_shard_map_collectives(jax, jnp, lax, **k):
    P = jax.sharding.PartitionSpec
    mesh = jax.sharding.Mesh(_mesh_devices(jax, 4).reshape(2, 2), ('data', 'model'))
    x = jnp.arange(16.0).reshape(4, 4)
    w = jnp.linspace(-1.0, 1.0, 16).reshape(4, 4)

    # Megatron-style tensor parallelism: rows of x split over 'data', the contraction over
    # 'model', the partial products summed with psum
    def matmul(x, w):
        return lax.psum(x @ w, 'model')
    y = jax.jit(jax.shard_map(matmul, mesh=mesh, in_specs=(P('data', 'model'), P('model', None)),
                              out_specs=P('data', None)))(x, w)

    def collectives(x):
        idx = lax.axis_index('model')
        g = lax.all_gather(x, 'model')
        gt = lax.all_gather(x, 'model', axis=1, tiled=True)
        s = lax.psum_scatter(x, 'model', scatter_dimension=1, tiled=True)
        r = lax.ppermute(x, 'data', perm=[(0, 1), (1, 0)])
        m = lax.pmax(x, ('data', 'model'))
        return (x * idx, g.sum(0), gt, s, r, m)
    outs = jax.shard_map(collectives, mesh=mesh, in_specs=P('data', 'model'),
                         out_specs=(P('data', 'model'), P('data', 'model'), P('data', None),
                                    P('data', 'model'), P('data', 'model'), P('data', 'model')),
                         check_vma=False)(x)
    grad = jax.grad(lambda w: jnp.sum(jax.shard_map(
        matmul, mesh=mesh, in_specs=(P('data', 'model'), P('model', None)),
        out_specs=P('data', None))(x, w) ** 2))(w)
    return y, outs, grad


def p_sharded_jit_training(jax, jnp, random, **k):
    P = jax.sharding.PartitionSpec
    NS = jax.sharding.NamedSharding
    mesh = jax.sharding.Mesh(_mesh_devices(jax, 4).reshape(2, 2), ('batch', 'model'))
    key = random.key(0)
    k1, k2, k3 = random.split(key, 3)
    params = {'w1': random.normal(k1, (3, 8)) * 0.5, 'w2': random.normal(k2, (8, 1)) * 0.5}
    layout = {'w1': NS(mesh, P(None, 'model')), 'w2': NS(mesh, P('model', None))}
    params = jax.device_put(params, layout)
    x = random.normal(k3, (8, 3))
    y = jnp.sin(x.sum(1, keepdims=True))
    x, y = jax.device_put((x, y), NS(mesh, P('batch')))

    def loss(p, x, y):
        h = jnp.tanh(x @ p['w1'])
        h = jax.lax.with_sharding_constraint(h, NS(mesh, P('batch', 'model')))
        return jnp.mean((h @ p['w2'] - y) ** 2)

    @partial(jax.jit, donate_argnums=0)
    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - 0.2 * b, p, g), l
    losses = []
    for _ in range(5):
        params, l = step(params, x, y)
        losses.append(l)
    specs = {k: tuple(v.spec) for k, v in layout.items()}
    return losses, params, specs


def p_bcoo_gcn(jax, jnp, random, **k):
    sparse = jax.experimental.sparse
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [1, 3]])
    n = 5
    A = np.zeros((n, n))
    A[edges[:, 0], edges[:, 1]] = 1.0
    A = A + A.T + np.eye(n)
    d = A.sum(1)
    A_hat = sparse.BCOO.fromdense(jax.device_put(A / np.sqrt(np.outer(d, d))))
    k1, k2, k3 = random.split(random.key(3), 3)
    X = random.normal(k1, (n, 4))
    params = [random.normal(k2, (4, 8)) * 0.3, random.normal(k3, (8, 2)) * 0.3]
    labels = jnp.array([0, 1, 0, 1, 1])

    def gcn(params, A, X):
        h = jax.nn.relu(A @ (X @ params[0]))
        return A @ (h @ params[1])

    def loss(params):
        logits = gcn(params, A_hat, X)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1))

    losses = []
    for _ in range(5):
        l, g = jax.jit(jax.value_and_grad(loss))(params)
        params = [p - 0.5 * gp for p, gp in zip(params, g)]
        losses.append(l)
    # gradient with respect to the stored edge weights (the BCOO's data)
    def edge_loss(data):
        M = sparse.BCOO((data, A_hat.indices), shape=A_hat.shape)
        return jnp.sum((M @ X) ** 2)
    g_data = jax.grad(edge_loss)(A_hat.data)
    dense = A_hat.todense()
    At = A_hat.T
    rows = sparse.bcoo_reduce_sum(A_hat, axes=(1,)).todense()
    return losses, params, g_data, A_hat.nse, dense, At.todense(), rows, (A_hat * 2.0).todense()


def p_sparse_cg_solve(jax, jnp, jsp, **k):
    sparse = jax.experimental.sparse
    n = 6
    main = 4.0 * np.ones(n)
    off = -1.0 * np.ones(n - 1)
    A = np.diag(main) + np.diag(off, 1) + np.diag(off, -1)
    A_sp = sparse.BCOO.fromdense(jax.device_put(A))
    b = jnp.linspace(1.0, 2.0, n)
    x, info = jsp.sparse.linalg.cg(lambda v: A_sp @ v, b, tol=1e-12)
    x2, _ = jsp.sparse.linalg.cg(A_sp, b, tol=1e-12)
    x3, _ = jsp.sparse.linalg.gmres(lambda v: A_sp @ v, b, tol=1e-12)
    # differentiate through the solve (implicit: the adjoint solve)
    g = jax.grad(lambda b: jnp.sum(jsp.sparse.linalg.cg(lambda v: A_sp @ v, b, tol=1e-12)[0] ** 2))(b)
    xb, _ = jax.vmap(lambda b: jsp.sparse.linalg.cg(lambda v: A_sp @ v, b, tol=1e-12))(
        jnp.stack([b, 2 * b]))
    return x, info, x2, x3, g, xb


def p_checkify_errors(jax, jnp, **k):
    checkify = jax.experimental.checkify

    def f(x, i):
        checkify.check(x[0] > 0, "x[0] must be positive, got {}", x[0])
        y = jnp.log(x)
        return y[i]

    checked = checkify.checkify(f, errors=checkify.user_checks)
    err, out = checked(jnp.array([1.0, 2.0]), 1)
    ok = err.get() is None
    err2, _ = jax.jit(checked)(jnp.array([-1.0, 2.0]), 0)
    msg2 = err2.get().split(' (')[0]
    all_checked = checkify.checkify(f, errors=checkify.all_checks)
    err3, _ = all_checked(jnp.array([1.0, 2.0]), 5)
    err4, _ = checkify.checkify(lambda x: jnp.sin(x) / x * jnp.inf,
                                errors=checkify.float_checks)(jnp.array([0.0, 1.0]))
    err5, out5 = jax.vmap(checked, in_axes=(0, None))(jnp.array([[1.0, 2.0], [-1.0, 3.0]]), 1)
    err6, _ = checkify.checkify(lambda x, y: x // y, errors=checkify.div_checks)(
        jnp.array([4, 5]), jnp.array([2, 0]))
    return (ok, out, msg2, err3.get() is not None, err4.get() is not None, out5,
            err5.get() is not None, err6.get() is not None)


def p_typed_key_training(jax, jnp, random, lax, **k):
    key = random.key(42)
    is_key = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    key, init_key = random.split(key)
    params = {'w': random.normal(init_key, (4, 1)), 'b': jnp.zeros(1)}
    data_key = random.fold_in(key, 7)
    X = random.normal(data_key, (32, 4))
    Y = X @ jnp.array([[1.0], [-1.0], [0.5], [2.0]])

    def loss(p, x, y, key):
        keep = random.bernoulli(key, 0.9, x.shape)
        x = jnp.where(keep, x / 0.9, 0.0)
        return jnp.mean((x @ p['w'] + p['b'] - y) ** 2)

    def body(carry, idx):
        p, key = carry
        key, sub = random.split(key)
        perm = random.permutation(random.fold_in(sub, idx), 32)[:8]
        l, g = jax.value_and_grad(loss)(p, jnp.take(X, perm, axis=0), jnp.take(Y, perm, axis=0), sub)
        p = jax.tree.map(lambda a, b: a - 0.05 * b, p, g)
        return (p, key), l

    (params, key), losses = lax.scan(body, (params, key), jnp.arange(10))
    keys = random.split(key, 4)
    per_key = jax.vmap(lambda k: random.uniform(k, (2,)))(keys)
    data = random.key_data(keys)
    rewrapped = random.wrap_key_data(data)
    same = random.uniform(rewrapped[1], (2,))
    return (is_key, params, losses, per_key, data, same, keys.shape,
            random.key_data(jax.jit(lambda k: random.split(k)[1])(key)))


def p_pinn_poisson(jax, jnp, random, **k):
    # -Δu = f on [0,1]^2 with u = sin(pi x) sin(pi y); the Laplacian as JAX users write it
    # (the Hessian trace) or with funcgrad's jax.laplacian where it exists
    def laplacian(f):
        if hasattr(jax, 'laplacian'):
            return jax.laplacian(f)
        return lambda x: jnp.trace(jax.hessian(f)(x))

    k1, k2, k3 = random.split(random.key(0), 3)
    sizes = [2, 16, 16, 1]
    keys = random.split(k1, len(sizes) - 1)
    params = [(random.normal(kk, (m, n)) / jnp.sqrt(m), jnp.zeros(n))
              for kk, m, n in zip(keys, sizes[:-1], sizes[1:])]

    def u(params, x):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return (h @ w + b)[0] * x[0] * (1 - x[0]) * x[1] * (1 - x[1])

    def f(x):
        return 2 * jnp.pi ** 2 * jnp.sin(jnp.pi * x[0]) * jnp.sin(jnp.pi * x[1])

    pts = random.uniform(k2, (24, 2))

    def loss(params):
        res = jax.vmap(lambda x: -laplacian(lambda x: u(params, x))(x) - f(x))(pts)
        return jnp.mean(res ** 2)

    step = jax.jit(jax.value_and_grad(loss))
    losses = []
    for _ in range(4):
        l, g = step(params)
        params = jax.tree.map(lambda p, gp: p - 1e-3 * gp, params, g)
        losses.append(l)
    lap0 = laplacian(lambda x: u(params, x))(pts[0])
    return losses, params, lap0


def p_rotation_kinematics(jax, jnp, jsp, **k):
    R = jsp.spatial.transform.Rotation
    Slerp = jsp.spatial.transform.Slerp
    r1 = R.from_euler('xyz', jnp.array([0.1, -0.4, 0.7]))
    r2 = R.from_rotvec(jnp.array([0.3, 0.2, -0.5]))
    v = jnp.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    r12 = r1 * r2
    out = (r12.apply(v), r12.as_quat(), r12.as_matrix(), r12.as_rotvec(), r12.magnitude(),
           r1.inv().as_euler('zyx'), r2.as_euler('XYZ'), R.from_matrix(r12.as_matrix()).as_quat(),
           r1.apply(v, inverse=True), R.from_quat(jnp.array([0.0, 0.0, 0.0, 1.0])).as_rotvec(),
           r1.as_mrp())
    # the gradient of a pose-alignment loss through from_rotvec / apply
    target = r12.apply(v)
    g = jax.grad(lambda w: jnp.sum((R.from_rotvec(w).apply(v) - target) ** 2))(
        jnp.array([0.1, 0.1, 0.1]))
    key_rots = R.from_rotvec(jnp.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
    s = Slerp.init(jnp.array([0.0, 1.0, 2.0]), key_rots)
    interp = s(jnp.array([0.25, 1.5])).as_rotvec()
    return out, g, interp


def p_lax_linalg_qr_family(jax, jnp, lax, jsp, **k):
    rng = np.random.RandomState(4)
    A = jax.device_put(rng.randn(5, 3))
    C = jax.device_put(rng.randn(5, 2))
    q, r = lax.linalg.qr(A, full_matrices=False)
    q_full, r_full = lax.linalg.qr(A, full_matrices=True)
    qp, rp, piv = lax.linalg.qr(A, pivoting=True, full_matrices=False)
    Q2, R2, P2 = jsp.linalg.qr(A, pivoting=True, mode='economic')
    # geqrf-style factors: Householder reflectors and taus, as users of ormqr hold them
    h, taus = jnp.linalg.qr(A, mode='raw')
    hh = h.T
    Qh = lax.linalg.householder_product(hh, taus)
    QtC = lax.linalg.ormqr(hh, taus, C, left=True, transpose=True)
    CQ = lax.linalg.ormqr(hh, taus, C.T, left=False, transpose=False)
    # least squares through QR
    b = jax.device_put(rng.randn(5))
    x = jsp.linalg.solve_triangular(r, q.T @ b)
    g = jax.grad(lambda A: jnp.sum(lax.linalg.qr(A, full_matrices=False)[1] ** 2))(A)
    return (q, r, q_full, r_full, qp, rp, piv, R2, P2, Qh, QtC, CQ, x, g,
            jnp.abs(jnp.diag(rp)))


def p_lbfgs_rosenbrock(jax, jnp, jsp, **k):
    def rosen(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    # (a start where JAX's line search does not fail on a reversed zoom bracket,
    # jax-ml/jax#40228, which funcgrad's never does)
    x0 = jnp.array([0.9, 0.8, 0.7, 0.5])
    res = jsp.optimize.minimize(rosen, x0, method='l-bfgs-experimental-do-not-rely-on-this',
                                options={'maxiter': 200})
    res_b = jsp.optimize.minimize(rosen, x0, method='BFGS')  # (with tol=1e-10 JAX's line
    # search stops a step early on the reversed-bracket failure, jax-ml/jax#40228)
    # fit logistic regression with L-BFGS, under jit, and args=
    rng = np.random.RandomState(0)
    X = jax.device_put(rng.randn(20, 3))
    y = jax.device_put((rng.rand(20) > 0.5).astype(np.float64))

    def nll(w, X, y):
        z = X @ w
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.01 * jnp.sum(w ** 2)

    fit = jax.jit(lambda X, y: jsp.optimize.minimize(
        nll, jnp.zeros(3), args=(X, y), method='l-bfgs-experimental-do-not-rely-on-this'))
    r2 = fit(X, y)
    return (res.x, res.fun, res.success, res.nit, res_b.x, r2.x, r2.fun, r2.success, r2.jac)


def p_sparsify_bcoo(jax, jnp, random, **k):
    sparse = jax.experimental.sparse
    rng = np.random.RandomState(7)
    M = rng.randn(4, 5) * (rng.rand(4, 5) > 0.5)
    A = sparse.BCOO.fromdense(jax.device_put(M))
    v = jnp.linspace(-1.0, 1.0, 5)

    @sparse.sparsify
    def f(A, v):
        return jnp.dot(A, v), (A * 2.0).sum(0), jnp.sum(A.T @ jnp.ones(4))
    dense_out = f(A, v)
    out = (dense_out[0], dense_out[1].todense(), dense_out[2])
    # (batched BCOO, fromdense(..., n_batch=1), is not in funcgrad: it raises a clear error)
    bv = jax.vmap(lambda v: A @ v)(jnp.stack([v, -v]))
    g = jax.grad(lambda d: jnp.sum(sparse.BCOO((d, A.indices), shape=A.shape) @ v))(A.data)
    eye = sparse.eye(3).todense()
    return out, bv, g, eye


def p_checkify_grad_and_nan(jax, jnp, lax, **k):
    checkify = jax.experimental.checkify

    def loss(w, x):
        checkify.check(jnp.all(x > -10), "x out of range")
        return jnp.sum(jnp.log(w * x))

    g_checked = checkify.checkify(jax.grad(loss), errors=checkify.float_checks)
    err, g = g_checked(jnp.array([1.0, 2.0]), jnp.array([0.5, 1.5]))
    err_nan, _ = g_checked(jnp.array([1.0, -2.0]), jnp.array([0.5, 1.5]))

    def body(i, x):
        return x / (x - 3.0 + i)
    loop = checkify.checkify(lambda x: lax.fori_loop(0, 3, body, x), errors=checkify.float_checks)
    err_loop, y = jax.jit(loop)(jnp.array([1.0, 2.0]))
    err_user, _ = checkify.checkify(loss)(jnp.array([1.0, 1.0]), jnp.array([-20.0, 1.0]))
    return (err.get() is None, g, err_nan.get() is not None, err_loop.get() is not None, y,
            err_user.get().split(' (')[0])


def p_kalman_filter(jax, jnp, lax, jsp, **k):
    # a constant-velocity Kalman filter as a scan, with Cholesky-based updates
    dt = 0.1
    F = jnp.array([[1.0, dt], [0.0, 1.0]])
    H = jnp.array([[1.0, 0.0]])
    Q = 0.01 * jnp.eye(2)
    R = jnp.array([[0.25]])
    zs = jnp.sin(jnp.linspace(0.0, 2.0, 12))[:, None]

    def step(carry, z):
        m, P = carry
        m = F @ m
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        L = jnp.linalg.cholesky(S)
        K = jsp.linalg.cho_solve((L, True), H @ P).T
        m = m + K @ (z - H @ m)
        P = (jnp.eye(2) - K @ H) @ P
        ll = jsp.stats.multivariate_normal.logpdf(z, H @ m, S)
        return (m, P), (m, ll)

    (m, P), (ms, lls) = lax.scan(step, (jnp.zeros(2), jnp.eye(2)), zs)
    nll = lambda q: -lax.scan(lambda c, z: step(c, z), (jnp.zeros(2), q * jnp.eye(2)), zs)[1][1].sum()
    g = jax.grad(nll)(1.0)
    T = lax.linalg.tridiagonal_solve(jnp.array([0.0, 1.0, 1.0]), jnp.array([4.0, 4.0, 4.0]),
                                     jnp.array([1.0, 1.0, 0.0]), jnp.ones((3, 1)))
    return m, P, ms, lls, g, T


def p_dataclass_state_remat_policies(jax, jnp, random, lax, **k):
    import dataclasses

    @partial(jax.tree_util.register_dataclass, data_fields=['params', 'key', 'step'],
             meta_fields=['lr'])
    @dataclasses.dataclass
    class State:
        params: dict
        key: object
        step: object
        lr: float

    k1, k2 = random.split(random.key(11))
    state = State({'w': random.normal(k1, (3, 3)) * 0.5, 'b': jnp.zeros(3)}, k2,
                  jnp.array(0), 0.1)
    x = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)
    checkpoint_name = jax.ad_checkpoint.checkpoint_name

    def layer(p, h):
        z = checkpoint_name(h @ p['w'] + p['b'], 'pre')
        return jnp.tanh(z)

    policies = [jax.checkpoint_policies.save_only_these_names('pre'),
                jax.checkpoint_policies.nothing_saveable,
                jax.checkpoint_policies.dots_with_no_batch_dims_saveable]

    def loss(p, key, policy):
        noise = random.normal(key, x.shape) * 0.01
        h = x + noise
        for _ in range(3):
            h = jax.checkpoint(layer, policy=policy)(p, h)
        return jnp.sum(h ** 2)

    @partial(jax.jit, static_argnums=1)
    def train_step(state, i):
        key, sub = random.split(state.key)
        l, g = jax.value_and_grad(loss)(state.params, sub, policies[i])
        params = jax.tree.map(lambda a, b: a - state.lr * b, state.params, g)
        return dataclasses.replace(state, params=params, key=key, step=state.step + 1), l

    losses = []
    for i in range(3):
        state, l = train_step(state, i)
        losses.append(l)
    leaves = jax.tree_util.tree_leaves(state)
    return losses, state.params, state.step, len(leaves), random.key_data(state.key)


def p_neural_ode_odeint(jax, jnp, lax, **k):
    # jax.experimental.ode.odeint (adaptive Dormand-Prince, adjoint gradients): parameters as
    # extra args, a closure over a traced matrix, hmax, jit/vmap of the gradient, the
    # gradient with respect to the output times and a pytree state
    odeint = jax.experimental.ode.odeint

    def lotka(y, t, a, b):
        return jnp.stack([a * y[0] - b * y[0] * y[1], -y[1] + b * y[0] * y[1]])

    ts = jnp.linspace(0., 2., 5)
    y0 = jnp.array([1.0, 0.5])

    def loss(a, b):
        return jnp.sum(odeint(lotka, y0, ts, a, b, rtol=1e-6, atol=1e-8, hmax=0.3) ** 2)

    g = jax.jit(jax.grad(loss, (0, 1)))(1.1, 0.4)
    gv = jax.vmap(jax.grad(loss), (0, None))(jnp.array([0.9, 1.2]), 0.4)
    g_ts = jax.grad(lambda ts: odeint(lambda y, t: -0.5 * y * jnp.cos(t), y0, ts).sum())(
        jnp.array([0.0, 0.5, 1.5]))

    def closure_loss(w):
        return odeint(lambda y, t: w @ y, jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0]))[-1, 0]

    g_w = jax.grad(closure_loss)(jnp.array([[0.0, 1.0], [-1.0, -0.1]]))

    def oscillator(state, t, k):
        return {"x": state["v"], "v": -k * state["x"]}

    def x_end(k):
        s = odeint(oscillator, {"x": jnp.float64(1.0), "v": jnp.float64(0.0)},
                   jnp.array([0., 0.5, 1.0]), k, rtol=1e-6, atol=1e-6)
        return s["x"][-1]

    return g, gv, g_ts, g_w, jax.value_and_grad(x_end)(jnp.float64(2.0))


def p_gp_hyperparameter_fit(jax, jnp, jsp, **k):
    # Gaussian process regression: the negative log marginal likelihood through
    # cho_factor/cho_solve, a few jitted gradient steps on log hyperparameters (a dict),
    # then the predictive mean and variance (cholesky, solve_triangular) and the Hessian
    X = jnp.linspace(-1.5, 1.5, 12)[:, None]
    Y = jnp.sin(3 * X[:, 0]) + 0.1 * jnp.cos(17 * X[:, 0])

    def kernel(p, a, b):
        d = (a[:, None, 0] - b[None, :, 0]) ** 2
        return jnp.exp(p["log_amp"]) * jnp.exp(-0.5 * d / jnp.exp(2 * p["log_ls"]))

    def nll(p):
        K = kernel(p, X, X) + (jnp.exp(p["log_noise"]) + 1e-6) * jnp.eye(12)
        c, low = jsp.linalg.cho_factor(K, lower=True)
        alpha = jsp.linalg.cho_solve((c, low), Y)
        return 0.5 * Y @ alpha + jnp.sum(jnp.log(jnp.diag(c))) + 6 * jnp.log(2 * jnp.pi)

    p = {"log_ls": 0.0, "log_amp": 0.1, "log_noise": -2.0}
    step = jax.jit(jax.value_and_grad(nll))
    losses = []
    for _ in range(4):
        v, g = step(p)
        p = jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g)
        losses.append(v)
    Xs = jnp.linspace(-2, 2, 5)[:, None]
    L = jsp.linalg.cholesky(kernel(p, X, X) + jnp.exp(p["log_noise"]) * jnp.eye(12), lower=True)
    mu = kernel(p, Xs, X) @ jsp.linalg.cho_solve((L, True), Y)
    v = jsp.linalg.solve_triangular(L, kernel(p, X, Xs), lower=True)
    var = jnp.diag(kernel(p, Xs, Xs)) - jnp.sum(v ** 2, 0)
    return losses, p, mu, var, jax.hessian(nll)(p)


def p_hamiltonian_leapfrog_and_hnn(jax, jnp, lax, **k):
    # leapfrog integration of H(q, p) under lax.scan with grad inside the body (and the
    # gradient of the trajectory's end with respect to q0), then a Hamiltonian neural network:
    # the learned vector field is the symplectic gradient of an MLP, trained by
    # grad-of-(vmap of grad)
    def H(q, p):
        return 0.5 * jnp.sum(p ** 2) + 0.5 * jnp.sum(q ** 2) + 0.1 * jnp.sum(q ** 4)

    def step(state, _):
        q, p = state
        p = p - 0.05 * jax.grad(H, 0)(q, p)
        q = q + 0.1 * jax.grad(H, 1)(q, p)
        p = p - 0.05 * jax.grad(H, 0)(q, p)
        return (q, p), H(q, p)

    q0, p0 = jnp.array([1.0, 0.5]), jnp.array([0.0, 0.2])
    (q, p), energies = lax.scan(step, (q0, p0), None, length=20)
    g_q0 = jax.grad(lambda q0: lax.scan(step, (q0, p0), None, length=20)[0][0].sum())(q0)

    W1 = jnp.sin(jnp.arange(32.0)).reshape(4, 8)
    W2 = jnp.cos(jnp.arange(8.0))
    xs = jnp.sin(jnp.arange(24.0) * 0.7).reshape(6, 4)
    target = jnp.cos(jnp.arange(24.0) * 0.3).reshape(6, 4)

    def field(params, x):
        dH = jax.grad(lambda x: jnp.tanh(x @ params[0]) @ params[1])(x)
        return jnp.concatenate([dH[2:], -dH[:2]])

    def loss(params):
        return jnp.mean((jax.vmap(field, (None, 0))(params, xs) - target) ** 2)

    return q, p, energies, g_q0, jax.value_and_grad(loss)((W1, W2)), jax.jit(jax.grad(loss))((W1, W2))


def p_deq_fixed_point_custom_vjp(jax, jnp, lax, **k):
    # the deep-equilibrium layer of the implicit-layers tutorial: a while_loop fixed-point
    # solver behind custom_vjp (nondiff_argnums for the layer function), whose backward pass
    # solves the adjoint fixed point with the same solver; grads eager, under jit and vmap
    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, params, z0):
        def cond(c):
            z_prev, z = c
            return jnp.linalg.norm(z_prev - z) > 1e-10
        def body(c):
            return c[1], f(params, c[1])
        return lax.while_loop(cond, body, (z0, f(params, z0)))[1]

    def fp_fwd(f, params, z0):
        z = fixed_point(f, params, z0)
        return z, (params, z)

    def fp_bwd(f, res, z_bar):
        params, z = res
        _, vjp_a = jax.vjp(lambda p: f(p, z), params)
        _, vjp_z = jax.vjp(lambda zz: f(params, zz), z)
        u = fixed_point(lambda _, u: vjp_z(u)[0] + z_bar, None, z_bar)
        return vjp_a(u)[0], jnp.zeros_like(z)

    fixed_point.defvjp(fp_fwd, fp_bwd)

    def layer(p, z):
        W, x = p
        return jnp.tanh(W @ z + x)

    def deq(W, x):
        return jnp.sum(fixed_point(layer, (W, x), jnp.zeros(5)) ** 2)

    W = jnp.sin(jnp.arange(25.0)).reshape(5, 5) * 0.3
    x = jnp.cos(jnp.arange(5.0))
    xs = jnp.stack([x, 2 * x, -x])
    return (deq(W, x), jax.grad(deq, argnums=(0, 1))(W, x), jax.jit(jax.grad(deq))(W, x),
            jax.vmap(jax.grad(deq, argnums=1), (None, 0))(W, xs))


def p_hutchinson_trace_and_laplacians(jax, jnp, random, **k):
    # the Hessian's trace three ways: Hutchinson's estimator with Rademacher probes through
    # jvp-of-grad (vmapped, jitted), the Laplacian by forward-over-reverse over the basis, and
    # Taylor mode (jax.experimental.jet's second coefficient along each basis vector)
    jet = jax.experimental.jet.jet

    def f(x):
        return jnp.sum(jnp.sin(x) * jnp.roll(x, 1) ** 2) + jnp.sum(x ** 4) / 4 + jnp.exp(jnp.mean(jnp.tanh(x)))

    x = jnp.linspace(-1.0, 1.5, 6)
    hvp = lambda v: jax.jvp(jax.grad(f), (x,), (v,))[1]
    probes = random.rademacher(random.PRNGKey(0), (300, 6), dtype=jnp.float64)
    hutchinson = jax.jit(lambda V: jnp.mean(jax.vmap(lambda v: v @ hvp(v))(V)))(probes)
    fwd_rev = jnp.sum(jax.vmap(lambda e: hvp(e) @ e)(jnp.eye(6)))
    taylor = jnp.sum(jax.vmap(lambda e: jet(f, (x,), ((e, jnp.zeros(6)),))[1][1])(jnp.eye(6)))
    return hutchinson, fwd_rev, taylor, jnp.trace(jax.hessian(f)(x))


def p_ising_checkerboard_metropolis(jax, jnp, lax, random, **k):
    # a 2-D Ising model sampled by checkerboard Metropolis sweeps under lax.scan, the key
    # split every sweep, jitted and vmapped over inverse temperatures
    L = 8

    def energy(s):
        return -jnp.sum(s * (jnp.roll(s, 1, 0) + jnp.roll(s, 1, 1)))

    ii, jj = jnp.meshgrid(jnp.arange(L), jnp.arange(L), indexing="ij")

    def sweep(carry, _):
        s, key, beta = carry
        key, k1, k2 = random.split(key, 3)
        for parity, kk in ((0, k1), (1, k2)):
            nb = jnp.roll(s, 1, 0) + jnp.roll(s, -1, 0) + jnp.roll(s, 1, 1) + jnp.roll(s, -1, 1)
            accept = random.uniform(kk, s.shape) < jnp.exp(-beta * 2 * s * nb)
            s = jnp.where((((ii + jj) % 2) == parity) & accept, -s, s)
        return (s, key, beta), (energy(s), jnp.mean(s))

    def run(key, beta):
        s0 = jnp.where(random.bernoulli(key, 0.5, (L, L)), 1.0, -1.0)
        (s, _, _), (E, M) = lax.scan(sweep, (s0, key, beta), None, length=40)
        return s, E, M

    s, E, M = jax.jit(run)(random.PRNGKey(0), 0.6)
    Es = jax.vmap(lambda b: run(random.PRNGKey(1), b)[1][-10:].mean())(jnp.array([0.2, 0.5, 1.0]))
    return s, E, M, Es
