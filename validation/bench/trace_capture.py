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
    "mistral-7b": (
        "mistral",
        dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
             num_key_value_heads=8, vocab_size=32768, tie_word_embeddings=False, rope_theta=1000000.0,
             max_position_embeddings=32768, head_dim=128, sliding_window=None),
    ),
    "qwen-1.5b": (
        "qwen2",
        dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
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
# the traced shape, then batch x4 and context (or prompt) x4 (--decode-shapes / --prefill-shapes)
DECODE_SHAPES = [(3, 1000), (12, 1000), (3, 4000)]
PREFILL_SHAPES = [(1, 500), (4, 500), (1, 2000)]
# llm_bench.py's presets for the project's own plain-PyTorch model (impl reference-eager)
REFERENCE_MODELS = {"llama-1b": "llama-3.2-1b", "llama-8b": "llama-3.1-8b", "mistral-7b": "mistral-7b"}


def shapes(text: str) -> list[tuple[int, int]]:
    return [(int(b), int(n)) for b, n in (s.split("x") for s in text.split(","))]


def profiler_overhead(n: int = 4000) -> dict[str, Any]:
    """What recording costs the host, per event, with the settings of the captures: a loop of ops
    that launch nothing (x.view) and one of ops that each launch one kernel (x.add_), timed plain and
    under the profiler. Per CPU op: the view loop's difference over n; per launch: the add_ loop's
    difference over n, less one CPU op's."""
    from torch.profiler import ProfilerActivity, profile

    x = torch.zeros(256, device="cuda")

    def views() -> None:
        for _ in range(n):
            x.view(-1)

    def adds() -> None:
        for _ in range(n):
            x.add_(1)

    out: dict[str, Any] = {"n": n}
    for name, fn in (("view", views), ("add_", adds)):
        fn()
        plain = min(sync_time(fn) for _ in range(5))
        prof_t = []
        for _ in range(3):
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True):
                prof_t.append(sync_time(fn))
        out[name] = {"plain_s": plain, "profiled_s": min(prof_t)}
    per_op = (out["view"]["profiled_s"] - out["view"]["plain_s"]) / n
    per_launch = (out["add_"]["profiled_s"] - out["add_"]["plain_s"]) / n - per_op
    out["per_cpu_op_s"], out["per_launch_s"] = per_op, per_launch
    return out


def build_reference(name: str) -> Any:
    import llm_bench

    d = llm_bench.Dist("cuda")
    return llm_bench, d, llm_bench.Model(REFERENCE_MODELS[name], dict(llm_bench.MODELS[REFERENCE_MODELS[name]]), d)


@torch.no_grad()
def reference_case(ref: Any, phase: str, batch: int, n: int, steps: int, tdir: Path, tag: str, trace: bool) -> dict[str, Any]:
    llm_bench, _d, model = ref
    step = llm_bench.make_step(model, phase, "eager", batch, n, "inductor")[0]
    for _ in range(3):
        step()
    times = [sync_time(step) for _ in range(steps)]
    res: dict[str, Any] = {"median_s": statistics.median(times), "times_s": times}
    if trace:
        path = tdir / f"{tag}.json.gz"
        trace_one(step, path)
        res["trace"] = path.name
    return res


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
def decode_case(
    model: Any, vocab: int, batch: int, context: int, steps: int, tdir: Path, tag: str, trace: bool = True
) -> dict[str, Any]:
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
    res = {"median_s": statistics.median(times), "times_s": times, "context_mid": context + 3 + steps // 2}
    if trace:
        path = tdir / f"{tag}.json.gz"
        trace_one(step, path)
        res["trace"] = path.name
    return res


@torch.no_grad()
def prefill_case(
    model: Any, vocab: int, batch: int, seq: int, steps: int, tdir: Path, tag: str, trace: bool = True
) -> dict[str, Any]:
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")

    def step() -> None:
        o = model(input_ids=ids, use_cache=True)
        o.logits[:, -1].argmax(-1)

    for _ in range(2):
        step()
    times = [sync_time(step) for _ in range(max(5, steps // 2))]
    res: dict[str, Any] = {"median_s": statistics.median(times), "times_s": times}
    if trace:
        path = tdir / f"{tag}.json.gz"
        trace_one(step, path)
        res["trace"] = path.name
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(CONFIGS))
    ap.add_argument("--attn", default="sdpa,eager")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--impls", default="hf", help="hf (with --attn) and/or reference (llm_bench.py, eager, no graphs)")
    ap.add_argument("--decode-shapes", default=",".join(f"{b}x{n}" for b, n in DECODE_SHAPES))
    ap.add_argument("--prefill-shapes", default=",".join(f"{b}x{n}" for b, n in PREFILL_SHAPES))
    ap.add_argument("--trace-all", action="store_true", help="trace every shape (else the first of each phase)")
    ap.add_argument("--overhead", action="store_true", help="measure the profiler's cost per event first")
    a = ap.parse_args()
    out = Path(a.out)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # under torchrun: each rank its own folder
        out = out / f"rank{os.environ.get('RANK', '0')}"
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
    if a.overhead:
        doc["profiler_overhead"] = profiler_overhead()
        print("profiler overhead:", json.dumps(doc["profiler_overhead"]), flush=True)
    dshapes, pshapes = shapes(a.decode_shapes), shapes(a.prefill_shapes)
    impls = a.impls.split(",")
    for name in a.models.split(","):
        kind, kw = CONFIGS[name]
        if "reference" in impls and name in REFERENCE_MODELS:
            try:
                ref = build_reference(name)
            except Exception as e:  # noqa: BLE001
                print(f"{name} reference: cannot build: {type(e).__name__}: {e}", flush=True)
                ref = None
            for phase, shp in (("decode", dshapes), ("prefill", pshapes)) if ref else ():
                for i, (batch, n) in enumerate(shp):
                    tag = f"reference-eager-{name}-{phase}-b{batch}-{'c' if phase == 'decode' else 's'}{n}"
                    try:
                        res = reference_case(ref, phase, batch, n, a.steps, tdir, tag, a.trace_all or i == 0)
                        err = None
                    except Exception as e:  # noqa: BLE001
                        res, err = {}, f"{type(e).__name__}: {e}"[:300]
                    doc["cases"].append({"label": tag, "impl": "reference-eager", "model": name,
                                         "preset": REFERENCE_MODELS[name], "phase": phase, "batch": batch,
                                         ("context" if phase == "decode" else "seq"): n, "error": err, **res})
                    print(f"{tag}: {res.get('median_s', float('nan')) * 1e3:.2f} ms {err or ''}", flush=True)
                    torch.cuda.empty_cache()
            ref = None
            torch.cuda.empty_cache()
        for attn in a.attn.split(",") if "hf" in impls else ():
            try:
                model = build(name, attn)
            except Exception as e:  # noqa: BLE001
                print(f"{name} {attn}: cannot build: {type(e).__name__}: {e}", flush=True)
                continue
            for phase, shp in (("decode", dshapes), ("prefill", pshapes)):
                for i, (batch, n) in enumerate(shp):
                    tag = f"hf-{attn}-{name}-{phase}-b{batch}-{'c' if phase == 'decode' else 's'}{n}"
                    t0 = time.perf_counter()
                    try:
                        fn = decode_case if phase == "decode" else prefill_case
                        res = fn(model, kw["vocab_size"], batch, n, a.steps, tdir, tag, a.trace_all or i == 0)
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
        if a.overhead:
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
