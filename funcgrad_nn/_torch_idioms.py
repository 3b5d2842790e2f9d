"""Notes for errors that PyTorch tensor idioms raise on funcgrad's arrays.

A module's ``forward`` ported from PyTorch keeps tensor methods (``x.permute(0, 2, 1)``,
``x.view(b, -1)``, ``x.size(-1)``, ``dim=``) that NumPy arrays and funcgrad's traced values
do not have, or have with NumPy's meaning. The error NumPy raises names NumPy's view of the
call (``'int' object is not callable``, ``axes don't match array``); when one escapes a
module call, :func:`add_torch_idiom_note` attaches a note (PEP 678, shown under the
traceback) with the funcgrad spelling. :data:`RULES` is the table: one row per error.
"""

from __future__ import annotations

import re

import funcgrad.numpy as fnp

__all__ = ["RULES", "TENSOR_METHODS", "add_torch_idiom_note", "torch_idiom_note"]

#: PyTorch tensor attributes that NumPy arrays lack -> the funcgrad spelling
TENSOR_METHODS: dict[str, str] = {
    "permute": "x.transpose(0, 2, 1) (NumPy's transpose takes the whole axis order)",
    "unsqueeze": "fnp.expand_dims(x, d) or x[:, None]",
    "contiguous": "nothing: drop .contiguous() (arrays need no layout call)",
    "masked_fill": "fnp.where(mask, value, x)",
    "chunk": "fnp.split(x, range(c, n, c), axis=d) with n = x.shape[d] and c = -(-n // chunks) "
             "(fnp.array_split sizes the pieces differently)",
    "split": "fnp.split(x, range(k, x.shape[d], k), axis=d) for pieces of size k, "
             "fnp.split(x, np.cumsum(sizes)[:-1], axis=d) for a list of sizes",
    "expand": "fnp.broadcast_to(x, shape) (write x.shape[i] where PyTorch's sizes say -1)",
    "expand_as": "fnp.broadcast_to(x, y.shape)",
    "view_as": "x.reshape(y.shape)",
    "type_as": "x.astype(y.dtype)",
    "float": "x.astype(fnp.float32)",
    "double": "x.astype(fnp.float64)",
    "half": "x.astype(fnp.float16)",
    "long": "x.astype(fnp.int64)",
    "int": "x.astype(fnp.int32)",
    "bool": "x.astype(bool)",
    "to": "x.astype(dtype) for a dtype, funcgrad.device_put(x, device) for a device",
    "dim": "x.ndim",
    "numel": "x.size",
    "detach": "funcgrad.lax.stop_gradient(x) (or drop it: nothing is recorded)",
    "clone": "x.copy() (or drop it: arrays in a forward are not modified in place)",
    "cpu": "drop .cpu() (funcgrad.device_get(x) for a host copy)",
    "cuda": "funcgrad.device_put(x, 'gpu')",
    "numpy": "drop .numpy() (funcgrad.device_get(x) for a host copy)",
    "t": "x.T",
    "mm": "x @ y",
    "bmm": "x @ y",
    "matmul": "x @ y",
    "softmax": "nn.F.softmax(x, dim=d)",
    "log_softmax": "nn.F.log_softmax(x, dim=d)",
    "relu": "nn.F.relu(x)",
    "sigmoid": "nn.F.sigmoid(x)",
    "tanh": "fnp.tanh(x)",
    "exp": "fnp.exp(x)",
    "log": "fnp.log(x)",
    "sqrt": "fnp.sqrt(x)",
    "abs": "abs(x)",
    "pow": "x ** p",
    "norm": "fnp.linalg.norm(x, axis=d)",
    "add": "x + y",
    "sub": "x - y",
    "mul": "x * y",
    "div": "x / y",
    "clamp": "fnp.clip(x, lo, hi)",
    "clamp_min": "fnp.maximum(x, lo)",
    "narrow": "slicing: x[:, start:start + length]",
    "index_select": "fnp.take(x, idx, axis=d)",
    "gather": "fnp.take_along_axis(x, idx, axis=d)",
    "masked_select": "x[mask] (eagerly; under jit fnp.where(mask, x, 0))",
    "new_zeros": "fnp.zeros(shape, x.dtype)",
    "new_ones": "fnp.ones(shape, x.dtype)",
    "new_full": "fnp.full(shape, value, x.dtype)",
    "new_tensor": "fnp.asarray(data, x.dtype)",
    "repeat_interleave": "fnp.repeat(x, k, axis=d)",
    "requires_grad": "nothing: parameters are plain arrays without the flag. "
                     "model.parameters() already yields only the trainable ones (drop a "
                     "filter on p.requires_grad); freeze with module.requires_grad_(False) or "
                     "module.w = nn.Parameter(module.w, requires_grad=False)",
    "requires_grad_": "module.requires_grad_(False) (arrays carry no flag)",
    "grad": "the gradients nn.grad returns (arrays have no .grad)",
    "backward": "nn.grad / nn.value_and_grad of the loss function (there is no .backward(); "
                "see docs/autograd.md)",
    "topk": "funcgrad.lax.top_k(x, k) (along the last axis)",
    "unbind": "fnp.unstack(x, axis=d)",
    "movedim": "fnp.moveaxis(x, src, dst)",
    "swapdims": "fnp.swapaxes(x, d0, d1)",
    "is_floating_point": "fnp.issubdtype(x.dtype, fnp.floating)",
    "element_size": "x.itemsize",
    "type": "x.astype(dtype) (x.dtype for the type)",
    "stride": "x.strides (NumPy's, in bytes)",
    "is_contiguous": "x.flags.c_contiguous (or nothing: drop the check)",
    "pin_memory": "nothing: drop it",
    "neg": "-x",
    "eq": "x == y", "ne": "x != y", "lt": "x < y", "le": "x <= y", "gt": "x > y", "ge": "x >= y",
    "lerp": "x + w * (y - x)",
    "rsqrt": "1 / fnp.sqrt(x) (funcgrad.lax.rsqrt(x))",
    "logsumexp": "funcgrad.scipy.special.logsumexp(x, axis=d)",
    "erf": "funcgrad.scipy.special.erf(x)",
    "scatter": "x.at[index].set(values) (fnp.at(x)[index].set(values) on a host array)",
    "scatter_add": "x.at[index].add(values) (fnp.at(x)[index].add(values) on a host array)",
    "index_add": "x.at[index].add(values) (fnp.at(x)[index].add(values) on a host array)",
    "index_fill": "x.at[index].set(value) (fnp.at(x)[index].set(value) on a host array)",
    "bernoulli": "funcgrad.random.bernoulli(key, p) (random numbers take an explicit key)",
    "multinomial": "funcgrad.random.categorical(key, logits) (random numbers take an explicit key)",
    "uniform_": "funcgrad.random.uniform(key, shape) (random numbers take an explicit key; "
                "nn.init.uniform_ for a parameter)",
    "normal_": "funcgrad.random.normal(key, shape) (random numbers take an explicit key; "
               "nn.init.normal_ for a parameter)",
    "fill_": "x = fnp.full_like(x, value) (no in-place updates in a traced step)",
    "zero_": "x = fnp.zeros_like(x) (no in-place updates in a traced step)",
    "retain_grad": "nothing: nn.grad(..., argnums=...) returns the gradients asked for",
    "register_hook": "the hooks of docs/autograd.md",
}


