"""Runs the docstring examples of every coflowlab module.

pytest's ``--doctest-modules`` imports files by path, which does not work for the folders that
``setup.cfg`` maps into the ``coflowlab`` namespace; so the examples are run here with
:mod:`doctest`, module by module, importing each by its real name.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import coflowlab

SUBPACKAGES = ["formulations", "approximations", "heuristics", "instances", "reports"]


def module_names() -> list[str]:
    names = ["coflowlab"]
    for info in pkgutil.walk_packages(coflowlab.__path__, "coflowlab."):
        names.append(info.name)
    for sub in SUBPACKAGES:
        pkg = importlib.import_module(f"coflowlab.{sub}")
        names.append(pkg.__name__)
        names += [i.name for i in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}.")]
    return sorted(set(names) - {"coflowlab.__main__"})


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples(name):
    """Tests that the module's docstring examples run and print what they claim."""
    module = importlib.import_module(name)
    result = doctest.testmod(
        module,
        extraglobs={"cl": coflowlab, "np": np},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_core_modules_have_examples():
    """Tests that the core's public modules carry runnable examples at all."""
    attempted = 0
    for name in (
        "coflowlab.instance",
        "coflowlab.schedules",
        "coflowlab.verifier",
        "coflowlab.metrics",
    ):
        finder = doctest.DocTestFinder()
        attempted += sum(len(t.examples) for t in finder.find(importlib.import_module(name)))
    assert attempted >= 15
