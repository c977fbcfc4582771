"""Writes the registry's GEMM choice map and per-tile figures into hardware/h100.yaml, from the
committed sweeps validation/expected/h100/kernels/choice8/choice-sweep.json.gz (products with a
small side of 2-64), kernels/row2/row-sweep.json.gz (one-row products),
kernels/col1/col-sweep.json.gz (one-column products), kernels/shallow1/shallow-sweep.json.gz
(large outputs, k of 1-32), kernels/shallow2/shallow-aligned.json.gz and
kernels/shallow3/shallow-aligned-rest.json.gz (its aligned columns) and
kernels/refine1/refine-sweep.json.gz (choice8's refinement where cuBLAS's kernel changes), with the code the
probe uses for a calibration (roofcalc/probe/report.py choice_figures), so the registry's map is
what `roofcalc probe` would save on that card and libraries.

The same block goes into hardware/h200.yaml as transferred figures: the H200 is the same GH100
chip (132 SMs, the same SM clocks) with more and faster memory, and cuBLAS's choice among these
kernels and their per-SM rates follow the SMs (the map's bandwidth-bound corner, the operands'
streaming, uses each card's own bandwidth figures in the model).

    python3 validation/expected/choice_map.py          # rewrite the blocks
    python3 validation/expected/choice_map.py --check  # exit 1 if a block is not what it writes
"""

from __future__ import annotations

import argparse
import copy
import functools
import gzip
import json
import sys
from pathlib import Path

from roofcalc.probe.report import choice_figures

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "validation" / "expected" / "h100" / "kernels" / "choice8" / "choice-sweep.json.gz"
ROW_SWEEP = ROOT / "validation" / "expected" / "h100" / "kernels" / "row2" / "row-sweep.json.gz"
COL_SWEEP = ROOT / "validation" / "expected" / "h100" / "kernels" / "col1" / "col-sweep.json.gz"
SHALLOW_SWEEP = ROOT / "validation" / "expected" / "h100" / "kernels" / "shallow1" / "shallow-sweep.json.gz"
ALIGNED_SWEEP = ROOT / "validation" / "expected" / "h100" / "kernels" / "shallow2" / "shallow-aligned.json.gz"
REST_SWEEP = ROOT / "validation" / "expected" / "h100" / "kernels" / "shallow3" / "shallow-aligned-rest.json.gz"
REFINE_SWEEP = ROOT / "validation" / "expected" / "h100" / "kernels" / "refine1" / "refine-sweep.json.gz"
CARDS = (("h100", "bench-choice8", None), ("h200", "bench-choice8-h100", "transferred"))
SOURCE_TITLE = (
    "validation/bench/choice_sweep.py (the probe's GEMM choice sweep, roofcalc/probe/torch_ops.py gemm_choices) "
    "on an H100 80GB HBM3, driver 580.159.04, torch 2.11.0+cu130, 2026-11-27 21:43 UTC, and its one-row plane "
    "(choice_sweep.py --rows, --cols) on the same kind of card and versions at 23:06 and 23:20 UTC, and its shallow "
    "plane (--shallow, --shallow-aligned) on 2026-11-28 at 01:01, 01:28 and 01:30 UTC, and choice8's refinement "
    "(--refine) at 03:29 UTC: validation/expected/h100/kernels/choice8/, row2/, col1/, shallow1/, shallow2/, shallow3/ "
    "and refine1/ (logs beside them)"
)
BEGIN = "  # BEGIN choice map: written by validation/expected/choice_map.py; do not edit by hand"
END = "  # END choice map"


def _flow(fig: dict) -> str:
    return json.dumps(fig, ensure_ascii=True)


