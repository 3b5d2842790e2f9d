import numpy as np, funcgrad, funcgrad.numpy as fnp
dbg = funcgrad.debug
def f(x):
    dbg.print("x: {}", x)
    y = fnp.sin(x)
    dbg.print("y: {y}", y=y)
    return fnp.sum(y)
xs = np.arange(3.)
print("-- vmap"); funcgrad.vmap(f)(xs)
print("-- jit(vmap)"); funcgrad.jit(funcgrad.vmap(f))(xs)
print("-- grad"); print(funcgrad.grad(f)(1.0))
print("-- jit grad"); print(funcgrad.jit(funcgrad.grad(f))(1.0))
print("-- grad grad"); print(funcgrad.grad(funcgrad.grad(f))(1.0))
print("-- jvp"); print(funcgrad.jvp(f, (1.0,), (1.0,)))
print("-- vmap grad"); print(funcgrad.vmap(funcgrad.grad(f))(xs))
print("-- scan")
def body(c, x):
    dbg.print("c={} x={}", c, x)
    return c + x, c
print(funcgrad.jit(lambda xs: funcgrad.lax.scan(body, 0.0, xs))(xs))
print("-- while")
print(funcgrad.jit(lambda n: funcgrad.lax.while_loop(lambda c: c < n, lambda c: (dbg.print("i={}", c), c + 1)[1], 0))(3))
print("-- cond")
print(funcgrad.jit(lambda x: funcgrad.lax.cond(x > 0, lambda x: (dbg.print("pos {}", x), x)[1], lambda x: (dbg.print("neg {}", x), -x)[1], x))(-2.0))
print("-- fmt spec"); funcgrad.jit(lambda x: dbg.print("{:.2f} {x:.3f}", x, x=x))(np.float64(1.23456))
print("-- ordered"); funcgrad.jit(lambda x: dbg.print("o {}", x, ordered=True))(1.0)
