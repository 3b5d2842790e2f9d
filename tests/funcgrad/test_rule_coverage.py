"""Every primitive has every rule: impl, shape/dtype rule, JVP, batching, transpose if linear.

A primitive added without its rules fails here, not at a user's call site.
"""

from __future__ import annotations

import funcgrad  # noqa: F401  (imports and registers every primitive)
from funcgrad.core import Primitive, primitive_registry
from funcgrad.interpreters.batching import batch_rules
from funcgrad.interpreters.jvp import jvp_rules, linear_jvp_primitives
from funcgrad.interpreters.transpose import linear_primitives, transpose_rules


def missing_rules(prims: list[Primitive]) -> dict[str, list[str]]:
    """Primitive name -> the rules it lacks."""
    out: dict[str, list[str]] = {}
    for p in prims:
        lacks = []
        if p.impl is None:
            lacks.append("impl")
        if p.abstract_eval is None:
            lacks.append("shape/dtype rule")
        if p not in jvp_rules:
            lacks.append("jvp")
        if p not in batch_rules:
            lacks.append("batching")
        if (p in linear_jvp_primitives or p in linear_primitives) and p not in transpose_rules:
            lacks.append("transpose")
        if lacks:
            out[p.name] = lacks
    return out


def _library_primitives() -> list[Primitive]:
    """Every primitive the library defines: module attributes across the funcgrad package.

    (The global registry also holds primitives that tests make for themselves.)
    """
    import importlib
    import pkgutil

    import funcgrad as pkg

    found: dict[int, Primitive] = {}
    for info in pkgutil.walk_packages(pkg.__path__, "funcgrad."):
        mod = importlib.import_module(info.name)
        for value in vars(mod).values():
            if isinstance(value, Primitive):
                found[id(value)] = value
    assert all(p in primitive_registry for p in found.values())
    return list(found.values())


def test_every_primitive_has_all_rules() -> None:
    missing = missing_rules(_library_primitives())
    assert not missing, f"primitives missing rules: {missing}"


def test_primitive_names_unique() -> None:
    names = [p.name for p in _library_primitives()]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"two primitives share a name: {dupes}"


def test_a_new_primitive_without_rules_is_reported() -> None:
    p = Primitive("test_rule_coverage_probe")
    try:
        assert missing_rules([p]) == {
            "test_rule_coverage_probe": ["impl", "shape/dtype rule", "jvp", "batching"]
        }
    finally:
        primitive_registry.remove(p)


def test_registry_is_substantial() -> None:
    # Guards against the walk silently seeing nothing (e.g. ops not imported).
    assert len(_library_primitives()) >= 10
