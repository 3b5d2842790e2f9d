"""A/B: the old (main at branch point) nn/lax conv modules vs this worktree's, CPU time,
interleaved rounds, same process. Usage: python ab.py [case ...]"""
import os, sys, time, statistics
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
import funcgrad_nn._convolution as new_nn
import funcgrad.lax._convolution as new_lc
import funcgrad.lax._windows as new_lw
import old_nnconv as old_nn
import old_laxconv as old_lc
import old_laxwin as old_lw

class _R:
    g = np.random.default_rng(0)
def f32(*s): return _R.g.standard_normal(s).astype(np.float32)

def cnn(F, jit):
    x = f32(64, 1, 8, 8); 
    p = dict(w1=f32(16, 1, 3, 3) * .3, b1=f32(16) * .1, w2=f32(32, 16, 3, 3) * .1, b2=f32(32) * .1,
             w3=f32(10, 128) * .1)
    def loss(p, x):
        h = F.max_pool2d(fnp.maximum(F.conv2d(x, p["w1"], p["b1"], padding=1), 0), 2)
        h = F.max_pool2d(fnp.maximum(F.conv2d(h, p["w2"], p["b2"], padding=1), 0), 2)
        return fnp.sum((fnp.reshape(h, (64, -1)) @ p["w3"].T) ** 2)
    g = funcgrad.value_and_grad(loss)
    if jit: g = funcgrad.jit(g)
    return lambda: g(p, x)

def decoder(F, jit):
    z = f32(32, 32, 4, 4)
    p = dict(w1=f32(32, 16, 4, 4) * .1, b1=f32(16), w2=f32(16, 1, 4, 4) * .1, b2=f32(1))
    def loss(p, z):
        h = fnp.maximum(F.conv_transpose2d(z, p["w1"], p["b1"], stride=2, padding=1), 0)
        return fnp.sum(F.conv_transpose2d(h, p["w2"], p["b2"], stride=2, padding=1) ** 2)
    g = funcgrad.value_and_grad(loss)
    if jit: g = funcgrad.jit(g)
    return lambda: g(p, z)

def avgpool(F, jit):
    x = f32(64, 16, 8, 8)
    def loss(x):
        return fnp.sum(F.avg_pool2d(x, 3, 2, 1, count_include_pad=False) ** 2) + \
            fnp.sum(F.avg_pool2d(x, 2) ** 2)
    g = funcgrad.grad(loss)
    if jit: g = funcgrad.jit(g)
    return lambda: g(x)

def grouped(F, jit):
    x = f32(16, 32, 16, 16); w = f32(32, 8, 3, 3); wt = f32(32, 8, 3, 3)
    def loss(x, w, wt):
        return fnp.sum(F.conv2d(x, w, padding=1, groups=4) ** 2) + \
            fnp.sum(F.conv_transpose2d(x, wt, stride=2, padding=1, groups=4) ** 2)
    g = funcgrad.grad(loss, argnums=(0, 1, 2))
    if jit: g = funcgrad.jit(g)
    return lambda: g(x, w, wt)

def maxpool_idx(F, jit):
    x = f32(32, 16, 15, 15)
    def f(x):
        v, i = F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
        return fnp.sum(v ** 2)
    g = funcgrad.grad(f)
    if jit: g = funcgrad.jit(g)
    return lambda: g(x)

class L:  # a lax module view
    def __init__(self, c, w): self.c, self.w = c, w

def lax_conv_nhwc(M, jit):
    x, w = f32(16, 32, 32, 32), f32(3, 3, 32, 64)
    f = lambda x, w: M.c.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    if jit: f = funcgrad.jit(f)
    return lambda: f(x, w)

def lax_conv_grad(M, jit):
    x, w = f32(16, 32, 32, 32), f32(64, 32, 3, 3); ct = f32(16, 64, 32, 32)
    g = funcgrad.grad(lambda x, w: fnp.sum(M.c.conv(x, w, (1, 1), "SAME") * ct), argnums=(0, 1))
    if jit: g = funcgrad.jit(g)
    return lambda: g(x, w)

def lax_convt(M, jit):
    x, w = f32(16, 16, 16, 64), f32(4, 4, 64, 32)
    f = lambda x, w: M.c.conv_transpose(x, w, (2, 2), "SAME")
    if jit: f = funcgrad.jit(f)
    return lambda: f(x, w)

def lax_convt_grad(M, jit):
    x, w = f32(16, 16, 16, 64), f32(4, 4, 32, 64)
    g = funcgrad.grad(lambda x, w: fnp.sum(M.c.conv_transpose(x, w, (2, 2), "SAME", transpose_kernel=True) ** 2), argnums=(0, 1))
    if jit: g = funcgrad.jit(g)
    return lambda: g(x, w)

def lax_maxpool(M, jit):
    x = f32(16, 32, 32, 32)
    f = lambda x: M.w.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    if jit: f = funcgrad.jit(f)
    return lambda: f(x)

def lax_maxpool_grad(M, jit):
    x = f32(16, 32, 32, 32)
    g = funcgrad.grad(lambda x: fnp.sum(M.w.reduce_window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") ** 2))
    if jit: g = funcgrad.jit(g)
    return lambda: g(x)

def lax_sumpool_grad(M, jit):
    x = f32(16, 32, 32, 32)
    g = funcgrad.grad(lambda x: fnp.sum(M.w.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") ** 2))
    if jit: g = funcgrad.jit(g)
    return lambda: g(x)

NN = {"cnn": cnn, "decoder": decoder, "avgpool": avgpool, "grouped": grouped, "maxpool_idx": maxpool_idx}
LAX = {"lax_conv_nhwc": lax_conv_nhwc, "lax_conv_grad": lax_conv_grad, "lax_convt": lax_convt,
       "lax_convt_grad": lax_convt_grad, "lax_maxpool": lax_maxpool, "lax_maxpool_grad": lax_maxpool_grad,
       "lax_sumpool_grad": lax_sumpool_grad}

def timeit(fn, budget=0.15):
    n, t0 = 0, time.process_time()
    while True:
        fn(); n += 1
        t = time.process_time() - t0
        if t > budget: return t / n

def run(name, rounds):
    for jit in (False, True):
        _R.g = np.random.default_rng(0)
        if name in NN:
            a = NN[name](old_nn, jit); _R.g = np.random.default_rng(0); b = NN[name](new_nn, jit)
        else:
            a = LAX[name](L(old_lc, old_lw), jit); _R.g = np.random.default_rng(0); b = LAX[name](L(new_lc, new_lw), jit)
        ra, rb = a(), b()
        for u, v in zip(funcgrad.tree_util.tree_leaves(ra), funcgrad.tree_util.tree_leaves(rb)):
            np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=2e-4, atol=2e-5 * float(np.abs(np.asarray(v)).max()) + 2e-4)
        for _ in range(2): a(); b()
        ta, tb = [], []
        for _ in range(rounds):
            ta.append(timeit(a)); tb.append(timeit(b))
        ratios = sorted(y / x for x, y in zip(ta, tb))
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 2 else [ratios[0], 0, ratios[-1]]
        print(f"{name:18s} {'jit  ' if jit else 'eager'} old {min(ta)*1e3:8.3f} ms  new {min(tb)*1e3:8.3f} ms  "
              f"new/old median {statistics.median(ratios):.3f} (IQR {q[0]:.3f}-{q[2]:.3f})", flush=True)

if __name__ == "__main__":
    names = sys.argv[1:] or list(NN) + list(LAX)
    rounds = int(os.environ.get("ROUNDS", "7"))
    for nm in names:
        run(nm, rounds)