def _fallback(name: str) -> str | None:
    """The spelling of a tensor method the table does not list: an in-place ``x.op_()``
    (arrays in a transformation are immutable) or a method that is a ``funcgrad.numpy``
    function."""
    if name.endswith("_") and not name.startswith("_"):
        base = name[:-1]
        spelled = TENSOR_METHODS.get(base) or (f"fnp.{base}(x, ...)" if hasattr(fnp, base)
                                               else None)
        if spelled is not None:
            return f"{spelled}, assigned: x = ... (no in-place updates in a traced step)"
        return None
    if hasattr(fnp, name):
        return f"fnp.{name}(x, ...) (NumPy's function; dim= is axis=)"
    return None

_ARRAY_TYPE = r"'(?:[\w.]*ndarray\w*|\w*Tracer|\w*StrictArray\w*)'"

#: (exception types, pattern of the message, note); ``{0}`` in a note is the pattern's
#: first group
RULES: list[tuple[tuple[type, ...], re.Pattern[str], str]] = [
    ((AttributeError,), re.compile(_ARRAY_TYPE + r" object has no attribute '(\w+)'"),
     "PyTorch's x.{0} on funcgrad's arrays (NumPy arrays, NumPy's methods): {1}"),
    ((TypeError,), re.compile(r"^'int' object is not callable"),
     "If this is PyTorch's x.size() or x.size(d): it is x.shape or x.shape[d] here (an "
     "array's .size is its element count)"),
    ((TypeError,), re.compile(r"unexpected keyword argument '(dim|keepdim)'"),
     "PyTorch's dim= and keepdim= are NumPy's axis= and keepdims= (x.max(axis=d) gives the "
     "values only: x.argmax(axis=d) the indices)"),
    ((ValueError, TypeError), re.compile(
        r"Type must be a sub-type of ndarray type|view: type= is not supported|"
        r"Cannot interpret '-?\d+' as a data type|view\(\) takes"),
     "PyTorch's x.view(*shape) is x.reshape(*shape) (NumPy's view takes a dtype)"),
    ((ValueError,), re.compile(r"axes don't match array|transpose: axes .* don't match"),
     "PyTorch's x.transpose(d0, d1) swaps two axes: fnp.swapaxes(x, d0, d1) (NumPy's "
     "transpose takes the whole axis order; on a 2-D array x.transpose(0, 1) is the identity)"),
    ((TypeError, ValueError), re.compile(
        # NumPy's flatten(order) refuses an int order ("order must be str, not int"), CuPy's
        # too, in its own words ("order not understood", CuPy 14's _normalize_order)
        r"order must be str, not int|ravel: order must be one of .*\(got -?\d+\)|"
        r"flatten\(\) takes|^order not understood$"),
     "PyTorch's x.flatten(start_dim) is x.reshape(*x.shape[:start_dim], -1) (nn.Flatten() "
     "flattens from axis 1)"),
    ((TypeError,), re.compile(r"repeat\(\) takes"),
     "PyTorch's x.repeat(*sizes) tiles: fnp.tile(x, sizes) (NumPy's repeat repeats each "
     "element, PyTorch's repeat_interleave)"),
    ((ValueError,), re.compile(r"cannot select an axis to squeeze out|squeeze: cannot select "
                               r"axis"),
     "PyTorch's x.squeeze(d) leaves an axis whose size is not 1 alone, NumPy's raises: "
     "x.squeeze(d) if x.shape[d] == 1 else x"),
]