@functools.lru_cache(maxsize=1)
def _sweep() -> tuple[dict, dict]:
    """The committed sweep and the probe's figures of it (read and fitted once for both cards)."""
    doc = json.loads(gzip.decompress(SWEEP.read_bytes()))
    rows = json.loads(gzip.decompress(ROW_SWEEP.read_bytes()))
    cols = json.loads(gzip.decompress(COL_SWEEP.read_bytes()))
    shallow = json.loads(gzip.decompress(SHALLOW_SWEEP.read_bytes()))
    aligned = json.loads(gzip.decompress(ALIGNED_SWEEP.read_bytes()))
    rest = json.loads(gzip.decompress(REST_SWEEP.read_bytes()))
    refine = json.loads(gzip.decompress(REFINE_SWEEP.read_bytes()))
    torch_v = doc["torch"]
    if {rows["torch"], cols["torch"], shallow["torch"], aligned["torch"], rest["torch"], refine["torch"]} != {torch_v}:
        sys.exit("choice_map.py: the sweeps ran different torch builds")
    raw = {
        "torch": {
            "gemm_choices": doc["cases"]
            + refine["cases"]
            + rows["cases"]
            + cols["cases"]
            + shallow["cases"]
            + aligned["cases"]
            + rest["cases"],
            "torch": torch_v,
            "cuda": torch_v.split("+cu")[-1][:2] + "." + torch_v.split("+cu")[-1][2:],
        }
    }
    notes: list[str] = []
    figs = choice_figures(raw, int(doc["device"]["sm_count"]), notes)
    if notes or "gemm_choice_map" not in figs:
        sys.exit("choice_map.py: " + "; ".join(notes or ["no map"]))
    return doc, figs


def shallow_date() -> str:
    return str(json.loads(gzip.decompress(SHALLOW_SWEEP.read_bytes()))["date"])[:10]


def block(source: str, kind: str | None) -> str:
    doc, figs = _sweep()
    figs = copy.deepcopy(figs)
    cmap = figs["gemm_choice_map"]
    cmap["source"] = source
    cmap["note"] = (
        "validation/expected/h100/kernels/choice8/choice-sweep.json.gz, row2/row-sweep.json.gz, col1/col-sweep.json.gz "
        f"({doc['date'][:10]}), shallow1/, shallow2/, shallow3/ and refine1/ ({shallow_date()}): " + cmap["note"]
    )
    if kind:
        cmap["kind"] = kind
        cmap["note"] += "; an H100's, transferred: the same chip and SM count (validation/expected/choice_map.py)"
    lines = [BEGIN]
    entries = cmap.pop("value").splitlines()
    head = dict(cmap)
    lines.append("  gemm_choice_map:")
    for k, v in head.items():
        lines.append(f"    {k}: {_flow(v)}")
    lines.append("    value: |")
    for e in entries:
        lines.append(f"      {e}")
    for name in ("gemm_choice_floor_s", "gemm_choice_flops_per_sm", "gemm_reduce_floor_s", "gemm_reduce_slice_s"):
        lines.append(f"  {name}:")
        for key, fig in figs.get(name, {}).items():
            which = f"the {key} split-K reductions of one wave" if "reduce" in name else f"the shapes that ran {key}"
            fig = dict(
                fig,
                source=source,
                fit_set=f"validation/expected/h100/kernels/choice8/choice-sweep.json.gz and refine1/: {which}",
            )
            fig["value"] = float(f"{fig['value']:.4g}")
            if kind:  # an H100's fit, taken over: the same SMs at the same clocks
                fig = {
                    "value": fig["value"],
                    "source": source,
                    "kind": kind,
                    "note": f"an H100's figure (fitted to {fig['fit_cases']} records of its sweep), transferred: the same SMs and clocks",
                }
            lines.append(f"    {key}: {_flow(fig)}")
    lines.append(END)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    stale = 0
    for name, source, kind in CARDS:
        path = ROOT / "hardware" / f"{name}.yaml"
        text = path.read_text()
        new_text = text
        line = f"  {source}: {{title: {json.dumps(SOURCE_TITLE)}}}\n"
        # the map's source, written afresh (an earlier sweep's line goes)
        kept = [x for x in new_text.splitlines(keepends=True) if not x.startswith("  bench-choice")]
        new_text = "".join(kept).replace("sources:\n", "sources:\n" + line, 1)
        new_block = block(source, kind)
        if BEGIN in new_text:
            a = new_text.index(BEGIN)
            b = new_text.index(END, a) + len(END) + 1
            new_text = new_text[:a] + new_block + new_text[b:]
        else:
            a = new_text.index("  l2_dirty_writeback_fraction:")
            new_text = new_text[:a] + new_block + new_text[a:]
        if new_text != text:
            stale += 1
            if not args.check:
                path.write_text(new_text)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
