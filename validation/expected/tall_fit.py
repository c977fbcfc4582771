"""The SIMT kernel cuBLAS runs for tall fp32 GEMMs with a tiny n (validation/expected/h100/kernels/
tall1): a least-squares fit of its kernel durations to a fixed cost plus the padded work of its
busiest SM (ceil(blocks / 132) x 128 x 32 x k per split x 2 FLOP). Development data, not a figure of
any hardware file: printed for kernels/tall1/README.md.

    python3 validation/expected/tall_fit.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

SMS = 132
TILE = (128, 32)


def main() -> None:
    cases = json.loads((Path(__file__).parent / "h100" / "kernels" / "tall1" / "tall-kernels.json").read_text())[
        "cases"
    ]
    rows = []
    for c in cases:
        ks = c.get("kernels") or []
        if not ks or "simt_sgemm_128x32" not in ks[0]["name"]:
            continue
        gx, gy, z = ks[0]["grid"]
        k_split = math.ceil(c["params"]["k"] / z)
        work = math.ceil(gx * gy * z / SMS) * TILE[0] * TILE[1] * k_split * 2
        rows.append((c["label"], work, ks[0]["duration_s"]))
    n = len(rows)
    sx = sum(w for _, w, _ in rows)
    sy = sum(d for _, _, d in rows)
    sxx = sum(w * w for _, w, _ in rows)
    sxy = sum(w * d for _, w, d in rows)
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    a = (sy - b * sx) / n
    print(
        f"{n} kernels: {a * 1e6:.2f} us + work / {1 / b / 1e9:.0f} GFLOP/s an SM ({SMS / b / 1e12:.1f} TFLOP/s a card)"
    )
    for label, w, d in rows:
        print(f"  {label:28s} {d * 1e6:6.1f} us, fit {(a + b * w) * 1e6:6.1f} us")


if __name__ == "__main__":
    main()
