"""Tests that the README tells the truth: its example runs and its commands exist."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run_and_print_what_they_say():
    """Tests that each of the README's Python blocks runs and prints the values in its
    comments."""
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})
        printed = out.getvalue().splitlines()
        claimed = [
            c.strip() for c in re.findall(r"print\(.*\)\s+# (.*?)(?: :|$)", block, flags=re.M)
        ]
        assert printed == claimed


def test_readme_names_exactly_the_two_setup_commands():
    """Tests that the README's set-up commands are make demo and make test, both in Makefile."""
    text = README.read_text()
    makefile = (README.parent / "Makefile").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in text
        assert re.search(rf"^{target}:", makefile, flags=re.M)
