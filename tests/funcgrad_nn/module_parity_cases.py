"""Module-API and container cases run on both ``torch.nn`` and ``funcgrad_nn``.

Each case is ``fn(nn, ones)`` (``ones(*shape)`` makes an array of that library) and returns
plain data (names, reprs, shapes); an exception is recorded by its type. The torch results
are stored by ``fixtures/make_module_fixtures.py`` (needs torch) in
``fixtures/module_parity.json``; ``test_module_parity.py`` compares funcgrad_nn against them.
"""

import collections


def _names(m):
    return [[k, type(v).__name__] for k, v in m._modules.items()]


def _seq(nn):
    return nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())


def _ml(nn):
    return nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])


def _net(nn):
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 4),
                                                                   nn.Linear(4, 1)))


def _do(obj, method, *args):
    getattr(obj, method)(*args)
    return obj


def _with_buffers(nn, ones):
    m = nn.Module()
    m.a = nn.Buffer(ones(2))
    m.b = nn.Buffer(ones(3), persistent=False)
    m.register_buffer("c", nn.Buffer(ones(1)))
    return m


def _extra(nn):
    """A module with extra state (PyTorch's get_extra_state/set_extra_state protocol)."""
    def init(self):
        nn.Module.__init__(self)
        self.lin = nn.Linear(1, 1)
        self.calls = 0

    def set_state(self, state):
        self.calls = state["calls"]

    return type("Extra", (nn.Module,), {"__init__": init, "get_extra_state": lambda self: {
        "calls": self.calls}, "set_extra_state": set_state})


def _extra_loaded(nn, ones, drop=(), add=(), strict=True):
    src = nn.Sequential(_extra(nn)())
    src[0].calls = 7
    sd = {k: v for k, v in src.state_dict().items() if k not in drop}
    sd.update({k: {"calls": 9} for k in add})
    dst = nn.Sequential(_extra(nn)())
    res = dst.load_state_dict(sd, strict=strict)
    return [dst[0].calls, sorted(res.missing_keys), sorted(res.unexpected_keys)]


def _lazy_norm(nn, ones, ctor, shape):
    m = eval(ctor, vars(nn))  # noqa: S307 (the case's own text)
    before = [repr(m), list(m.state_dict())]  # (PyTorch's arrays have no shape yet)
    out = m(ones(*shape))
    return before + [repr(m), type(m).__name__, list(out.shape),
                     [[k, list(v.shape)] for k, v in m.state_dict().items()]]


def _reset(m):
    for p in m.parameters():
        p.data.fill_(5.0) if hasattr(p, "data") and hasattr(p.data, "fill_") else p.fill(5.0)
    m.reset_parameters()
    return m


def _pd(nn, ones):
    return nn.ParameterDict({"w": nn.Parameter(ones(2)), "b": ones(3)})


