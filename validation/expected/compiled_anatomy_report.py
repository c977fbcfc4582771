"""compiled_anatomy.py's set (validation/bench/compiled_anatomy.py): what a compiled step's layers
cost the host, in the hot loop's ops timed in the same round, beside the compiled chains' cost per
kernel in the same units and in seconds; and each full-depth step against the model three ways:
- "fixed multiples": with the step's own hot loop, compiled code's figures the card's fixed multiples
  of it (roofcalc validate --host-per-case's rule, roofcalc/expected/card.py COMPILED_KERNEL_OPS);
- "chains in ops": with the step's own hot loop, compiled code's figures the chains' median cost
  over the process's rounds in ops of the loop timed beside them, scaled to that loop;
- "chains in seconds": the process's median hot loop and its chains' median cost in seconds for
  every step (roofcalc validate --host-rate's rule with this process's measurements).
The two chain columns differ by the op unit: the loop timed in this process, beside the models, read
slower than host_rate.py's in its own process of the same call, while the chains' cost in seconds
was close to its (the nineteenth session's review). Writes validation/expected/<card>/<set>.json and
prints a summary; no GPU.

    python3 validation/expected/compiled_anatomy_report.py h200/compiled-dev1
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from roofcalc.hardware import Hardware, PositiveFigure, load_hardware
from roofcalc.validation import llm_report

HERE = Path(__file__).resolve().parent
TRACES = HERE.parent / "traces"
med = statistics.median


def chain_fit(row: dict[str, Any], chains: list[dict[str, Any]]) -> tuple[float, float]:
    """(seconds a kernel, seconds an entry) of one round's chains: slope and intercept through the
    medians of the shortest and the longest chain, as the probe fits them."""
    (lo, hi) = sorted(chains, key=lambda c: c["kernels"])
    t_lo, t_hi = med(row["chain_s"][str(lo["links"])]), med(row["chain_s"][str(hi["links"])])
    k = (t_hi - t_lo) / (hi["kernels"] - lo["kernels"])
    return k, t_lo - k * lo["kernels"]


def with_figures(hw: Hardware, figs: dict[str, float]) -> Hardware:
    """``hw`` with these expected-time figures (seconds), as a hardware file would state them."""
    update = {k: PositiveFigure(value=v, source="t", kind="measured") for k, v in figs.items()}
    return hw.model_copy(update={"expected": hw.expected.model_copy(update=update)})


def spread(xs: list[float]) -> dict[str, float]:
    return {"median": med(xs), "min": min(xs), "max": max(xs)}


def report(set_name: str) -> dict[str, Any]:
    card = set_name.split("/")[0]
    hw = load_hardware(card)
    base = float(hw.expected.torch_op_floor_s.value)  # type: ignore[union-attr]
    out: dict[str, Any] = {"set": set_name, "hardware": card, "models": []}
    all_k: list[float] = []
    layer_ops: dict[str, list[float]] = {"decode": [], "prefill": []}
    ratio_pd: list[float] = []
    for path in sorted((TRACES / set_name).glob("compiled-anatomy-*.json")):
        doc = json.loads(path.read_text())
        ks, es = [], []
        m_layers: dict[str, list[float]] = {"decode": [], "prefill": []}
        for row in doc["rounds"]:
            op = (row["op_before_s"] + row["op_after_s"]) / 2
            k, e = chain_fit(row, doc["chains"])
            ks.append(k / op)
            es.append(e / op)
            per = {}
            for phase in m_layers:
                per[phase] = (med(row[phase]["6"]["issue_s"]) - med(row[phase]["2"]["issue_s"])) / 4 / op
                m_layers[phase].append(per[phase])
            ratio_pd.append(per["prefill"] / per["decode"])
        all_k += ks
        for phase, xs in m_layers.items():
            layer_ops[phase] += xs
        kernel_ops, entry_ops = med(ks), med(es)
        fits = [chain_fit(row, doc["chains"]) for row in doc["rounds"]]
        ops_s = [(row["op_before_s"] + row["op_after_s"]) / 2 for row in doc["rounds"]]
        seconds = {
            "torch_op_floor_s": med(ops_s),
            "compiled_kernel_host_s": med(f[0] for f in fits),
            "compiled_entry_host_s": med(f[1] for f in fits),
        }
        seconds_hw = with_figures(hw, seconds)
        # the chains' rule: a hardware file's own compiled figures at the card's op floor, which
        # with_host_op scales to each step's hot loop
        chain_hw = with_figures(
            hw, {"compiled_kernel_host_s": kernel_ops * base, "compiled_entry_host_s": entry_ops * base}
        )
        cases = []
        for c in doc["cases"]:
            steps = [
                {
                    "model": doc["model"],
                    "phase": c["phase"],
                    "engine": "compiled",
                    "cuda_graphs": False,
                    "gpus": 1,
                    "batch": c["batch"],
                    ("context" if c["phase"] == "decode" else "seq"): c["n"],
                    "median_s": s["total_s"],
                    "host_op_s": {"before": s["op_before_s"], "after": s["op_after_s"]},
                }
                for s in c["steps"]
            ]
            data = {"kind": "llm", "device": {"name": doc["device"]}, "cases": steps}
            got = {}
            for rule, h, own in (
                ("fixed multiples", hw, True),
                ("chains in ops", chain_hw, True),
                ("chains in seconds", seconds_hw, False),
            ):
                rep = llm_report(data, h, str(path.name), case_host=own)
                got[rule] = spread([r.ratio for r in rep.cases if r.ratio is not None])
            cases.append(
                {
                    "phase": c["phase"],
                    "batch": c["batch"],
                    "n": c["n"],
                    "kernels": c["kernels"],
                    "steps": len(steps),
                    "total_s": spread([s["total_s"] for s in c["steps"]]),
                    "hot_op_s": spread([(s["op_before_s"] + s["op_after_s"]) / 2 for s in c["steps"]]),
                    "measured_over_expected": got,
                }
            )
        out["models"].append(
            {
                "model": doc["model"],
                "rounds": len(doc["rounds"]),
                "chain_kernel_ops": spread(ks),
                "chain_entry_ops": spread(es),
                "chain_kernel_s": spread([f[0] for f in fits]),
                "hot_op_s": spread(ops_s),
                "layer_ops": {p: spread(xs) for p, xs in m_layers.items()},
                "layer_kernels": {
                    p: (doc["layer_steps"][f"{p}/6"]["kernels"] - doc["layer_steps"][f"{p}/2"]["kernels"]) / 4
                    for p in m_layers
                },
                "cases": cases,
            }
        )
    out["chain_kernel_ops"] = spread(all_k)
    out["layer_ops"] = {p: spread(xs) for p, xs in layer_ops.items()}
    out["prefill_over_decode_layer"] = spread(ratio_pd)
    return out


def main() -> int:
    set_name = sys.argv[1]
    rep = report(set_name)
    dest = HERE / f"{set_name}.json"
    dest.write_text(json.dumps(rep, indent=1) + "\n")

    def s3(d: dict[str, float], f: str = "{:.2f}") -> str:
        return f"{f.format(d['median'])} ({f.format(d['min'])}-{f.format(d['max'])})"

    print(
        f"{set_name}: chains' cost a kernel in ops {s3(rep['chain_kernel_ops'])}; a layer in ops: decode "
        f"{s3(rep['layer_ops']['decode'], '{:.0f}')}, prefill {s3(rep['layer_ops']['prefill'], '{:.0f}')}; "
        f"prefill over decode in one round {s3(rep['prefill_over_decode_layer'])}"
    )
    for m in rep["models"]:
        for c in m["cases"]:
            r = c["measured_over_expected"]
            print(
                f"  {m['model']:12s} {c['phase']:7s} {c['batch']}x{c['n']:<6d} measured/expected: fixed multiples "
                f"{s3(r['fixed multiples'])}; chains in ops ({m['chain_kernel_ops']['median']:.2f}x) "
                f"{s3(r['chains in ops'])}; chains in seconds ({m['chain_kernel_s']['median'] * 1e6:.1f} us, loop "
                f"{m['hot_op_s']['median'] * 1e6:.1f} us) {s3(r['chains in seconds'])}"
            )
    print(f"wrote {dest.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
