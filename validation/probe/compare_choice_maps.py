"""How far two H100 machines' GEMM choice maps agree: the registry's (validation/expected/h100/
kernels/choice2, through hardware/h100.yaml; the shapes of the first sweep, kernels/choice1, are in it) against the one the full probe saved on another
machine (validation/probe/h100-choice/calibration.yaml), shape by shape: the same family and tile,
the same k-slices, and the first kernel's time.

    python3 validation/probe/compare_choice_maps.py
"""

from __future__ import annotations

import statistics
from pathlib import Path

from roofcalc.expected.choice import ChoiceMap
from roofcalc.hardware import load_hardware, load_hardware_file

HERE = Path(__file__).resolve().parent


def main() -> None:
    reg = load_hardware("h100").expected.gemm_choice_map
    cal = load_hardware_file(HERE / "h100-choice" / "calibration.yaml").expected.gemm_choice_map
    assert reg is not None and cal is not None
    a = {(c.dtype, c.m, c.n, c.k): c for c in ChoiceMap.from_entries(reg.entries).entries}
    b = {(c.dtype, c.m, c.n, c.k): c for c in ChoiceMap.from_entries(cal.entries).entries}
    both = sorted(set(a) & set(b))
    same_kernel = sum(a[s].family == b[s].family and a[s].tile == b[s].tile for s in both)
    same_split = sum(a[s].family == b[s].family and a[s].tile == b[s].tile and a[s].splits == b[s].splits for s in both)
    ratios = [b[s].kernel_s / a[s].kernel_s for s in both if a[s].key == b[s].key]
    print(f"{len(both)} shapes in both maps ({reg.libraries} / {cal.libraries})")
    print(f"same family and tile: {same_kernel} ({same_kernel / len(both):.1%}); and the same k-slices: {same_split}")
    q = statistics.quantiles(ratios, n=20)
    print(f"first kernel's time, probe / registry, same kernel: median {statistics.median(ratios):.3f}, p5-p95 {q[0]:.3f}-{q[-1]:.3f}")


if __name__ == "__main__":
    main()