CASES = {
    "seq_del": lambda nn, ones: _names(_do(_seq(nn), "__delitem__", 0)),
    "seq_del_slice": lambda nn, ones: _names(_do(_seq(nn), "__delitem__", slice(0, 2))),
    "seq_del_named": lambda nn, ones: _names(_do(nn.Sequential(collections.OrderedDict(
        [("a", nn.ReLU()), ("b", nn.Tanh())])), "__delitem__", 0)),
    "seq_slice": lambda nn, ones: _names(_seq(nn)[1:]),
    "seq_pop": lambda nn, ones: (lambda s: [type(s.pop(1)).__name__, _names(s)])(_seq(nn)),
    "seq_insert": lambda nn, ones: _names(_seq(nn).insert(1, nn.ELU())),
    "seq_insert_neg": lambda nn, ones: _names(_seq(nn).insert(-1, nn.ELU())),
    "seq_insert_end": lambda nn, ones: _names(_seq(nn).insert(3, nn.ELU())),
    "seq_insert_out_of_range": lambda nn, ones: _seq(nn).insert(5, nn.ELU()),
    "seq_extend": lambda nn, ones: _names(_seq(nn).extend([nn.ELU()])),
    "seq_add": lambda nn, ones: _names(_seq(nn) + _seq(nn)),
    "seq_add_list": lambda nn, ones: _seq(nn) + [nn.ReLU()],
    "seq_iadd": lambda nn, ones: _names(_do(_seq(nn), "__iadd__", _seq(nn))),
    "seq_mul": lambda nn, ones: _names(_seq(nn) * 2),
    "seq_rmul": lambda nn, ones: _names(2 * _seq(nn)),
    "seq_mul_zero": lambda nn, ones: _seq(nn) * 0,
    "seq_set_neg": lambda nn, ones: _names(_do(_seq(nn), "__setitem__", -1, nn.ELU())),
    "ml_del": lambda nn, ones: _names(_do(_ml(nn), "__delitem__", 0)),
    "ml_del_slice": lambda nn, ones: _names(_do(_ml(nn), "__delitem__", slice(None, None, 2))),
    "ml_slice": lambda nn, ones: _names(_ml(nn)[::2]),
    "ml_pop": lambda nn, ones: (lambda s: [type(s.pop(-1)).__name__, _names(s)])(_ml(nn)),
    "ml_insert": lambda nn, ones: _names(_do(_ml(nn), "insert", 1, nn.ELU())),
    "ml_add": lambda nn, ones: _names(_ml(nn) + _ml(nn)),
    "ml_add_list": lambda nn, ones: _names(_ml(nn) + [nn.ELU()]),
    "ml_iadd": lambda nn, ones: _names(_do(_ml(nn), "__iadd__", [nn.ELU()])),
    "ml_extend_not_iterable": lambda nn, ones: _ml(nn).extend(3),
    "ml_repr_runs": lambda nn, ones: repr(nn.ModuleList(
        [nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.ReLU(), nn.Linear(2, 3), nn.Linear(2, 3)])),
    "ml_repr_nested": lambda nn, ones: repr(nn.ModuleDict(
        {"a": nn.ReLU(), "b": nn.ModuleList([nn.Sequential(nn.ReLU(), nn.Tanh())] * 2)})),
    "ml_repr_empty": lambda nn, ones: repr(nn.ModuleList()),
    "md_update_pairs": lambda nn, ones: list(_do(nn.ModuleDict({"b": nn.ReLU()}), "update",
                                                 [("a", nn.ELU())])),
    "md_update_bad_length": lambda nn, ones: nn.ModuleDict().update([("c", nn.ELU(), 1)]),
    "md_update_bad_element": lambda nn, ones: nn.ModuleDict().update([3]),
    "md_update_not_iterable": lambda nn, ones: nn.ModuleDict().update(3),
    "pd_keys": lambda nn, ones: list(_pd(nn, ones).keys()),
    "pd_named_parameters": lambda nn, ones: [[n, list(p.shape)] for n, p in
                                             _pd(nn, ones).named_parameters()],
    "pd_ordered": lambda nn, ones: list(nn.ParameterDict(collections.OrderedDict(
        [("w", ones(1)), ("b", ones(1))])).keys()),
    "pd_state_dict_nested": lambda nn, ones: list(nn.Sequential(collections.OrderedDict(
        p=_pd(nn, ones))).state_dict()),
    "pd_pop": lambda nn, ones: (lambda s: [list(s.pop("w").shape), list(s)])(_pd(nn, ones)),
    "pd_set": lambda nn, ones: list(_do(_pd(nn, ones), "__setitem__", "a", ones(1))),
    "pd_missing": lambda nn, ones: _pd(nn, ones)["zz"],
    "pd_mixed": lambda nn, ones: (lambda p: [list(p), type(p["m"]).__name__, p["s"], [
        n for n, _ in p.named_parameters()], [n for n, _ in p.named_modules()],
        list(p.state_dict()), list(p.copy()), "m" in p, len(p), list(reversed(p))])(
        nn.ParameterDict(collections.OrderedDict(
            [("w", ones(2)), ("m", nn.ReLU()), ("s", "x"), ("b", ones(1))]))),
    "pd_mixed_delete": lambda nn, ones: (lambda p: (p.__delitem__("m"), p.pop("s"), list(p), [
        n for n, _ in p.named_modules()]))(nn.ParameterDict(collections.OrderedDict(
            [("w", ones(2)), ("m", nn.ReLU()), ("s", "x")])))[1:],
    "pd_non_string_key": lambda nn, ones: nn.ParameterDict().__setitem__(1, ones(1)),
    "pd_fromkeys": lambda nn, ones: list(_pd(nn, ones).fromkeys(["x", "y"], ones(1))),
    "pd_or": lambda nn, ones: list(_pd(nn, ones) | nn.ParameterDict({"a": ones(1)})),
    "pd_ror": lambda nn, ones: list(nn.ParameterDict({"a": ones(1)}).__ror__(_pd(nn, ones))),
    "pd_ior": lambda nn, ones: list(_do(_pd(nn, ones), "__ior__", {"z": ones(1), "a": ones(1)})),
    "dir_without_numbered_children": lambda nn, ones: [x for x in dir(_net(nn)) if x[0].isdigit()],
    "pl_repr": lambda nn, ones: repr(nn.ParameterList([ones(2), ones(3, 4)])).replace(
        "torch.", ""),
    "pl_empty_repr": lambda nn, ones: repr(nn.ParameterList()),
    "pl_mixed": lambda nn, ones: (lambda p: [len(p), type(p[3]).__name__, p[4], [
        n for n, _ in p.named_parameters()], [n for n, _ in p.named_modules()], list(
        p.state_dict()), repr(p).replace("torch.", ""), len(p[1:4])])(nn.ParameterList(
            [ones(2), nn.Parameter(ones(1)), ones(3), nn.ReLU(), "x"])),
    "pl_extend_array": lambda nn, ones: nn.ParameterList().extend(ones(2)),
    "pl_extend_not_iterable": lambda nn, ones: nn.ParameterList().extend(3),
    "pl_setitem_module": lambda nn, ones: nn.ParameterList([ones(1)]).__setitem__(0, nn.Tanh()),
    "module_over_parameter": lambda nn, ones: setattr(nn.Linear(1, 1), "weight", nn.Tanh()),
    "module_over_buffer": lambda nn, ones: (lambda m: (setattr(m, "running_mean", nn.Tanh()), [
        n for n, _ in m.named_buffers()], [n for n, _ in m.named_children()]))(
        nn.BatchNorm1d(2))[1:],
    "pl_slice": lambda nn, ones: [list(p.shape) for p in nn.ParameterList(
        [ones(2), ones(3), ones(4)])[1:]],
    "buffer_names": lambda nn, ones: [[n for n, _ in _with_buffers(nn, ones).named_buffers()],
                                      list(_with_buffers(nn, ones).state_dict())],
    "buffer_reassign_plain": lambda nn, ones: (lambda m: (setattr(m, "a", ones(4)), [
        n for n, _ in m.named_buffers()], list(m.a.shape))[1:])(_with_buffers(nn, ones)),
    "extra_state_keys": lambda nn, ones: list(nn.Sequential(_extra(nn)()).state_dict()),
    "extra_state_value": lambda nn, ones: nn.Sequential(_extra(nn)()).state_dict()[
        "0._extra_state"],
    "extra_state_loaded": lambda nn, ones: _extra_loaded(nn, ones),
    "extra_state_missing": lambda nn, ones: _extra_loaded(nn, ones, drop=["0._extra_state"]),
    "extra_state_missing_nonstrict": lambda nn, ones: _extra_loaded(
        nn, ones, drop=["0._extra_state"], strict=False),
    "extra_state_unexpected": lambda nn, ones: nn.Linear(1, 1).load_state_dict(
        {**nn.Linear(1, 1).state_dict(), "_extra_state": 3}),
    "extra_state_unexpected_nonstrict": lambda nn, ones: list(nn.Linear(1, 1).load_state_dict(
        {**nn.Linear(1, 1).state_dict(), "_extra_state": 3}, strict=False).unexpected_keys),
    "set_submodule_replace": lambda nn, ones: _names(_do(_net(nn), "set_submodule", "2.1",
                                                         nn.Tanh())[2]),
    "set_submodule_add": lambda nn, ones: _names(_do(_net(nn), "set_submodule", "2.x",
                                                     nn.Tanh())[2]),
    "set_submodule_strict_missing": lambda nn, ones: _net(nn).set_submodule("2.x", nn.Tanh(),
                                                                          strict=True),
    "set_submodule_strict_replace": lambda nn, ones: _names(_do(_net(nn), "set_submodule", "1",
                                                                nn.Tanh(), True)),
    "set_submodule_empty": lambda nn, ones: _net(nn).set_submodule("", nn.Tanh()),
    "set_submodule_not_module": lambda nn, ones: _net(nn).set_submodule("1", 3),
    "set_submodule_over_parameter": lambda nn, ones: _net(nn).set_submodule("0.weight",
                                                                          nn.Tanh()),
    "set_submodule_bad_parent": lambda nn, ones: _net(nn).set_submodule("5.x", nn.Tanh()),
    "get_name": lambda nn, ones: _net(nn)._get_name(),
    "module_type": lambda nn, ones: [str(v.dtype).replace("torch.", "") for v in nn.BatchNorm1d(
        2).type(ones(1).double().dtype if hasattr(ones(1), "double") else "float64").state_dict(
        ).values()],
    "to_integer_dtype": lambda nn, ones: nn.Linear(1, 1).to(ones(1).long().dtype if hasattr(
        ones(1), "long") else ones(1).astype("int64").dtype),
    "to_like_array": lambda nn, ones: str(nn.Linear(1, 1).to(ones(1).double() if hasattr(
        ones(1), "double") else ones(1).astype("float64"), non_blocking=True).weight.dtype
                                       ).replace("torch.", ""),
    "to_dtype_non_blocking": lambda nn, ones: str(nn.Linear(1, 1).to(
        ones(1).double().dtype if hasattr(ones(1), "double") else ones(1).astype(
            "float64").dtype, True).weight.dtype).replace("torch.", ""),
    "modules_with_duplicates": lambda nn, ones: (lambda lin: [
        len(list(nn.Sequential(lin, lin).modules())),
        len(list(nn.Sequential(lin, lin).modules(remove_duplicate=False)))])(nn.Linear(1, 1)),
    "hardtanh_deprecated_names": lambda nn, ones: repr(nn.Hardtanh(min_value=-2.0,
                                                                  max_value=3.0)),
    "forward_keyword_names": lambda nn, ones: [
        list(nn.RMSNorm(2)(x=ones(1, 2)).shape),
        list(nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])(
            input_=ones(3, 4), target_=ones(3).long() if hasattr(ones(3), "long") else
            ones(3).astype("int64")).output.shape)],
    "share_memory_returns_self": lambda nn, ones: (lambda m: m.share_memory() is m)(
        nn.Linear(1, 1)),
    "reset_parameters_norms": lambda nn, ones: [
        [p.tolist() for p in _reset(m).parameters()] for m in (
            nn.LayerNorm(2), nn.LayerNorm(2, bias=False), nn.GroupNorm(1, 2), nn.RMSNorm(2),
            nn.BatchNorm1d(2))],
    "reset_parameters_embedding_padding": lambda nn, ones: [
        _reset(nn.Embedding(4, 2, padding_idx=1)).weight[1].tolist(),
        _reset(nn.EmbeddingBag(4, 2, padding_idx=3)).weight[3].tolist()],
    "lazy_batchnorm1d": lambda nn, ones: _lazy_norm(nn, ones, "LazyBatchNorm1d()", (4, 3)),
    "lazy_batchnorm2d_no_affine": lambda nn, ones: _lazy_norm(
        nn, ones, "LazyBatchNorm2d(affine=False, momentum=None)", (2, 3, 4, 4)),
    "lazy_batchnorm3d_no_stats": lambda nn, ones: _lazy_norm(
        nn, ones, "LazyBatchNorm3d(track_running_stats=False, bias=False)", (2, 3, 2, 2, 2)),
    "lazy_instancenorm1d": lambda nn, ones: _lazy_norm(nn, ones, "LazyInstanceNorm1d()",
                                                       (2, 3, 5)),
    "lazy_instancenorm2d": lambda nn, ones: _lazy_norm(nn, ones, "LazyInstanceNorm2d(eps=0.1)",
                                                       (2, 3, 4, 4)),
    "lazy_instancenorm3d": lambda nn, ones: _lazy_norm(nn, ones, "LazyInstanceNorm3d()",
                                                       (1, 2, 2, 2, 2)),
    "lazy_batchnorm_wrong_rank": lambda nn, ones: nn.LazyBatchNorm1d()(ones(2, 3, 4, 5)),
    # (PyTorch's module stays a LazyBatchNorm1d with num_features 0 until a forward; ours
    # becomes a BatchNorm1d(5) at once.)
    "lazy_batchnorm_loads": lambda nn, ones: (lambda m: [repr(m.load_state_dict(
        nn.BatchNorm1d(5).state_dict())), list(m.running_mean.shape), list(m(ones(2, 5)).shape)])(
        nn.LazyBatchNorm1d()),
    "get_parameter": lambda nn, ones: list(_net(nn).get_parameter("2.1.weight").shape),
    "get_parameter_missing": lambda nn, ones: _net(nn).get_parameter("2.1.foo"),
    "get_parameter_module": lambda nn, ones: _net(nn).get_parameter("2.1"),
    "get_buffer": lambda nn, ones: list(nn.Sequential(nn.BatchNorm1d(3)).get_buffer(
        "0.running_mean").shape),
    "get_buffer_parameter": lambda nn, ones: nn.Sequential(nn.BatchNorm1d(3)).get_buffer(
        "0.weight"),
    "get_submodule_missing": lambda nn, ones: _net(nn).get_submodule("2.5"),
    "get_submodule_parameter": lambda nn, ones: _net(nn).get_submodule("0.weight"),
    "add_module_dot": lambda nn, ones: nn.Module().add_module("a.b", nn.ReLU()),
    "add_module_empty": lambda nn, ones: nn.Module().add_module("", nn.ReLU()),
    "add_module_existing_parameter": lambda nn, ones: nn.Linear(1, 1).add_module(
        "weight", nn.ReLU()),
    "register_buffer_existing_parameter": lambda nn, ones: nn.Linear(1, 1).register_buffer(
        "weight", ones(1)),
    "register_parameter_method_name": lambda nn, ones: nn.Linear(1, 1).register_parameter(
        "forward", nn.Parameter(ones(1))),
    "train_not_bool": lambda nn, ones: nn.ReLU().train("yes"),
    "load_ok_repr": lambda nn, ones: repr(nn.Linear(2, 3).load_state_dict(
        nn.Linear(2, 3).state_dict())),
    "load_nonstrict_repr": lambda nn, ones: repr(nn.Linear(2, 3).load_state_dict(
        {"weight": nn.Linear(2, 3).weight.detach() if hasattr(nn.Linear(2, 3).weight, "detach")
         else nn.Linear(2, 3).weight, "extra": ones(1)}, strict=False)),
    "load_strict_message": lambda nn, ones: str(_raised(lambda: nn.Linear(2, 3).load_state_dict(
        {"weight": ones(3, 2), "extra": ones(1)}))),
    "named_modules_memo": lambda nn, ones: (lambda lin: [n for n, _ in nn.Sequential(
        lin, nn.ReLU()).named_modules(memo={lin})])(nn.Linear(1, 1)),
    "lazy_linear_before": lambda nn, ones: [repr(nn.LazyLinear(3)), nn.LazyLinear(3).in_features],
    "lazy_linear_after": lambda nn, ones: (lambda s: [list(s(ones(5, 7)).shape), repr(s), list(
        s.state_dict()), [list(p.shape) for p in s.parameters()]])(nn.Sequential(
            nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2, bias=False))),
    "load_assign_keeps_dtype": lambda nn, ones: str(_do(nn.Linear(2, 2), "load_state_dict",
                                                      nn.Linear(2, 2).double().state_dict(),
                                                      True, True).weight.dtype
                                                  ).replace("torch.", ""),
    "load_copy_keeps_dtype": lambda nn, ones: str(_do(nn.Linear(2, 2), "load_state_dict",
                                                    nn.Linear(2, 2).double().state_dict()
                                                    ).weight.dtype).replace("torch.", ""),
    "linear_zero_in_features": lambda nn, ones: [list(nn.Linear(0, 2).weight.shape), list(
        nn.Linear(0, 2)(ones(3, 0)).shape)],
    "linear_wrong_features": lambda nn, ones: nn.Linear(3, 2)(ones(4, 2)),
    "unflatten_wrong_sizes": lambda nn, ones: nn.Unflatten(1, (5, 3))(ones(2, 12)),
    "unflatten_list_repr": lambda nn, ones: [repr(nn.Unflatten(1, [2, 3])), list(
        nn.Unflatten(1, [2, -1])(ones(1, 6)).shape)],
}

