"""Every fenced Python example in docs/*.md and README.md runs as copied.

Blocks written as ``>>>`` sessions are doctests (collected by ``--doctest-glob=*.md``, their
outputs checked); the plain blocks are run here, each on its own in a fresh namespace, as a
reader pasting it into a new interpreter would.
"""

from __future__ import annotations

import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _plain_blocks() -> list[tuple[str, str]]:
    out = []
    for path in sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"]):
        text = path.read_text()
        for m in _FENCE.finditer(text):
            code = m.group(1)
            if code.lstrip().startswith(">>>"):
                continue  # a doctest
            line = text.count("\n", 0, m.start()) + 2
            out.append((f"{path.relative_to(ROOT)}:{line}", code))
    return out


BLOCKS = _plain_blocks()


def test_the_docs_have_plain_examples() -> None:
    assert len(BLOCKS) >= 5  # the collection itself works


@pytest.mark.parametrize("where, code", BLOCKS, ids=[w for w, _ in BLOCKS])
def test_plain_example_runs_as_copied(where: str, code: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example that warns is not an example to copy
        exec(compile(code, where, "exec"), {"__name__": "__docs_example__"})
