"""Each mechanism of the expected-time model against the two-number baseline, on the fresh op
hold-outs (make_bands.FRESH_HOLDOUTS, registry figures): the model whole, and the model with one
mechanism at a time replaced by the plain roofline it refines.

- floors: the launch floors of docs/model.md section 1 (flushed op, queued kernel, graph node) at 0;
- parallelism: a memory or elementwise kernel (section 2: Little's law per SM, waves, the SMs a
  grid uses, dependent round trips) at its bytes over the card's achievable read bandwidth;
- GEMM: a library GEMM (section 3: tiles, waves, split-K, library paths) at the larger of its FLOPs
  at the measured tensor rate and its bytes at the achievable bandwidth, plus the GEMM floor;
- FlashAttention-2: its kernels (section 5: blocks, split-KV, the softmax between the GEMMs) the
  same way.

The baseline is the bound x 1.28 + 2.56 us per kernel the op file declares (an outside audit's
figures, as docs/validation.md quotes them). Writes validation/expected/ablation.json; no GPU.

    python3 validation/expected/ablation.py
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import roofcalc  # noqa: E402

compose = importlib.import_module("roofcalc.expected.compose")
from make_bands import FRESH_HOLDOUTS  # noqa: E402
from roofcalc.expected.card import tensor_rate  # noqa: E402
from roofcalc.expected.records import KernelEstimate  # noqa: E402

BAND = (0.8, 1.25)
BASELINE_FACTOR, BASELINE_PER_KERNEL_S = 1.28, 2.56e-6  # as make_validation_doc.py quotes them


def _roofline(k: Any, c: Any, seconds: float, what: str) -> list[KernelEstimate]:
    return [
        KernelEstimate(
            name=k.name,
            model=k.model,
            seconds=seconds,
            grid=max(k.grid, 1),
            blocks_per_sm=None,
            waves=0.0,
            bound="memory",
            reason=f"ablation: {what}",
        )
    ]


def _stream_roofline(hw: Any, c: Any, k: Any) -> KernelEstimate:
    return _roofline(k, c, k.dram_bytes / c.dram_bw, "bytes at the achievable bandwidth")[0]


def _gemm_roofline(hw: Any, c: Any, k: Any, dtype_bytes: float, sustained: bool = False) -> list[KernelEstimate]:
    flops = 2.0 * k.m * k.n * k.k * k.batch
    bytes_ = (k.m * k.k + k.k * k.n + k.m * k.n) * k.batch * dtype_bytes
    t = max(flops / tensor_rate(hw, k.dtype), bytes_ / c.dram_bw) + c.gemm_floor
    return _roofline(k, c, t, "FLOPs at the tensor rate or bytes at the bandwidth, plus the GEMM floor")


def _flash_roofline(hw: Any, c: Any, k: Any, dtype_bytes: float) -> list[KernelEstimate]:
    pairs = k.seq * k.kv_seq - (k.seq * (k.seq - 1) // 2 if k.causal else 0)
    flops = 4.0 * k.batch * k.heads * k.head_dim * pairs
    bytes_ = (2 * k.batch * k.heads * k.seq + 2 * k.batch * k.kv_heads * k.kv_seq) * k.head_dim * dtype_bytes
    t = max(flops / tensor_rate(hw, k.dtype), bytes_ / c.dram_bw)
    return _roofline(k, c, t, "FLOPs at the tensor rate or bytes at the bandwidth")


def _no_floors(card: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def patched(hw: Any) -> Any:
        return replace(card(hw), event_floor=0.0, stream_floor=0.0, graph_floor=0.0, queued_floor=0.0, torch_node=0.0)

    return patched


VARIANTS: dict[str, dict[str, Any]] = {
    "model": {},
    "without floors": {"card": _no_floors(compose.card)},
    "without parallelism": {"_stream": _stream_roofline},
    "without the GEMM mechanism": {"_gemm": _gemm_roofline},
    "without FlashAttention-2's scheduling": {"_flash": _flash_roofline},
}


@contextlib.contextmanager
def variant(patches: dict[str, Any]) -> Iterator[None]:
    saved = {name: getattr(compose, name) for name in patches}
    try:
        for name, fn in patches.items():
            setattr(compose, name, fn)
        compose._KERNEL_MEMO.clear()
        yield
    finally:
        for name, fn in saved.items():
            setattr(compose, name, fn)
        compose._KERNEL_MEMO.clear()


# the fresh op hold-outs (the LLM steps' sets, whose cases are named models' steps, stand apart)
OP_SETS = tuple(s for s in FRESH_HOLDOUTS if "/ops-" in s)


def cases() -> list[tuple[str, str, dict[str, Any], float, float, str]]:
    """(set, op, params, measured_s, bound_s, hardware) of every fresh op hold-out case."""
    out = []
    for src in OP_SETS:
        card_dir, name = src.split("/")
        rep = json.loads((HERE / card_dir / f"report-{Path(name).stem}-registry.json").read_text())
        for c in rep["cases"]:
            if isinstance(c.get("ratio"), (int, float)):
                out.append((src, c["op"], c["params"], c["measured_s"], c["bound_s"], rep["hardware"]))
    return out


def main() -> int:
    rows = cases()
    base = []
    for _src, op, params, measured, bound, hw in rows:
        r = roofcalc.analyze(op, hw, **params)
        base.append(measured / (bound * BASELINE_FACTOR + BASELINE_PER_KERNEL_S * r.launches))
    results: dict[str, Any] = {}
    for label, patches in VARIANTS.items():
        with variant(patches):
            ratios = [m / roofcalc.analyze(op, hw, **p).expected_s for _s, op, p, m, _b, hw in rows]
        results[label] = ratios
    results["baseline"] = base
    ops = sorted({op for _s, op, *_ in rows})
    lo, hi = BAND
    summary: dict[str, Any] = {}
    for label, ratios in results.items():
        per_op = {}
        for op in ops:
            sel = [x for x, row in zip(ratios, rows, strict=True) if row[1] == op]
            per_op[op] = sum(lo <= x <= hi for x in sel) / len(sel)
        summary[label] = {
            "within_band": sum(lo <= x <= hi for x in ratios) / len(ratios),
            "outside_0.5_2": sum(not 0.5 <= x <= 2 for x in ratios),
            "per_op": per_op,
        }
    doc = {
        "what": "fresh op hold-outs: the share within [0.8, 1.25] of measured / expected, the model whole, with one "
        "mechanism replaced by its plain roofline, and the two-number baseline",
        "command": "python3 validation/expected/ablation.py",
        "sets": list(OP_SETS),
        "cases": len(rows),
        "cases_per_op": {op: sum(1 for r in rows if r[1] == op) for op in ops},
        "summary": summary,
    }
    (HERE / "ablation.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    for label, s in summary.items():
        print(f"{label:40s} {s['within_band']:.0%} within, {s['outside_0.5_2']} outside [0.5, 2]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
