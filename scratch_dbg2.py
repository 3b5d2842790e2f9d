import numpy as np, funcgrad, funcgrad.numpy as fnp
dbg = funcgrad.debug
def body(c, x):
    dbg.print("c={} x={}", c, x)
    return c * fnp.sin(x), c
def f(c0, xs):
    return funcgrad.lax.scan(body, c0, xs)[0]
xs = np.arange(1.0, 4.0)
print("-- grad scan"); print(funcgrad.grad(f)(1.0, xs))
print("-- jit grad scan"); print(funcgrad.jit(funcgrad.grad(f))(1.0, xs))
print("-- vmap scan"); print(funcgrad.vmap(f, in_axes=(0, None))(np.array([1.0, 2.0]), xs))
print("-- remat")
g = funcgrad.checkpoint(lambda x: (dbg.print("remat x={}", x), fnp.sin(x))[1]) if hasattr(funcgrad, "checkpoint") else None
print(funcgrad.grad(g)(1.0))
print("-- cond grad")
print(funcgrad.grad(lambda x: funcgrad.lax.cond(x > 0, lambda x: (dbg.print("pos {}", x), x * x)[1], lambda x: -x, x))(3.0))
print("-- while fwd jvp")
print(funcgrad.jvp(lambda x: funcgrad.lax.fori_loop(0, 2, lambda i, c: (dbg.print("i={} c={}", i, c), c * x)[1], x), (2.0,), (1.0,)))
