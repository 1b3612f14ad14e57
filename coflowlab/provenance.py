"""Provenance of a result: what produced it, from which input, with which software.

Every ``--json`` document of the command line carries one :func:`provenance` record, so that a
number in a paper's table can be traced back to the file (by its SHA-256), the algorithm, its
parameters and seed, and the exact versions of coflowlab, Python and the solver.
"""

from __future__ import annotations

import hashlib
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["file_sha256", "package_version", "provenance"]

# the distribution behind each solver name of coflowlab.solvers
_SOLVER_PACKAGES = {"highs": "highspy", "cbc": "PuLP", "gurobi": "gurobipy"}


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, as hex.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "x.txt")
    ...     _ = open(p, "w").write("abc")
    ...     file_sha256(p)[:16]
    'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_version(name: str) -> str | None:
    """The installed version of a distribution, or ``None`` when it is not installed.

    Examples
    --------
    >>> package_version("no-such-distribution-xyz") is None
    True
    """
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def provenance(
    command: str,
    *,
    input_path: str | Path | None = None,
    algorithm: str | None = None,
    params: dict[str, Any] | None = None,
    seed: int | None = None,
    solver: str | None = None,
    time_model: str | None = None,
) -> dict[str, Any]:
    """A JSON-ready record of what produced a result.

    Keys: ``coflowlab_version``, ``python``, ``command``, ``input`` (``path`` and ``sha256``,
    or ``None``), ``algorithm``, ``params`` (as given), ``seed``, ``time_model`` and ``solver``
    (``name`` and ``version``, or ``None`` when no solver is involved).

    Examples
    --------
    >>> doc = provenance("solve", algorithm="bound-smith", solver="highs")
    >>> doc["command"], doc["solver"]["name"], doc["input"]
    ('solve', 'highs', None)
    """
    from . import __version__

    source = None
    if input_path is not None:
        source = {"path": str(input_path), "sha256": file_sha256(input_path)}
    return {
        "coflowlab_version": __version__,
        "python": platform.python_version(),
        "command": command,
        "input": source,
        "algorithm": algorithm,
        "params": dict(params or {}),
        "seed": seed,
        "time_model": time_model,
        "solver": (
            None
            if solver is None
            else {"name": solver, "version": package_version(_SOLVER_PACKAGES.get(solver, solver))}
        ),
    }
