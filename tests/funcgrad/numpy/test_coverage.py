"""Every public NumPy callable is in funcgrad.numpy or listed (with a reason) in docs/numpy.md."""

from __future__ import annotations

import inspect
import pathlib
import re

import numpy as np

import funcgrad.numpy as fnp

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "numpy.md"


def _listed_as_missing() -> set[str]:
    text = DOC.read_text()
    section = text.split("## Not provided, and why", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in re.findall(r"^\| `(.+?)` \|", section, re.M):
        names.update(n.strip() for n in row.replace("`", "").split(","))
    return names


def test_every_numpy_callable_is_provided_or_documented():
    public = [n for n in dir(np) if not n.startswith("_")
              and not inspect.ismodule(getattr(np, n)) and callable(getattr(np, n))]
    undocumented = sorted(n for n in public if not hasattr(fnp, n)
                          and n not in _listed_as_missing())
    assert not undocumented, f"add to funcgrad.numpy or to docs/numpy.md: {undocumented}"


def test_documented_gaps_are_really_gaps():
    stale = sorted(n for n in _listed_as_missing() if hasattr(fnp, n))
    assert not stale, f"provided now, remove from docs/numpy.md's list: {stale}"
