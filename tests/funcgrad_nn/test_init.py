"""nn.init against torch 2.13: gains (hard-coded from torch), the deterministic initialisers
(dirac_, eye_) exactly, the random ones by their distributions (the streams are not
PyTorch's), and PyTorch's errors and warnings."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn import init

# torch.nn.init.calculate_gain(nonlinearity, param) in torch 2.13
GAINS = [("linear", None, 1), ("conv_transpose3d", None, 1), ("sigmoid", None, 1),
         ("tanh", None, 5.0 / 3), ("relu", None, math.sqrt(2.0)), ("selu", None, 0.75),
         ("leaky_relu", None, 1.4141428569978354), ("leaky_relu", 0.2, 1.3867504905630728),
         ("leaky_relu", 1, 1.0), ("relu", "ignored", math.sqrt(2.0))]


@pytest.mark.parametrize("nonlinearity,param,gain", GAINS)
def test_calculate_gain_matches_torch(nonlinearity, param, gain):
    got = init.calculate_gain(nonlinearity, param)
    assert got == pytest.approx(gain, rel=1e-15)
    assert type(got) is type(gain)  # torch's int 1 for the linear family, floats elsewhere


@pytest.mark.parametrize("nonlinearity,param", [("identity", None), ("gelu", None),
                                                ("leaky_relu", True), ("leaky_relu", "x")])
def test_calculate_gain_rejects_what_torch_rejects(nonlinearity, param):
    with pytest.raises(ValueError):
        init.calculate_gain(nonlinearity, param)


def test_dirac_matches_torch_with_groups():
    # torch.nn.init.dirac_(torch.empty(4, 2, 3, 3), groups=2): ones at (g*2 + d, d, 1, 1)
    w = init.dirac_(np.full((4, 2, 3, 3), 7.0, np.float32), groups=2)
    ones = sorted(map(tuple, np.argwhere(w == 1).tolist()))
    assert ones == [(0, 0, 1, 1), (1, 1, 1, 1), (2, 0, 1, 1), (3, 1, 1, 1)]
    assert w.sum() == 4 and w.dtype == np.float32
    # more input than output channels per group: only min(out // groups, in) deltas
    w = init.dirac_(np.empty((2, 4, 5)))
    assert sorted(map(tuple, np.argwhere(w == 1).tolist())) == [(0, 0, 2), (1, 1, 2)]
    w = init.dirac_(np.empty((3, 1, 2, 2, 3)), groups=3)
    assert sorted(map(tuple, np.argwhere(w == 1).tolist())) == [
        (0, 0, 1, 1, 1), (1, 0, 1, 1, 1), (2, 0, 1, 1, 1)]
    with pytest.raises(ValueError, match="divisible by groups"):
        init.dirac_(np.empty((3, 4, 5)), groups=2)
    with pytest.raises(ValueError, match="3, 4 or 5"):
        init.dirac_(np.empty((2, 2)))


def test_sparse_zeros_per_column_and_std():
    w = init.sparse_(np.empty((10, 400)), 0.35, std=0.02, generator=0)
    assert set((w == 0).sum(axis=0).tolist()) == {4}  # ceil(0.35 * 10), as torch
    assert np.std(w[w != 0]) == pytest.approx(0.02, rel=0.05)
    with pytest.raises(ValueError):
        init.sparse_(np.empty((2, 3, 4)), 0.1)


def test_kaiming_mode_is_case_insensitive_and_bad_modes_raise_as_torch():
    a = init.kaiming_normal_(np.empty((300, 200)), mode="FAN_OUT", generator=0)
    assert np.std(a) == pytest.approx(math.sqrt(2.0 / (1 + 0.01**2)) / math.sqrt(300),
                                      rel=0.02)
    with pytest.raises(ValueError, match="Mode bad not supported"):
        init.kaiming_uniform_(np.empty((3, 2)), mode="bad")


def test_zero_element_arrays_are_left_alone_with_torchs_warning():
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(np.empty((0, 3)))
    assert init.orthogonal_(np.empty((0, 3))).shape == (0, 3)


def test_trunc_normal_warns_when_the_mean_is_far_from_the_interval():
    with pytest.warns(UserWarning, match="more than 2 std"):
        x = init.trunc_normal_(np.empty(100), mean=5.0, std=1.0, a=-1.0, b=1.0, generator=0)
    assert np.abs(x).max() <= 1.0


@pytest.mark.parametrize("old,new", [("uniform", "uniform_"), ("normal", "normal_"),
                                     ("constant", "constant_"), ("eye", "eye_"),
                                     ("dirac", "dirac_"), ("xavier_uniform", "xavier_uniform_"),
                                     ("xavier_normal", "xavier_normal_"),
                                     ("kaiming_uniform", "kaiming_uniform_"),
                                     ("kaiming_normal", "kaiming_normal_"),
                                     ("orthogonal", "orthogonal_"), ("sparse", "sparse_")])
def test_deprecated_names_warn_and_forward(old, new):
    args = {"constant": (2.0,), "sparse": (0.5,)}.get(old, ())
    shape = (2, 2, 3) if old == "dirac" else (3, 3)
    with pytest.warns(FutureWarning, match=f"nn.init.{new}"):
        x = getattr(init, old)(np.zeros(shape), *args)
    assert x.shape == shape
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(init, new)(np.zeros(shape), *args)


@pytest.mark.parametrize("name", ["uniform_", "normal_", "trunc_normal_", "zeros_", "ones_",
                                  "eye_", "xavier_uniform_", "xavier_normal_",
                                  "kaiming_uniform_", "kaiming_normal_", "orthogonal_"])
def test_initialisers_fill_a_parameter_and_return_it_as_torch(name):
    import funcgrad_nn as nn

    p = nn.Parameter(np.full((3, 4), np.nan, np.float32))
    assert getattr(init, name)(p) is p
    assert p.data.shape == (3, 4) and p.data.dtype == np.float32
    assert np.isfinite(p.data).all()
    m = nn.Linear(4, 3)
    m.weight = p  # then registered like any parameter
    assert m.weight is p.data


def test_initialisers_fill_a_host_parameter_through_its_data_buffer():
    # The DCGAN tutorial's weights_init, verbatim: m.weight.data of a host array is NumPy's
    # memoryview of its buffer, which the initialisers fill (it raised AttributeError).
    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    net = nn.Sequential(nn.Conv2d(3, 64, 4, bias=False), nn.BatchNorm2d(64))
    net[1].bias[...] = 5.0
    weight = net[0].weight
    net.apply(weights_init)
    assert net[0].weight is weight and weight.dtype == np.float32
    assert abs(float(weight.std()) - 0.02) < 0.002 and abs(float(weight.mean())) < 0.002
    assert abs(float(net[1].weight.mean()) - 1.0) < 0.01 and not net[1].bias.any()
    view = np.zeros((2, 3), np.float32).data
    assert init.xavier_uniform_(view) is view and np.asarray(view).any()
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        init.ones_(frozen.data)


@pytest.mark.parametrize("mean,std,a,b", [(0.5, 1.0, -1.0, 2.0), (0.0, 1.0, 2.0, 5.0),
                                          (0.0, 1.0, 10.0, 11.0), (0.0, 2.0, -0.1, 0.1)])
def test_trunc_normal_has_the_truncated_distribution_even_far_in_the_tail(mean, std, a, b):
    # torch 2.13 switches to a uniform proposal when [a, b] holds <= 30 % of the mass; the
    # moments are the truncated normal's (scipy), also for [10, 11] (once an endless loop)
    import scipy.stats

    x = init.trunc_normal_(np.empty(100_000), mean, std, a, b, generator=0)
    want = scipy.stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)
    assert x.min() >= a and x.max() <= b
    assert x.mean() == pytest.approx(want.mean(), abs=4 * want.std() / np.sqrt(x.size))
    assert x.std() == pytest.approx(want.std(), rel=0.02)


def test_bad_ranges_raise_as_torch():
    # torch raises RuntimeError for these two: ours is both a ValueError and a RuntimeError
    for kind in (ValueError, RuntimeError):
        with pytest.raises(kind, match=r"\[from, to\) range, but found from=1 > to=0"):
            init.uniform_(np.empty(3), 1, 0)
        with pytest.raises(kind, match="normal expects std >= 0.0"):
            init.normal_(np.empty(3), 0.0, -1.0)
    with pytest.raises(ValueError, match="a <= b"):
        init.trunc_normal_(np.empty(3), a=1.0, b=0.0)


# -- the default generator is per context (thread / ThreadGroup member) -------------------------


def test_manual_seed_stream_unchanged():
    # Literal values drawn before the generator moved into a context variable: seeds keep
    # giving the same parameters.
    nn.manual_seed(0)
    w = nn.Linear(3, 2).weight.ravel()
    np.testing.assert_array_equal(w, np.array(
        [0.15814973413944244, -0.2658274173736572, -0.5300381183624268,
         -0.5582658052444458, 0.3617333173751831, 0.47660908102989197], np.float32))


def test_manual_seed_concurrent_thread_group_members_identical():
    from funcgrad.distributed import ThreadGroup

    def build(comm):
        comm.barrier()  # start seeding and drawing together, to interleave the two ranks
        nn.manual_seed(123)
        model = nn.Sequential(*[nn.Linear(16, 16) for _ in range(8)])
        return np.concatenate([p.ravel() for p in model.parameters()])

    nn.manual_seed(123)
    expected = np.concatenate([p.ravel() for p in
                               nn.Sequential(*[nn.Linear(16, 16) for _ in range(8)]).parameters()])
    for _ in range(30):
        a, b = ThreadGroup(2).run(build)
        np.testing.assert_array_equal(a, expected)
        np.testing.assert_array_equal(b, expected)


def test_manual_seed_in_a_thread_leaves_the_callers_stream_alone():
    import threading

    nn.manual_seed(5)
    first = nn.init.default_generator().random(3)
    nn.manual_seed(5)
    got = {}

    def worker():
        # A plain thread starts with an empty context: it gets a fresh generator that works.
        got["fresh"] = nn.Linear(2, 2).weight.copy()
        nn.manual_seed(99)
        got["seeded"] = nn.init.default_generator().random(3)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert got["fresh"].shape == (2, 2) and np.isfinite(got["fresh"]).all()
    np.testing.assert_array_equal(got["seeded"], np.random.default_rng(99).random(3))
    np.testing.assert_array_equal(nn.init.default_generator().random(3), first)


# torch 2.13 refuses random initialisers on integer/bool tensors (NotImplementedError
# "normal_kernel_cpu"/"check_uniform_bounds" not implemented for 'Long'); cast into integers
# the values would silently truncate. Deterministic fills (eye_, dirac_, ones_) work there.
@pytest.mark.parametrize("fill", [
    init.uniform_, init.normal_, init.trunc_normal_, init.xavier_uniform_,
    init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_, init.orthogonal_,
    lambda t: init.sparse_(t, 0.5),
])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_random_initialisers_refuse_integer_arrays(fill, dtype):
    with pytest.raises(TypeError, match=rf"needs a floating array, got dtype {np.dtype(dtype)}"):
        fill(np.zeros((2, 3), dtype))


def test_deterministic_fills_work_on_integer_arrays():
    np.testing.assert_array_equal(init.eye_(np.zeros((2, 2), np.int64)), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(init.ones_(np.zeros(2, np.bool_)), [True, True])


# torch.nn.init._calculate_fan_in_and_fan_out / _calculate_correct_fan in torch 2.13: private,
# but custom layers' reset_parameters call them (as nn.Linear's own does)
FANS = [((8, 3), (3, 8)), ((8, 3, 5, 5), (75, 200)), ((4, 6, 2), (12, 8)),
        ((2, 3, 1, 2, 3), (18, 12)), ((0, 3), (3, 0))]


@pytest.mark.parametrize("shape,fans", FANS)
def test_private_fan_helpers_match_torch(shape, fans):
    w = np.empty(shape, np.float32)
    assert init._calculate_fan_in_and_fan_out(w) == fans
    assert init._calculate_correct_fan(w, "fan_in") == fans[0]
    assert init._calculate_correct_fan(w, "FAN_OUT") == fans[1]


def test_private_fan_helpers_errors_as_torch():
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init._calculate_fan_in_and_fan_out(np.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init._calculate_correct_fan(np.empty((2, 2)), "fan_avg")


def test_private_no_grad_helpers_and_module_utils_that_ported_code_imports():
    # torch 2.13: torch.nn.init._no_grad_trunc_normal_ (timm), _no_grad_uniform_/normal_/
    # fill_/zero_; torch.nn.modules.utils._reverse_repeat_tuple((1, 2, 3), 2) ==
    # (3, 3, 2, 2, 1, 1); torch.nn.modules.linear.NonDynamicallyQuantizableLinear (the type of
    # MultiheadAttention.out_proj)
    from funcgrad_nn.modules.linear import NonDynamicallyQuantizableLinear
    from funcgrad_nn.modules.utils import _reverse_repeat_tuple

    w = np.empty(200, np.float32)
    assert init._no_grad_trunc_normal_(w, 0.0, 1.0, -0.5, 0.5, generator=0) is w
    assert np.abs(w).max() <= 0.5
    assert init._no_grad_fill_(w, 2.0) is w and (w == 2).all()
    assert not init._no_grad_zero_(w).any()
    assert 1 <= init._no_grad_uniform_(w, 1.0, 2.0, generator=0).min()
    assert init._no_grad_normal_(w, 5.0, 0.1, generator=0).mean() > 4.9
    assert _reverse_repeat_tuple((1, 2, 3), 2) == (3, 3, 2, 2, 1, 1)
    assert type(nn.MultiheadAttention(4, 2).out_proj) is NonDynamicallyQuantizableLinear


def test_rng_state_round_trips_through_a_checkpoint(tmp_path):
    nn.manual_seed(11)
    state = nn.get_rng_state()
    assert state.dtype == np.uint8 and state.ndim == 1  # torch's ByteTensor
    a = nn.Linear(3, 3).weight.copy()
    nn.save({"rng": state}, tmp_path / "ck.safetensors")
    nn.manual_seed(0)
    nn.set_rng_state(nn.load(tmp_path / "ck.safetensors")["rng"])
    np.testing.assert_array_equal(nn.Linear(3, 3).weight, a)
    assert nn.initial_seed() == 11


def test_seed_initial_seed_and_fork_rng():
    nn.manual_seed(-1)
    assert nn.initial_seed() == 2**64 - 1  # torch wraps a negative seed to 64 bits
    s = nn.seed()
    assert nn.initial_seed() == s and 0 <= s < 2**63
    nn.manual_seed(4)
    with nn.random.fork_rng():
        nn.manual_seed(9)
        inside = init.default_generator().random()
    assert nn.initial_seed() == 4
    nn.manual_seed(4)
    assert init.default_generator().random() != inside
    with nn.random.fork_rng(enabled=False):
        nn.manual_seed(9)
    assert nn.initial_seed() == 9


@pytest.mark.parametrize("bad", [np.zeros(3, np.float32), np.zeros(4, np.uint8), "state"])
def test_set_rng_state_names_a_wrong_state(bad):
    with pytest.raises(TypeError, match="get_rng_state"):
        nn.set_rng_state(bad)
