"""Derive ``expected.gemm_kernel_floor_extra_s`` of a registry hardware file from a
validation/bench/gemm_floors.py record, and print it as YAML.

For each of cuBLAS's pre-Hopper paths (simt, tf32, unaligned, word), the record holds a
1024 x 1024 GEMM of one k-block timed per node of a CUDA graph, as does the TMA path (bf16,
k 64); each ran one kernel. What the model leaves unexplained in a node is its time less the
graph floor and less the kernel's modelled time (without this figure); the figure is that
residue on the path less the TMA kernel's, so what both paths share (the GEMM floor, the
node) cancels.

    python validation/probe/gemm_floor_extra.py validation/expected/h100/kernels/gemm-floors.json h100
"""

from __future__ import annotations

import json
import sys

from roofcalc.expected import gemm_floor_residue
from roofcalc.hardware import GEMM_PATHS, load_hardware

DTYPES = {"bfloat16": "bf16", "float16": "fp16"}


def residues(record: dict, hw_name: str) -> dict[str, float]:
    hw = load_hardware(hw_name)
    out: dict[str, float] = {}
    for case in record["cases"]:
        p = case.get("params") or {}
        if not case.get("path") or p.get("m") != 1024 or p.get("n") != 1024 or len(case.get("kernels", [])) != 1:
            continue
        dtype = DTYPES.get(case["dtype"]) or ("tf32" if case["allow_tf32"] else "fp32")
        path, res = gemm_floor_residue(hw, dtype, p["m"], p["n"], p["k"], case["median_s"])
        assert path == case["path"], (path, case["label"])
        out[path] = res
    return out


def main() -> int:
    path, hw_name = sys.argv[1], sys.argv[2]
    with open(path) as f:
        record = json.load(f)
    res = residues(record, hw_name)
    print("  gemm_kernel_floor_extra_s:")
    for p in GEMM_PATHS:
        if p in res and "tma" in res:
            note = (
                f"{path}: a 1024x1024 GEMM of one k-block per CUDA-graph node, less graph_floor_s and its "
                f"modelled time, on this path ({res[p] * 1e6:.2f} us) less the same on the TMA path "
                f"({res['tma'] * 1e6:.2f} us); {record['date'][:10]}"
            )
            print(
                f"    {p}: {{value: {res[p] - res['tma']:.3g}, source: bench-gemm-floors, kind: measured, note: '{note}'}}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