def torch_idiom_note(exc: BaseException) -> str | None:
    """The note for ``exc`` if a PyTorch idiom on an array raised it, else None.

    >>> torch_idiom_note(AttributeError("'numpy.ndarray' object has no attribute 'permute'"))
    "PyTorch's x.permute on funcgrad's arrays (NumPy arrays, NumPy's methods): x.transpose(0, 2, 1) (NumPy's transpose takes the whole axis order)"
    >>> torch_idiom_note(AttributeError("'Foo' object has no attribute 'permute'")) is None
    True
    """
    message = str(exc)
    for types, pattern, note in RULES:
        if not isinstance(exc, types):
            continue
        m = pattern.search(message)
        if m is None:
            continue
        if types == (AttributeError,):
            fix = TENSOR_METHODS.get(m.group(1)) or _fallback(m.group(1))
            if fix is None:
                return None
            return note.format(m.group(1), fix)
        return note
    return None


def add_torch_idiom_note(exc: BaseException) -> None:
    """Attach :func:`torch_idiom_note` to ``exc`` once (Python 3.11's ``add_note``).

    >>> e = TypeError("'int' object is not callable")
    >>> add_torch_idiom_note(e); add_torch_idiom_note(e)
    >>> len(getattr(e, "__notes__", [None]))
    1
    """
    if getattr(exc, "_funcgrad_torch_note", False) or not hasattr(exc, "add_note"):
        return
    note = torch_idiom_note(exc)
    if note is not None:
        exc.add_note(note)
        try:
            exc._funcgrad_torch_note = True  # type: ignore[attr-defined]
        except AttributeError:  # an exception type that takes no attributes: noted once anyway
            pass
