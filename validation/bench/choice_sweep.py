"""cuBLAS's kernel choices over the GEMM choice map's grid (roofcalc/expected/choice.py grid_shapes), as
the probe measures them (roofcalc/probe/torch_ops.py gemm_choices), with the device and versions.

    python3 validation/bench/choice_sweep.py --out choice-sweep.json
    python3 validation/bench/choice_sweep.py --rows --out row-sweep.json   # one-row products only
    python3 validation/bench/choice_sweep.py --cols --out col-sweep.json   # one-column products only
    python3 validation/bench/choice_sweep.py --shallow --out shallow-sweep.json   # large outputs, k 1-32
    python3 validation/bench/choice_sweep.py --shallow-aligned --out shallow-aligned.json   # its first aligned columns
    python3 validation/bench/choice_sweep.py --shallow-aligned-rest --out shallow-aligned-rest.json   # the others
    python3 validation/bench/choice_sweep.py --refine BASE.json.gz --out refine.json   # BASE's refinement only

Needs torch with CUDA; roofcalc importable (the repository root on PYTHONPATH), not pydantic.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import benchlib  # noqa: E402

from roofcalc.probe.torch_ops import gemm_choices, refined_choices  # noqa: E402


def _choice_module():
    """roofcalc/expected/choice.py by its path: the package's expected/ imports pydantic, which
    the device's python lacks; choice.py itself needs none."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roofcalc", "expected", "choice.py")
    spec = importlib.util.spec_from_file_location("choice", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["choice"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="choice-sweep.json")
    ap.add_argument(
        "--rows", action="store_true", help="the one-row plane (choice.row_shapes), each kernel's block too"
    )
    ap.add_argument(
        "--cols", action="store_true", help="the one-column plane (choice.column_shapes), each kernel's block too"
    )
    ap.add_argument("--shallow", action="store_true", help="the shallow plane (choice.shallow_shapes)")
    ap.add_argument(
        "--shallow-aligned",
        action="store_true",
        help="the shallow plane's first columns of 4- and 8-byte alignment (choice.SHALLOW2_COLS: kernels/shallow2)",
    )
    ap.add_argument(
        "--shallow-aligned-rest",
        action="store_true",
        help="the shallow plane's other columns of 4- and 8-byte alignment (choice.shallow_aligned_shapes)",
    )
    ap.add_argument(
        "--refine",
        metavar="BASE",
        help="a committed choice sweep (.json.gz): sweep its refinement (choice.refine_shapes, "
        "choice.REFINE_PASSES passes, as the probe does after its grid) and write those records only",
    )
    args = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    choice = _choice_module()
    grid = (
        choice.row_shapes
        if args.rows
        else choice.column_shapes
        if args.cols
        else choice.shallow_shapes
        if args.shallow
        else (lambda dt: choice.shallow_aligned_shapes(dt, choice.SHALLOW2_COLS))
        if args.shallow_aligned
        else (
            lambda dt: choice.shallow_aligned_shapes(
                dt, tuple(n for n in choice.SHALLOW_COLS_ALIGNED.get(dt, ()) if n not in choice.SHALLOW2_COLS)
            )
        )
        if args.shallow_aligned_rest
        else choice.grid_shapes
    )
    if args.refine and (args.rows or args.cols or args.shallow or args.shallow_aligned or args.shallow_aligned_rest):
        ap.error("--refine refines the grid's sweep alone: give it without the plane options")
    if args.refine:
        import gzip
        import json

        with open(args.refine, "rb") as f:
            base = json.loads(gzip.decompress(f.read()))["cases"]
        records = refined_choices(torch, base, choice)[len(base) :]
    else:
        records = gemm_choices(torch, {dt: grid(dt) for dt in choice.DTYPES}, block=args.rows or args.cols)
    counts: dict[str, int] = {}
    for r in records:
        fam, _, _ = choice.classify(r["kernels"], r["m"], r["n"])
        counts[f"{r['dtype']} {fam}"] = counts.get(f"{r['dtype']} {fam}", 0) + 1
    print(f"{len(records)} shapes in {time.time() - t0:.1f} s: {counts}", flush=True)
    kind = (
        "gemm-row-sweep"
        if args.rows
        else "gemm-column-sweep"
        if args.cols
        else "gemm-shallow-sweep"
        if args.shallow or args.shallow_aligned or args.shallow_aligned_rest
        else "gemm-choice-refine"
        if args.refine
        else "gemm-choice-sweep"
    )
    benchlib.write_record(args.out, kind, dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
