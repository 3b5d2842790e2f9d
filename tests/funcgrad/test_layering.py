"""DESIGN.md's layering: imports point down only.

funcgrad_nn -> funcgrad.api/numpy -> ops -> interpreters -> core/ir/avals -> backend.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Lower number = lower layer. A module may import only modules of its layer or below.
LAYERS = {
    "funcgrad.errors": 0,
    "funcgrad._cache": 0,
    "funcgrad.backend": 0,
    "funcgrad._strict_array": 0,
    "funcgrad.tree_util": 0,
    "funcgrad.avals": 1,
    "funcgrad.core": 2,
    "funcgrad.ir": 3,
    "funcgrad.interpreters": 4,
    "funcgrad.ops": 5,
    "funcgrad.compile": 5,
}
TOP = 6  # api, numpy, scipy, random, test_util, __init__...
NN = 7


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
                               "funcgrad.numpy"):
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
