"""Start-up of `roofcalc op gemm --m 8192 --hw h100` against importing the libraries it needs.

Paired runs (baseline, then roofcalc, alternating) of fresh processes, median of each and the
ratio of the medians. Run from anywhere with roofcalc installed:

    python benchmarks/startup.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

IMPORTS = (
    "import click, yaml; from pydantic import BaseModel; from rich.console import Console; from rich.table import Table"
)
BASELINE = [sys.executable, "-c", IMPORTS]
# The floor of any command that validates its input with pydantic: the same imports, one model of
# one field defined and validated once (pydantic then imports its field and type machinery and,
# for the first validator, importlib.metadata through its plugin loader).
ONE_MODEL = [sys.executable, "-c", IMPORTS + "\nclass M(BaseModel):\n    x: int = 1\nM(x=2)"]


def timed(cmd: list[str]) -> float:
    env = None
    if cmd[0] == "cache-off":  # the same command with the cache of validated files turned off
        cmd, env = cmd[1:], {**os.environ, "ROOFCALC_CACHE": ""}
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    # The console script installed beside this interpreter: a shim on PATH (pyenv's is a bash
    # script that starts a second process) would be timed along with roofcalc.
    beside = Path(sysconfig.get_path("scripts")) / "roofcalc"
    exe = str(beside) if beside.exists() else shutil.which("roofcalc")
    cases = {
        "baseline imports": BASELINE,
        "baseline + one pydantic model": ONE_MODEL,
        "roofcalc op gemm --m 8192 --hw h100": [exe or "roofcalc", "op", "gemm", "--m", "8192", "--hw", "h100"],
        "roofcalc op gemm ... --json": [exe or "roofcalc", "op", "gemm", "--m", "8192", "--hw", "h100", "--json"],
        # every built-in file parsed and validated again, as on the first run after an upgrade
        "roofcalc op gemm ... (cache off)": [
            "cache-off",
            exe or "roofcalc",
            "op",
            "gemm",
            "--m",
            "8192",
            "--hw",
            "h100",
        ],
        "roofcalc --help": [exe or "roofcalc", "--help"],
    }
    for cmd in cases.values():  # warm the file cache and the bytecode caches
        timed(cmd)
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.runs):
        for name, cmd in cases.items():
            samples[name].append(timed(cmd))
    base = statistics.median(samples["baseline imports"])
    print(f"{'command':40s} {'median':>9s} {'p10':>9s} {'p90':>9s} {'x baseline':>10s}")
    for name, xs in samples.items():
        xs = sorted(xs)
        med = statistics.median(xs)
        print(
            f"{name:40s} {med * 1e3:7.1f}ms {xs[len(xs) // 10] * 1e3:7.1f}ms {xs[len(xs) * 9 // 10] * 1e3:7.1f}ms "
            f"{med / base:9.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
