"""Gradients taken inside ``shard_map`` bodies: one set of programs for JAX and funcgrad.

``tests/funcgrad/test_shard_map.py`` runs them on funcgrad and compares with JAX 0.10.2's
results, which ``python -m tests.funcgrad.shard_map_grad_cases`` (with JAX installed) prints:
a mesh of four forced host devices, one axis ``"i"``, ``in_specs=(P(), P("i"))``.
"""
import numpy as np

W = np.array([1.0, 2.0])
XS = np.arange(8.0).reshape(4, 2)


def _loss(jnp, w, x):
    return jnp.sum(jnp.sin(x @ w) ** 2)


def cases(jx, jnp, lax):
    """name -> (body, in_specs as strings, out_spec); args are (W, XS); 'i' has 4 shards."""
    L = lambda w, x: _loss(jnp, w, x)  # noqa: E731
    return {
        "varying_loss": lambda w, x: jx.grad(L)(w, x)[None],
        "varying_loss_plus_invariant": lambda w, x: jx.grad(
            lambda w: jnp.sum(x @ w) + jnp.sum(w ** 2))(w)[None],
        "psum_loss": lambda w, x: jx.grad(
            lambda w: lax.psum(jnp.sum(x @ w), "i") + jnp.sum(w ** 2))(w)[None],
        "pmean_loss": lambda w, x: jx.grad(lambda w: lax.pmean(L(w, x), "i"))(w)[None],
        "wrt_varying_psum_loss": lambda w, x: jx.grad(lambda x: lax.psum(jnp.sum(x @ w), "i"))(x),
        "wrt_varying_varying_loss": lambda w, x: jx.grad(
            lambda x: jnp.sum(x * lax.psum(x, "i")))(x),
        "invariant_only": lambda w, x: jx.grad(lambda w: jnp.sum(w ** 3))(w)[None],
        "all_gather": lambda w, x: jx.grad(lambda x: jnp.sum(lax.all_gather(x, "i") ** 2))(x),
        "all_gather_of_w": lambda w, x: jx.grad(
            lambda w: jnp.sum(lax.all_gather(w, "i") * x.sum()))(w)[None],
        "ppermute": lambda w, x: jx.grad(lambda w: jnp.sum(
            lax.ppermute(x * w, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]) ** 2))(w)[None],
        "psum_scatter": lambda w, x: jx.grad(lambda w: jnp.sum(
            lax.psum_scatter(jnp.outer(x[0], w).reshape(4), "i") ** 2))(w)[None],
        "vjp_of_psum": lambda w, x: jx.vjp(lambda w: lax.psum(x @ w, "i"), w)[1](
            jnp.ones(1))[0][None],
        "vjp_varying_ct": lambda w, x: jx.vjp(lambda w: x @ w, w)[1](x[:, 0])[0][None],
        "jvp": lambda w, x: jx.jvp(lambda w: jnp.sum(x @ w), (w,), (jnp.ones(2),))[1][None],
        "value_and_grad": lambda w, x: jx.value_and_grad(L)(w, x)[1][None],
        "argnums_both": lambda w, x: (lambda g: jnp.concatenate([g[0], g[1].ravel()]))(jx.grad(L, argnums=(0, 1))(w, x))[None],
        "jacrev": lambda w, x: jx.jacrev(lambda w: jnp.sin(x @ w))(w)[None],
        "hessian": lambda w, x: jx.hessian(L)(w, x)[None],
        "grad_of_grad": lambda w, x: jx.grad(
            lambda w: jnp.sum(jx.grad(L)(w, x) ** 2))(w)[None],
        "jit_in_body": lambda w, x: jx.jit(jx.grad(L))(w, x)[None],
        "scan_in_body": lambda w, x: lax.scan(
            lambda c, xr: (c + jx.grad(L)(w, xr[None]), None), jnp.zeros(2),
            x.reshape(1, 1, 2))[0][None],
        "fori_in_body": lambda w, x: lax.fori_loop(
            0, 2, lambda i, c: c - 0.1 * jx.grad(L)(c, x), w)[None],
        "cond_in_body": lambda w, x: lax.cond(True, lambda: jx.grad(L)(w, x), lambda: w)[None],
        "pcast_varying": lambda w, x: jx.grad(L)(lax.pcast(w, "i", to="varying"), x)[None],
        "pcast_inside_loss": lambda w, x: jx.grad(
            lambda w: L(lax.pcast(w, "i", to="varying"), x))(w)[None],
        "vmap_in_body": lambda w, x: jx.vmap(
            lambda xx: jx.grad(L)(w, xx[None]))(x),
    }


def run_all(jx, jnp, lax, mesh, P):
    out = {}
    for cv in (True, False):
        for name, body in cases(jx, jnp, lax).items():
            f = jx.shard_map(body, mesh=mesh, in_specs=(P(), P("i")), out_specs=P("i"),
                             check_vma=cv)
            out[(name, cv)] = np.asarray(f(W, XS)).round(8).tolist()
    return out


if __name__ == "__main__":  # the generator of the recorded values (needs JAX)
    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    jax.config.update("jax_enable_x64", True)
    mesh = Mesh(np.array(jax.devices()), ("i",))
    res = run_all(jax, jax.numpy, jax.lax, mesh, P)
    for k, v in res.items():
        print(f"    {k!r}: {np.asarray(v).tolist()!r},".replace("-0.0,", "0.0,"))
