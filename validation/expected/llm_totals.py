#!/usr/bin/env python3
"""Totals over every committed LLM report (report-llm*-KIND.json beside this file), as the
README quotes them: per kind of report (registry, calibrated, hostrate, hostcase), per kind of
step (decode with or without CUDA graphs; prefill whose largest term is the GPU's work or the
host's issue) and one GPU or several, the steps within their band, of how many, and the range of
measured / expected. Run make_reports.sh first.

    python3 validation/expected/llm_totals.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ("registry", "calibrated", "hostrate", "hostcase")


def totals(kind: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for path in sorted(HERE.glob(f"*/report-llm*-{kind}.json")):
        for c in json.loads(path.read_text())["cases"]:
            r = c["ratio"]
            if r is None:
                continue
            p = c["params"]
            if c["op"] == "decode":
                step = "decode, graphs" if p["cuda_graphs"] else "decode, no graphs"
            else:
                # host-paced as the model reads it (its limiter, for which the host-paced note is printed)
                step = "prefill, host-paced" if c["limiter"] == "host" else "prefill, GPU-bound"
            key = f"{step}, {'TP' if p['gpus'] > 1 else '1 GPU'}"
            lo, hi = c["band"]
            t = out.setdefault(key, [0, 0, r, r])
            t[0] += lo <= r <= hi
            t[1] += 1
            t[2], t[3] = min(t[2], r), max(t[3], r)
    return out


def main() -> None:
    for kind in KINDS:
        print(kind)
        for key, (inside, n, lo, hi) in sorted(totals(kind).items()):
            print(f"  {key:32s} {int(inside):4d} of {int(n):4d} within the band  {lo:.2f}-{hi:.2f}")


if __name__ == "__main__":
    main()
