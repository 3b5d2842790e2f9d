"""funcgrad.scipy.spatial.transform (Rotation, Slerp) against scipy.spatial.transform
values and jax.scipy.spatial.transform gradients recorded in fixtures/spatial_transform.npz
(made by fixtures/make_spatial_transform_fixtures.py): every conversion, all 24 three-axis
Euler sequences (gimbal lock included), composition, apply, mean, Slerp; jit, vmap, grad
(finite at the identity); the errors."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
from funcgrad.scipy.spatial.transform import Rotation, Slerp

REF = dict(np.load(os.path.join(os.path.dirname(__file__), "fixtures", "spatial_transform.npz")))
SEQS = ["".join(p) for n in (1, 2, 3) for p in itertools.product("xyz", repeat=n)
        if all(p[i] != p[i + 1] for i in range(n - 1))]
SEQS += [s.upper() for s in SEQS]
TOL = {"rtol": 1e-9, "atol": 1e-9}


def _rot() -> Rotation:
    return Rotation.from_quat(dev(REF["quats"]))


def test_conversions_as_scipy():
    r = _rot()
    assert_allclose(r.as_matrix(), REF["as_matrix"], **TOL)
    assert_allclose(r.as_rotvec(), REF["as_rotvec"], **TOL)
    assert_allclose(r.as_rotvec(degrees=True), np.rad2deg(REF["as_rotvec"]), **TOL)
    assert_allclose(r.as_mrp(), REF["as_mrp"], **TOL)
    assert_allclose(r.magnitude(), REF["magnitude"], **TOL)
    assert_allclose(r.as_quat(canonical=True), REF["canonical"], **TOL)
    assert_allclose(r.as_quat(scalar_first=True), np.roll(REF["quats"], 1, axis=-1), **TOL)
    assert_allclose(r.inv().as_quat(), REF["quats"] * np.array([-1, -1, -1, 1.0]), **TOL)


def test_constructors_as_scipy():
    assert_allclose(Rotation.from_rotvec(dev(REF["rotvecs"])).as_quat(), REF["from_rotvec"],
                    **TOL)
    assert_allclose(Rotation.from_rotvec(dev(np.rad2deg(REF["rotvecs"])), degrees=True)
                    .as_quat(), REF["from_rotvec"], **TOL)
    assert_allclose(Rotation.from_mrp(dev(REF["as_mrp"])).as_quat(), REF["from_mrp"], **TOL)
    back = Rotation.from_matrix(dev(REF["as_matrix"])).as_quat(canonical=True)
    assert_allclose(back, REF["canonical"], **TOL)
    sf = Rotation.from_quat(dev(np.roll(REF["quats"], 1, axis=-1)), scalar_first=True)
    assert_allclose(sf.as_quat(), REF["quats"], **TOL)
    unnormalised = Rotation.from_quat(dev(np.array([0.0, 0.0, 3.0, 4.0])))
    assert_allclose(unnormalised.as_quat(), np.array([0.0, 0.0, 0.6, 0.8]), **TOL)


@pytest.mark.parametrize("seq", SEQS)
def test_euler_as_scipy(seq):
    angles = REF["angles"][:, :len(seq)]
    assert_allclose(Rotation.from_euler(seq, dev(angles)).as_quat(), REF[f"from_euler_{seq}"],
                    **TOL)
    deg = Rotation.from_euler(seq, dev(np.rad2deg(angles[0])), degrees=True)
    assert deg.single
    assert_allclose(deg.as_quat(), REF[f"from_euler_{seq}"][0], **TOL)
    if len(seq) == 3:
        # Gimbal-locked rows (the half turns) included: the third angle is 0, as SciPy.
        assert_allclose(_rot().as_euler(seq), REF[f"as_euler_{seq}"], rtol=1e-7, atol=1e-7)
        assert_allclose(_rot().as_euler(seq, degrees=True),
                        np.rad2deg(REF[f"as_euler_{seq}"]), rtol=1e-7, atol=1e-5)


def test_euler_shapes():
    assert Rotation.from_euler("z", 0.3).single
    assert Rotation.from_euler("z", dev(np.array([0.3]))).single  # (1,) is one rotation
    assert len(Rotation.from_euler("z", dev(np.array([[0.3], [0.4]])))) == 2
    stacked = Rotation.from_euler("xyz", dev(np.zeros((2, 5, 3))))
    assert stacked.quat.shape == (2, 5, 4)
    with pytest.raises(ValueError, match="last dimension"):
        Rotation.from_euler("z", dev(np.array([0.3, 0.4])))
    with pytest.raises(ValueError, match="consecutive"):
        Rotation.from_euler("xxy", dev(np.zeros(3)))
    with pytest.raises(ValueError, match="from"):
        Rotation.from_euler("xYz", dev(np.zeros(3)))
    with pytest.raises(ValueError, match="3 axes"):
        _rot().as_euler("xy")


def test_compose_apply_as_scipy():
    r = _rot()
    assert_allclose((r * r[::-1]).as_quat(), REF["compose"], **TOL)
    v = dev(REF["vectors"])
    assert_allclose(r.apply(v), REF["apply"], **TOL)
    assert_allclose(r.apply(v, inverse=True), REF["apply_inverse"], **TOL)
    # A single rotation against many vectors, many rotations against one vector.
    assert_allclose(r[2].apply(v), np.einsum("ij,nj->ni", REF["as_matrix"][2], REF["vectors"]),
                    **TOL)
    assert_allclose(r.apply(v[0]), np.einsum("nij,j->ni", REF["as_matrix"], REF["vectors"][0]),
                    **TOL)
    assert r[2].apply(v[0]).shape == (3,)


def test_mean_as_scipy():
    r = _rot()
    assert_allclose(r.mean().as_quat(canonical=True), REF["mean"], **TOL)
    assert_allclose(r.mean(dev(REF["weights"])).as_quat(canonical=True), REF["mean_weighted"],
                    **TOL)
    with pytest.raises(ValueError, match="number of values"):
        r.mean(dev(np.ones(3)))


def test_slerp_as_scipy():
    s = Slerp.init(dev(np.array([0.0, 1.0, 3.0, 4.0])), _rot()[:4])
    assert_allclose(s(dev(REF["slerp_times"])).as_quat(), REF["slerp"], **TOL)
    one = s(2.0)
    assert one.single
    assert_allclose(one.as_quat(), s(dev(np.array([2.0]))).as_quat()[0], **TOL)
    with pytest.raises(ValueError, match="at least 2"):
        Slerp.init(dev(np.array([0.0])), _rot()[:1])
    with pytest.raises(ValueError, match="timestamps"):
        Slerp.init(dev(np.array([0.0, 1.0])), _rot()[:3])


def test_containers():
    assert len(Rotation.identity(3)) == 3
    assert_allclose(Rotation.identity().as_matrix(), np.eye(3), **TOL)
    cat = Rotation.concatenate([_rot()[0], _rot()[1:3]])
    assert_allclose(cat.as_quat(), REF["quats"][:3], **TOL)
    with pytest.raises(TypeError, match="subscriptable"):
        _rot()[0][0]
    with pytest.raises(TypeError, match="len"):
        len(_rot()[0])
    with pytest.raises(ValueError, match=r"\(\.\.\., 4\)"):
        Rotation.from_quat(dev(np.ones(3)))
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, 3\)"):
        Rotation.from_matrix(dev(np.eye(4)))
    r = Rotation.random(funcgrad.random.PRNGKey(0), 100)
    norms = np.linalg.norm(np.asarray(funcgrad.device_get(r.as_quat())), axis=-1)
    assert_allclose(norms, np.ones(100), **TOL)
    assert Rotation.random(funcgrad.random.PRNGKey(1)).single


def test_jit_vmap_pytree():
    r = _rot()
    want = REF["as_euler_zyx"]
    assert_allclose(funcgrad.jit(lambda q: Rotation.from_quat(q).as_euler("zyx"))(r.quat), want,
                    rtol=1e-7, atol=1e-7)
    assert_allclose(funcgrad.vmap(lambda q: Rotation.from_quat(q).as_euler("zyx"))(r.quat),
                    want, rtol=1e-7, atol=1e-7)
    assert_allclose(funcgrad.jit(lambda rot: rot.as_matrix())(r), REF["as_matrix"], **TOL)
    assert_allclose(funcgrad.vmap(lambda rot: rot.as_matrix())(r), REF["as_matrix"], **TOL)
    s = Slerp.init(dev(np.array([0.0, 1.0, 3.0, 4.0])), r[:4])
    assert_allclose(funcgrad.jit(lambda sl, t: sl(t).as_quat())(s, dev(REF["slerp_times"])),
                    REF["slerp"], **TOL)


E = np.array([1.0, 2.0, 3.0])
GRADS = {
    "rotvec_apply": lambda x: Rotation.from_rotvec(x).apply(dev(E))[0],
    "euler_XYZ_rotvec": lambda x: Rotation.from_euler("XYZ", x).as_rotvec().sum(),
    "as_euler_zyx": lambda x: Rotation.from_rotvec(x).as_euler("zyx").sum(),
    "mrp_magnitude": lambda x: Rotation.from_mrp(x).magnitude(),
    "matrix_mrp": lambda x: Rotation.from_matrix(Rotation.from_rotvec(x).as_matrix())
    .as_mrp().sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_as_jax(name):
    g = funcgrad.grad(GRADS[name])(dev(np.array([0.3, -0.2, 0.5])))
    assert_allclose(g, REF[f"grad_{name}"], rtol=1e-9, atol=1e-12)


def test_grad_finite_at_identity():
    # d/dv (R(v) e) at v = 0 is the cross-product matrix: -[e]_x; JAX's is nan there.
    g = funcgrad.jacobian(lambda v: Rotation.from_rotvec(v).apply(dev(E)))(dev(np.zeros(3)))
    assert_allclose(g, -np.array([[0, -3.0, 2.0], [3.0, 0, -1.0], [-2.0, 1.0, 0]]), **TOL)
    gq = funcgrad.grad(lambda q: Rotation.from_quat(q).as_rotvec()[2])(
        dev(np.array([0.0, 0.0, 0.0, 1.0])))
    assert_allclose(gq, np.array([0.0, 0.0, 2.0, 0.0]), **TOL)


def test_float32_stays_float32():
    f32 = np.float32
    r = Rotation.from_euler("xyz", dev(np.array([10, 20, 30], f32)), degrees=True)
    outs = [r.quat, r.as_matrix(), r.as_euler("zyx"), r.as_rotvec(), r.as_mrp(), r.magnitude(),
            r.apply(dev(np.ones(3, f32))), r.inv().quat,
            Rotation.from_matrix(dev(np.eye(3, dtype=f32))).quat,
            Rotation.from_rotvec(dev(np.zeros(3, f32))).quat,
            Rotation.identity(dtype=f32).quat]
    assert [np.asarray(funcgrad.device_get(o)).dtype for o in outs] == [np.dtype(f32)] * 11
    stack = Rotation.from_quat(dev(np.tile(np.array([0, 0, 0, 1], f32), (3, 1))))
    assert stack.mean().quat.dtype == f32
    assert Slerp.init(dev(np.array([0.0, 1.0, 2.0], f32)), stack)(0.5).quat.dtype == f32


def test_traced_times_and_indices():
    # Key rotations closed over (NumPy arrays in the cpu pass), times and indices traced: the
    # lookups are gathers (NumPy indexing raised TracerArrayConversionError).
    s = Slerp.init(dev(np.array([0.0, 1.0, 3.0, 4.0])), _rot()[:4])
    times = dev(REF["slerp_times"])
    assert_allclose(funcgrad.vmap(lambda t: s(t).as_quat())(times), REF["slerp"], **TOL)
    assert_allclose(funcgrad.jit(lambda t: s(t).as_quat())(times), REF["slerp"], **TOL)
    r = _rot()
    assert_allclose(funcgrad.vmap(lambda i: r[i].as_matrix())(dev(np.array([3, 0]))),
                    REF["as_matrix"][[3, 0]], **TOL)
    assert_allclose(funcgrad.jit(lambda i: r[i].quat)(2), REF["quats"][2], **TOL)


def test_pow_as_scipy():
    # SciPy 1.17: ((p ** 2) ** 0.5) is the principal root (-60 degrees, not 120); p ** -1.5
    # turns 180 degrees the other way; ** 0 is the identity of the stack's shape
    p = Rotation.from_rotvec(dev(np.array([0.0, 0.0, 120.0])), degrees=True)
    assert_allclose(((p ** 2) ** 0.5).as_rotvec(degrees=True), np.array([0.0, 0.0, -60.0]),
                    atol=1e-12)
    assert_allclose((p ** -1.5).as_quat(), np.array([0.0, 0.0, -1.0, 6.123233995736766e-17]),
                    atol=1e-15)
    stack = Rotation.from_quat(dev(np.array([[0.0, 0.0, 0.6, 0.8], [0.6, 0.0, 0.0, -0.8]])))
    assert_allclose((stack ** 0).as_quat(), np.array([[0.0, 0.0, 0.0, 1.0]] * 2))
    assert_allclose((stack ** -1).as_quat(), stack.inv().as_quat())
    assert_allclose((stack ** dev(np.array([2.0]))).as_quat(), (stack * stack).as_quat())
    assert_allclose(funcgrad.jit(lambda q, n: (Rotation(q) ** n).as_quat())(stack.quat, 2.0),
                    (stack * stack).as_quat())
    # d/dv of the rotation vector of from_rotvec(v) ** 2 is 2 (away from angle pi)
    g = funcgrad.grad(lambda v: (Rotation.from_rotvec(v) ** 2.0).as_rotvec().sum())(
        dev(np.array([0.1, 0.2, 0.3])))
    assert_allclose(g, np.array([2.0, 2.0, 2.0]))
    with pytest.raises(ValueError, match="scalar"):
        stack ** dev(np.array([1.0, 2.0]))


def test_approx_equal_as_scipy():
    p = Rotation.from_quat(dev(np.array([0.0, 0.0, 0.0, 1.0])))
    q = Rotation.from_quat(dev(np.eye(4)))
    np.testing.assert_array_equal(np.asarray(funcgrad.device_get(p.approx_equal(q))),
                                  [False, False, False, True])
    r = Rotation.from_euler("z", 10.0, degrees=True)
    assert bool(r.approx_equal(Rotation.from_euler("z", 10.5, degrees=True), 1.0, degrees=True))
    assert not bool(r.approx_equal(Rotation.from_euler("z", 10.5, degrees=True)))
    with pytest.warns(UserWarning, match="atol must be set"):
        r.approx_equal(r, degrees=True)
    with pytest.raises(ValueError, match="broadcastable"):
        Rotation.identity(2).approx_equal(Rotation.identity(3))


_AV_A = np.array([[1.0, 2.0, 0.5], [-0.5, 1.0, 2.0], [0.3, -1.2, 0.8]])
_AV_B = np.array([[1.1, 1.9, 0.4], [-0.4, 1.2, 1.9], [0.2, -1.0, 0.9]])


@pytest.mark.parametrize("jit", [False, True])
def test_align_vectors_as_scipy(jit):
    # SciPy 1.17's Rotation.align_vectors: Kabsch (with the sensitivity matrix), one infinite
    # weight (the primary pair aligned exactly first), one antiparallel pair
    f = funcgrad.jit(Rotation.align_vectors, static_argnames="return_sensitivity") if jit \
        else Rotation.align_vectors
    r, rssd, sens = f(dev(_AV_A), dev(_AV_B), return_sensitivity=True)
    assert_allclose(r.as_quat(canonical=True),
                    np.array([0.042485827379363475, 0.006171627182620485, 0.037491887619495866,
                              0.998374290460515]))
    assert_allclose(rssd, 0.17645800989126978)
    assert_allclose(sens, np.array(
        [[0.09212346070122708, 0.01748624770867263, 0.002458031261539391],
         [0.01748624770867263, 0.1822883144812028, 0.05181867711939643],
         [0.002458031261539391, 0.05181867711939643, 0.1495982766638584]]))
    r, rssd = f(dev(_AV_A), dev(_AV_B), dev(np.array([1.0, np.inf, 2.0])))
    assert_allclose(r.as_quat(canonical=True),
                    np.array([0.043470621688639424, -0.003628053115217657, 0.0381593854124016,
                              0.9983190890619812]))
    assert_allclose(rssd, 0.2348978390019272)
    r, rssd = f(dev(np.array([1.0, 0.0, 0.0])), dev(np.array([-1.0, 0.0, 0.0])))
    assert_allclose(r.as_quat(canonical=True), np.array([0.0, 0.0, -1.0, 6.123233995736766e-17]),
                    atol=1e-15)
    assert_allclose(rssd, 0.0, atol=1e-15)


def test_align_vectors_gradient_and_errors():
    # an exactly rotated copy: rssd is 0 and the rotation is recovered
    truth = Rotation.from_rotvec(dev(np.array([0.3, -0.2, 0.5])))
    r, rssd = Rotation.align_vectors(truth.apply(dev(_AV_B)), dev(_AV_B))
    assert_allclose(r.as_quat(canonical=True), truth.as_quat(canonical=True))
    assert_allclose(rssd, 0.0, atol=1e-7)
    # d rssd**2 / d a = 2 w (a - R b) for the optimal R (envelope theorem)
    rr, _ = Rotation.align_vectors(dev(_AV_A), dev(_AV_B))
    g = funcgrad.grad(lambda a: Rotation.align_vectors(a, dev(_AV_B))[1] ** 2)(dev(_AV_A))
    assert_allclose(g, 2.0 * (dev(_AV_A) - rr.apply(dev(_AV_B))), rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="Only one infinite weight"):
        Rotation.align_vectors(_AV_A, _AV_B, np.array([np.inf, np.inf, 1.0]))
    with pytest.raises(ValueError, match="sensitivity"):
        Rotation.align_vectors(_AV_A[0], _AV_B[0], return_sensitivity=True)
    with pytest.raises(ValueError, match="negative"):
        Rotation.align_vectors(_AV_A, _AV_B, -np.ones(3))
    with pytest.raises(ValueError, match="same shapes"):
        Rotation.align_vectors(_AV_A, _AV_B[:2])
    with pytest.raises(ValueError, match="zero length"):
        Rotation.align_vectors(np.zeros(3), np.ones(3))
    with pytest.warns(UserWarning, match="not uniquely"):
        Rotation.align_vectors(np.array([[1.0, 0, 0], [2.0, 0, 0]]),
                               np.array([[0.0, 1, 0], [0.0, 2, 0]]))
