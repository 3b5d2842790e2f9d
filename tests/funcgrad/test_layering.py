"""The layer order of docs/architecture.md: imports point down only.

funcgrad_nn -> api/numpy/lax/scipy/random/flatten_util -> ops -> interpreters -> compile -> ir
-> core -> avals -> errors/config/backend/tree_util. Lower layers own rule tables that the
primitives fill; nothing reaches upward through ``sys.modules``.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Lower number = lower layer. A module may import only modules of its layer or below.
LAYERS = {
    "funcgrad.errors": 0,
    "funcgrad._cache": 0,
    "funcgrad._gc": 0,
    "funcgrad._stack_room": 0,
    "funcgrad.config": 0,
    "funcgrad.backend": 0,
    "funcgrad._strict_array": 0,
    "funcgrad.tree_util": 0,
    "funcgrad.avals": 1,
    "funcgrad.core": 2,
    "funcgrad.ir": 3,
    "funcgrad.jaxpr_codec": 3,
    "funcgrad.compile": 4,
    "funcgrad.interpreters": 5,
    "funcgrad.ops": 6,
}
TOP = 7  # api, api_jit, stages, export, api_vmap, flatten_util, numpy, lax, scipy, random, test_util, __init__
NN = 8


def _layer(module: str) -> int:
    if module.startswith("funcgrad_nn"):
        return NN
    best, best_len = TOP, -1
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
            best, best_len = layer, len(prefix)
    return best


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: pathlib.Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in ("funcgrad", "funcgrad.ops", "funcgrad.interpreters",
                               "funcgrad.numpy", "funcgrad.compile"):
                # `from funcgrad import tree_util` imports the submodule funcgrad.tree_util
                out.extend((f"{node.module}.{a.name}", node.lineno) for a in node.names)
            else:
                out.append((node.module, node.lineno))
    return out


def test_imports_point_down() -> None:
    violations = []
    for pkg in ("funcgrad", "funcgrad_nn"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            mod = _module_name(path)
            mine = _layer(mod)
            for imported, line in _imports(path):
                if not imported.startswith(("funcgrad", "funcgrad_nn")):
                    continue
                if imported in ("funcgrad", "funcgrad_nn"):
                    theirs = TOP if imported == "funcgrad" else NN
                else:
                    theirs = _layer(imported)
                if theirs > mine:
                    violations.append(f"{mod} (layer {mine}) imports {imported} "
                                      f"(layer {theirs}) at line {line}")
    assert not violations, "upward imports:\n" + "\n".join(violations)


def test_compiler_imports_only_the_ir_below_it() -> None:
    """compile/ consumes the tables the primitives fill: it never imports ops or interpreters."""
    allowed = ("funcgrad.compile", "funcgrad.core", "funcgrad.ir", "funcgrad.avals",
               "funcgrad.backend", "funcgrad.config", "funcgrad.errors", "funcgrad._cache",
               "funcgrad._gc")
    bad = []
    for path in sorted((ROOT / "funcgrad" / "compile").rglob("*.py")):
        for imported, line in _imports(path):
            if imported.startswith("funcgrad") and not imported.startswith(allowed):
                bad.append(f"{path.name}:{line} imports {imported}")
    assert not bad, "the compiler reaches into higher layers:\n" + "\n".join(bad)


def _is_sys_modules(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "modules"
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


# Lookups in sys.modules that reach no layer of ours, with why.
SYS_MODULES_ALLOWED = {
    # a saved namedtuple's class, found among the user's imported modules (loading a file
    # never imports one)
    "funcgrad_nn/serialization.py",
}


def test_no_sys_modules_lookups() -> None:
    """No module reaches a higher layer by looking it up in ``sys.modules`` (asking whether
    an optional library such as CuPy is loaded, ``"cupy" in sys.modules``, is fine, and so is
    registering a module object a package builds, as ``funcgrad_nn.modules`` does for the
    submodule names of ``torch.nn.modules``)."""
    bad = []
    for pkg in ("funcgrad", "funcgrad_nn"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if str(path.relative_to(ROOT)) in SYS_MODULES_ALLOWED:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                lookup = (isinstance(node, ast.Subscript) and _is_sys_modules(node.value)
                          and not isinstance(node.ctx, ast.Store))
                lookup = lookup or (isinstance(node, ast.Call)
                                    and isinstance(node.func, ast.Attribute)
                                    and _is_sys_modules(node.func.value))
                if lookup:
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "sys.modules lookups:\n" + "\n".join(bad)


# Function-local imports of funcgrad modules that are allowed, with why: anything else is an
# import loop dodged, which the layer order says how to fix.
LOCAL_IMPORTS_ALLOWED = {
    ("funcgrad/backend.py", "funcgrad"),  # the strict test backend, loaded when first named
    ("funcgrad/ops/shape.py", "funcgrad.ops"),  # the ops domain loop: indexing builds on shape
    # kstest(x, "norm"): a distribution the user names, looked up in the package namespace
    # (funcgrad.scipy.stats imports _ks for kstest itself)
    ("funcgrad/scipy/stats/_ks.py", "funcgrad.scipy.stats"),
}


def test_no_function_local_imports_dodging_loops() -> None:
    bad = []
    for pkg in ("funcgrad",):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            for fn in ast.walk(ast.parse(path.read_text())):
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom) and node.module:
                        mod = node.module
                    elif isinstance(node, ast.Import):
                        mod = node.names[0].name
                    else:
                        continue
                    if mod.startswith("funcgrad") and (rel, mod) not in LOCAL_IMPORTS_ALLOWED:
                        bad.append(f"{rel}:{node.lineno} {fn.name} imports {mod}")
    assert not bad, "function-local imports (import at module level):\n" + "\n".join(bad)


def test_no_numpy_compute_in_ops_impls() -> None:
    """Primitive implementations reach arrays through the backend, never `numpy.<fn>(x)`.

    ops modules may import numpy for metadata (dtypes, shapes); impl functions (named
    ``_*_impl`` or defined inside ``impl``) must not call numpy array functions.
    """
    allowed = {"dtype", "result_type", "prod", "issubdtype", "iinfo", "finfo", "ndim",
               "shape", "integer", "floating", "generic", "ndarray", "bool_", "int64",
               "float64", "intp", "broadcast_shapes", "promote_types", "can_cast", "inf",
               "pi", "nan", "newaxis", "float32", "complexfloating", "number", "inexact",
               "signedinteger", "unsignedinteger", "bool", "isscalar", "errstate",
               "complex128", "complex64", "int32", "uint8", "cumprod", "argsort", "nextafter",
               "AxisError", "euler_gamma", "e", "iscomplexobj", "float16", "void"}
    bad = []
    for path in sorted((ROOT / "funcgrad" / "ops").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef) or "impl" not in fn.name:
                continue
            for node in ast.walk(fn):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id in ("numpy", "np") and node.attr not in allowed):
                    bad.append(f"{path.name}:{node.lineno} {fn.name} uses numpy.{node.attr}")
    assert not bad, "numpy used for array compute in impls (use backend.xp_for):\n" + \
        "\n".join(bad)


def test_numpy_namespace_does_not_import_scipy() -> None:
    """funcgrad.numpy wraps ops; it never reaches into funcgrad.scipy (``i0`` is a primitive
    in ops/special.py that both wrap)."""
    bad = []
    for path in sorted((ROOT / "funcgrad" / "numpy").rglob("*.py")):
        for imported, line in _imports(path):
            if imported == "funcgrad.scipy" or imported.startswith("funcgrad.scipy."):
                bad.append(f"{path.name}:{line} imports {imported}")
    assert not bad, "\n".join(bad)
