"""Two probe reports side by side: every number of their summaries and every figure of their
`expected` sections (values, and each entry of a table of values) that both hold, the second over
the first, largest change first.

    python3 validation/probe/compare_probes.py validation/probe/h200/probe.json validation/probe/h200/probe-mix1/probe.json
"""

from __future__ import annotations

import json
import sys
from typing import Any


def numbers(doc: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in doc.get("summary", {}).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[f"summary.{k}"] = float(v)
    for k, fig in doc.get("expected", {}).items():
        value = fig.get("value") if isinstance(fig, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[f"expected.{k}"] = float(value)
        elif isinstance(fig, dict) and "value" not in fig:  # a table of figures by key
            for key, sub in fig.items():
                v = sub.get("value") if isinstance(sub, dict) else None
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[f"expected.{k}.{key}"] = float(v)
    return out


def main(argv: list[str]) -> int:
    first, second = (json.load(open(p)) for p in argv[:2])
    a, b = numbers(first), numbers(second)
    rows = sorted(((b[k] / a[k], k) for k in a.keys() & b.keys() if a[k]), key=lambda r: -abs(r[0] - 1))
    print(f"{argv[1]} over {argv[0]}: {len(rows)} figures both hold")
    for ratio, k in rows:
        print(f"{ratio:8.3f}  {k}: {a[k]:.4g} -> {b[k]:.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
