"""Runs every benchmark script in this folder and prints their figures.

Benchmarks print numbers; they assert nothing about time. Each script skips cleanly (exit 0)
when the data it needs, such as the public trace, is absent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        status |= subprocess.run([sys.executable, str(script)], check=False).returncode
        print(flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
