"""transformers' prefill, every shape timed and then traced, and the model's linear layers timed
alone with and without their bias: where does a GPU-paced prefill lose time the model does not
count? (impl-holdout8's qwen2-1b-kv2 at batch 2 x 1,500 tokens ran at 1.33-1.44 of the expected
time while its other shapes, and other layouts at that shape, held.)

    python3 prefill_kernels.py --out OUT [--cases model:batch:seq,...]

Writes OUT/times.json (each case's step times, the host's speed around them, the kernels' GPU time
by name from its trace, and the linear layers' times) and OUT/traces/<label>.json.gz.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import run_header, write_json_atomic  # noqa: E402
from impl_bench import build_hf, config_of, host_around  # noqa: E402
from trace_capture import sync_time, trace_one  # noqa: E402

DEFAULT = (
    "qwen2-1b-kv2:2:1500,qwen2-1b-kv2:4:3000,qwen2-1b-kv2:1:7000,qwen2-1b-kv2:1:3000,"
    "qwen2-0.5b:4:2048,qwen2-0.5b:1:8192,llama-2b-kv6:2:1500"
)


def kernel_times(path: Path) -> dict[str, float]:
    """GPU time by kernel name in a chrome trace (seconds)."""
    doc = json.loads(gzip.open(path).read())
    by: dict[str, float] = collections.defaultdict(float)
    for e in doc.get("traceEvents", []):
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            by[e["name"][:160]] += float(e.get("dur", 0)) * 1e-6
    return dict(sorted(by.items(), key=lambda kv: -kv[1]))


def event_median(fn: Any, reps: int = 20) -> float:
    for _ in range(3):
        fn()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) * 1e-3 for a, b in ev)


def linear_kernels(fn: Any) -> list[str]:
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name[:120] for e in prof.events() if e.device_type.name == "CUDA"]


@torch.no_grad()
def linears(cfg: dict[str, Any], tokens: int) -> list[dict[str, Any]]:
    """Each linear layer of one decoder layer (and the LM head) at ``tokens`` rows, bf16, as
    F.linear on a [1, tokens, hidden] input, with and without a bias."""
    h = cfg["hidden_size"]
    d = cfg.get("head_dim") or h // cfg["num_attention_heads"]
    q = cfg["num_attention_heads"] * d
    kv = cfg["num_key_value_heads"] * d
    f = cfg["intermediate_size"]
    shapes = {"q": (q, h), "kv": (kv, h), "o": (h, q), "gate": (f, h), "down": (h, f), "lm_head": (cfg["vocab_size"], h)}
    out = []
    x_by = {}
    for name, (n, k) in shapes.items():
        x = x_by.setdefault(k, torch.randn(1, tokens, k, device="cuda", dtype=torch.bfloat16))
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        for with_bias in (False, True):
            fn = (lambda x=x, w=w, b=b: F.linear(x, w, b)) if with_bias else (lambda x=x, w=w: F.linear(x, w))
            out.append(
                {
                    "layer": name,
                    "m": tokens,
                    "n": n,
                    "k": k,
                    "bias": with_bias,
                    "median_s": event_median(fn),
                    "kernels": linear_kernels(fn),
                }
            )
        del w, b
    torch.cuda.empty_cache()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default=DEFAULT)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    out = Path(args.out)
    (out / "traces").mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = run_header("roofcalc-prefill-kernels-1")
    doc["command"] = "python3 prefill_kernels.py " + " ".join(sys.argv[1:])
    doc["cases"] = []
    doc["linears"] = []
    cases = [c.split(":") for c in args.cases.split(",")]
    done_linears: set[tuple[str, int]] = set()
    for name in dict.fromkeys(c[0] for c in cases):
        model, hcfg = build_hf(name)
        cfgd = config_of(name)
        for _, b, s in (c for c in cases if c[0] == name):
            batch, seq = int(b), int(s)
            label = f"hf-{name}-prefill-b{batch}-s{seq}"
            ids = torch.randint(0, hcfg.vocab_size, (batch, seq), device="cuda")

            def step(ids: Any = ids) -> None:
                with torch.no_grad():
                    model(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1)

            for _ in range(2):
                step()
            case: dict[str, Any] = {"label": label, "model": name, "config": cfgd, "impl": "hf", "phase": "prefill",
                                    "batch": batch, "seq": seq}
            times = host_around(case, lambda: [sync_time(step) for _ in range(args.steps)])
            case.update(median_s=statistics.median(times), times_s=times)
            tpath = out / "traces" / f"{label}.json.gz"
            trace_one(step, tpath)
            case["trace"] = tpath.name
            kt = kernel_times(tpath)
            case["kernel_s_by_name"] = kt
            case["kernel_s_total"] = sum(kt.values())
            doc["cases"].append(case)
            print(label, f"{case['median_s'] * 1e3:.2f} ms step, {case['kernel_s_total'] * 1e3:.2f} ms of kernels", flush=True)
            for k, v in list(kt.items())[:8]:
                print(f"   {v * 1e3:8.3f} ms  {k[:110]}", flush=True)
            torch.cuda.empty_cache()
            if (name, batch * seq) not in done_linears:
                done_linears.add((name, batch * seq))
                for r in linears(cfgd, batch * seq):
                    r["model"] = name
                    doc["linears"].append(r)
                    print(f"   linear {name} {r['layer']:7s} {r['m']}x{r['n']}x{r['k']} bias={r['bias']!s:5s} "
                          f"{r['median_s'] * 1e6:9.1f} us  {r['kernels'][:2]}", flush=True)
            write_json_atomic(str(out / "times.json"), doc)
        del model
        torch.cuda.empty_cache()
    write_json_atomic(str(out / "times.json"), doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