# Bad inputs: where PyTorch raises RuntimeError, so do we (and ValueError too).
_BAD_INPUTS = {
    "conv_channels": "Conv2d(2, 3, 3)(ones(1, 3, 5, 5))",
    "conv_ndim": "Conv2d(2, 3, 3)(ones(5, 5))",
    "conv_kernel_too_big": "Conv2d(2, 3, 3)(ones(1, 2, 2, 2))",
    "conv_negative_padding": "functional.conv1d(ones(1, 1, 5), ones(1, 1, 2), padding=-1)",
    "conv_zero_stride": "functional.conv1d(ones(1, 1, 5), ones(1, 1, 2), stride=0)",
    "conv_weight_shape": "functional.conv1d(ones(1, 1, 5), ones(1, 2))",
    "convt_ndim": "ConvTranspose1d(1, 1, 2)(ones(3))",
    "convt_channels": "ConvTranspose1d(2, 1, 2)(ones(1, 1, 3))",
    "convt_output_padding": "ConvTranspose2d(2, 3, 3, stride=2, output_padding=2)("
                            "ones(1, 2, 4, 4))",
    "unfold_too_small": "Unfold(4)(ones(1, 1, 2, 2))",
    "fold_channels": "Fold(4, 2)(ones(1, 3, 9))",
    "avgpool_too_small": "AvgPool2d(4)(ones(1, 1, 2, 2))",
    "maxpool_padding": "MaxPool2d(2, padding=2)(ones(1, 1, 4, 4))",
    "maxpool_output_empty": "MaxPool2d(5)(ones(1, 1, 4, 4))",
    "maxpool_zero_stride": "functional.max_pool1d(ones(1, 1, 5), 2, stride=0)",
    "fractional_too_big": "FractionalMaxPool2d(3, output_size=3)(ones(1, 1, 4, 4))",
    "batchnorm_channels": "BatchNorm1d(3)(ones(4, 5))",
    "groupnorm_channels": "GroupNorm(2, 4)(ones(2, 6, 3))",
    "rmsnorm_shape": "RMSNorm(4)(ones(2, 5))",
    "reflectionpad_ndim": "ReflectionPad2d(1)(ones(2))",
    "zeropad_ndim": "ZeroPad2d(1)(ones(2))",
    "flatten_dims": "Flatten(2, 1)(ones(2, 3, 4))",
    "batchnorm_ndim": "BatchNorm1d(3)(ones(1, 3, 2, 2))",
    "instancenorm_channels_affine": "InstanceNorm1d(3, affine=True)(ones(2, 4, 3))",
    "convt_output_size": "ConvTranspose1d(1, 1, 2, stride=2)(ones(1, 1, 3), output_size=[20])",
    "softmax2d_ndim": "Softmax2d()(ones(3))",
}


