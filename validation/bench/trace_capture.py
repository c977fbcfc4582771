"""Time LLM steps of implementations the project did not write (Hugging Face transformers) and
capture a PyTorch profiler trace of each, for `roofcalc trace` and for predicting a traced
implementation at other shapes (`roofcalc trace FILE --save-impl`, `op decode --impl-file`).

Random weights from configs (no hub access): a Llama 3.2 1B-like, a Qwen2.5 0.5B-like (attention
biases, tied embeddings) and a Llama 3.1 8B-like model, each with attn_implementation "sdpa" and
"eager", DynamicCache decode issued one token at a time from Python (what generate() does) and
prefill. For each case: the median wall time of a step (CUDA synchronised around each), and one
step's chrome trace (record_shapes=True), gzipped.

    python3 trace_capture.py --out DIR [--models llama-1b,qwen-0.5b,llama-8b] [--steps 15]

Writes DIR/times.json (the cases, with versions, device, driver and date) and DIR/traces/*.json.gz.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import torch

CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama-1b": (
        "llama",
        dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
             num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True, rope_theta=500000.0,
             max_position_embeddings=131072, head_dim=64),
    ),
    "qwen-0.5b": (
        "qwen2",
        dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
             num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
             max_position_embeddings=32768),
    ),
    "llama-8b": (
        "llama",
        dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
             num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False, rope_theta=500000.0,
             max_position_embeddings=131072),
    ),
}
# the traced shape, then batch x4 and context (or prompt) x4
DECODE_SHAPES = [(3, 1000), (12, 1000), (3, 4000)]
PREFILL_SHAPES = [(1, 500), (4, 500), (1, 2000)]


def build(name: str, attn: str) -> Any:
    from transformers import AutoConfig, AutoModelForCausalLM

    kind, kw = CONFIGS[name]
    cfg = AutoConfig.for_model(kind, **kw)
    cfg._attn_implementation = attn
    with torch.device("cuda"):
        try:
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=torch.bfloat16)
        except TypeError:
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, torch_dtype=torch.bfloat16)
    return model.eval()


def sync_time(fn: Any) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def trace_one(fn: Any, path: Path) -> None:
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        fn()
        torch.cuda.synchronize()
    raw = path.with_suffix("")  # .json
    prof.export_chrome_trace(str(raw))
    with open(raw, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
        g.write(f.read())
    raw.unlink()


@torch.no_grad()
def decode_case(model: Any, vocab: int, batch: int, context: int, steps: int, tdir: Path, tag: str) -> dict[str, Any]:
    ids = torch.randint(0, vocab, (batch, context), device="cuda")
    out = model(input_ids=ids, use_cache=True)
    cache = out.past_key_values
    tok = torch.randint(0, vocab, (batch, 1), device="cuda")
    times = []

    def step() -> None:
        nonlocal cache
        o = model(input_ids=tok, past_key_values=cache, use_cache=True)
        cache = o.past_key_values
        o.logits[:, -1].argmax(-1)  # what generate() does with the logits (greedy)

    for _ in range(3):
        step()
    for _ in range(steps):
        times.append(sync_time(step))
    trace = tdir / f"{tag}.json.gz"
    trace_one(step, trace)
    return {"median_s": statistics.median(times), "times_s": times, "trace": trace.name,
            "context_mid": context + 3 + steps // 2}


@torch.no_grad()
def prefill_case(model: Any, vocab: int, batch: int, seq: int, steps: int, tdir: Path, tag: str) -> dict[str, Any]:
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")

    def step() -> None:
        o = model(input_ids=ids, use_cache=True)
        o.logits[:, -1].argmax(-1)

    for _ in range(2):
        step()
    times = [sync_time(step) for _ in range(max(5, steps // 2))]
    trace = tdir / f"{tag}.json.gz"
    trace_one(step, trace)
    return {"median_s": statistics.median(times), "times_s": times, "trace": trace.name}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(CONFIGS))
    ap.add_argument("--attn", default="sdpa,eager")
    ap.add_argument("--steps", type=int, default=15)
    a = ap.parse_args()
    out = Path(a.out)
    tdir = out / "traces"
    tdir.mkdir(parents=True, exist_ok=True)
    import transformers

    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    doc: dict[str, Any] = {
        "schema": "roofcalc-trace-capture-1",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": "python3 trace_capture.py " + " ".join(f"--{k} {v}" for k, v in vars(a).items()),
        "device": torch.cuda.get_device_name(), "nvidia_smi": smi,
        "torch": torch.__version__, "cuda": torch.version.cuda, "transformers": transformers.__version__,
        "env": {k: v for k, v in os.environ.items() if k.startswith(("CUDA", "NCCL", "TORCH"))},
        "cases": [],
    }
    for name in a.models.split(","):
        kind, kw = CONFIGS[name]
        for attn in a.attn.split(","):
            try:
                model = build(name, attn)
            except Exception as e:  # noqa: BLE001
                print(f"{name} {attn}: cannot build: {type(e).__name__}: {e}", flush=True)
                continue
            for phase, shapes in (("decode", DECODE_SHAPES), ("prefill", PREFILL_SHAPES)):
                for batch, n in shapes:
                    tag = f"hf-{attn}-{name}-{phase}-b{batch}-{'c' if phase == 'decode' else 's'}{n}"
                    t0 = time.perf_counter()
                    try:
                        fn = decode_case if phase == "decode" else prefill_case
                        res = fn(model, kw["vocab_size"], batch, n, a.steps, tdir, tag)
                        err = None
                    except Exception as e:  # noqa: BLE001 (recorded, the run goes on)
                        res, err = {}, f"{type(e).__name__}: {e}"[:300]
                    case = {"label": tag, "impl": f"hf-{attn}", "model": name, "config": {"model_type": kind, **kw},
                            "phase": phase, "batch": batch, ("context" if phase == "decode" else "seq"): n,
                            "error": err, **res}
                    doc["cases"].append(case)
                    print(f"{tag}: {res.get('median_s', float('nan')) * 1e3:.2f} ms "
                          f"({time.perf_counter() - t0:.1f} s) {err or ''}", flush=True)
                    torch.cuda.empty_cache()
            del model
            torch.cuda.empty_cache()
    try:
        triton_trace(tdir / "triton-add.json.gz")
    except Exception as e:  # noqa: BLE001
        print(f"triton: {type(e).__name__}: {e}", flush=True)
    (out / "times.json").write_text(json.dumps(doc, indent=1))
    return 0


def triton_trace(path: Path) -> None:
    """A user's own Triton kernel (roofcalc does not know it: listed as unknown with its time)."""
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

    n = 1 << 24
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    o = torch.empty_like(x)

    def run() -> None:
        add_kernel[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024)
        torch.mm(x[: 1 << 20].view(1024, 1024), y[: 1 << 20].view(1024, 1024))

    run()
    trace_one(run, path)


if __name__ == "__main__":
    raise SystemExit(main())
