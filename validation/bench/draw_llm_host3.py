"""The draw of h200/host3 (validation/HOLDOUT.md): the reference and compiled implementations
(llm_bench.py) on steps that Python issues (decode without CUDA graphs, prefill), three presets that
fit one H200, two batches and two lengths each, drawn before the set is measured, as draw_llm_host2.py
drew host2 but with each decode context inside every drawn model's context (host2's draw put
llama-2-7b's decodes past its 4,096 tokens). Prints the two llm_bench.py commands that
holdout_llm_host3.sh runs.

    python3 validation/bench/draw_llm_host3.py
    python3 validation/bench/draw_llm_host3.py "roofcalc h200 host4 2026-11-28"   (host4's draw)
"""

import random
import sys

# the presets that fit one H200 with their longest context (models/llm.yaml's max_context)
PRESETS = {
    "llama-3.1-8b": 131072,
    "mistral-7b": 32768,
    "qwen2.5-7b": 131072,
    "llama-2-7b": 4096,
    "llama-3.2-1b": 131072,
    "llama-3.2-3b": 131072,
    "qwen2.5-14b": 131072,
}


def draw(seed: str) -> tuple[str, str]:
    r = random.Random(seed)
    models = r.sample(sorted(PRESETS), 3)
    top = min(16384, min(PRESETS[m] for m in models) - 1)  # the cache holds context + 1 tokens
    batches = sorted(r.sample(range(1, 17), 2))
    contexts = sorted(r.randrange(512, top + 1, 64) for _ in range(2))
    decode = (
        f"llm_bench.py --out OUT/llm-decode.json --models {','.join(models)} --phases decode "
        f"--engines eager,compiled --graphs off --batches {','.join(map(str, batches))} "
        f"--contexts {','.join(map(str, contexts))} --budget-s 140"
    )
    batches = sorted(r.sample(range(1, 5), 2))
    seqs = sorted(r.randrange(64, 513, 16) for _ in range(2))
    prefill = (
        f"llm_bench.py --out OUT/llm-prefill.json --models {','.join(models)} --phases prefill "
        f"--engines eager,compiled --batches {','.join(map(str, batches))} --seqs {','.join(map(str, seqs))} "
        "--budget-s 140"
    )
    return decode, prefill


if __name__ == "__main__":
    for cmd in draw(sys.argv[1] if len(sys.argv) > 1 else "roofcalc h200 host3 2026-11-28"):
        print(cmd)