def _bad_input_case(text):
    return lambda nn, ones: eval(text, {**vars(nn), "ones": ones})  # noqa: S307


CASES.update({f"bad input {k}": _bad_input_case(v) for k, v in _BAD_INPUTS.items()})

# Layer reprs as PyTorch prints them (the ctor text is evaluated with either library).
_REPRS = [
    "Conv1d(2, 3, 3, padding='valid')", "Conv2d(2, 3, 3, padding='same', padding_mode='reflect')",
    "FractionalMaxPool2d(2, output_size=3)", "FractionalMaxPool3d(2, output_ratio=0.5)",
    "MaxUnpool1d(2)", "MaxUnpool2d(2, stride=1, padding=1)", "MaxUnpool3d(2)",
    "RNN(3, 4, 2, nonlinearity='relu', bias=False, batch_first=True, dropout=0.5, "
    "bidirectional=True)", "RNNCell(3, 4, bias=False, nonlinearity='relu')", "RNNCell(3, 4)",
    "LSTM(3, 4, num_layers=2, proj_size=2)",
    "MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False, add_bias_kv=True)",
    "TransformerEncoderLayer(8, 2, 16, activation='gelu', norm_first=True)",
    "Embedding(5, 3, padding_idx=1, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, "
    "sparse=True)", "EmbeddingBag(5, 3, mode='sum', padding_idx=1, max_norm=2.0, "
    "norm_type=1.0, scale_grad_by_freq=True)",
    "ReLU(inplace=True)", "ReLU6(True)", "LeakyReLU(0.2, True)", "ELU(0.5, True)",
    "CELU(0.5, True)", "SELU(True)", "SiLU(True)", "Mish(True)", "RReLU(0.1, 0.2, True)",
    "Hardtanh(-2, 3, True)", "Threshold(0.1, 20, True)", "Hardswish(True)",
    "Hardsigmoid(True)", "ReLU()", "Hardtanh()", "Softshrink(0.3)",
    "AdaptiveLogSoftmaxWithLoss(16, 10, [4, 6], head_bias=True)",
]


def _repr_case(text):
    return lambda nn, ones: repr(eval(text, vars(nn)))  # noqa: S307 (the case's own text)


CASES.update({f"repr {text}": _repr_case(text) for text in _REPRS})


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the message is the result
        return e
    return None


def run_case(fn, nn, ones):
    """The case's result, or ``{"raises": ExceptionTypeName}``."""
    try:
        return {"value": fn(nn, ones)}
    except Exception as e:  # noqa: BLE001 - the exception type is the result
        return {"raises": type(e).__name__}
