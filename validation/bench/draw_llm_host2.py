"""The draw of h200/host2 (validation/HOLDOUT.md): the reference and compiled implementations
(llm_bench.py) on steps that Python issues (decode without CUDA graphs, prefill), three presets
that fit one H200, two batches and two lengths each, drawn before the set was measured. Prints
the two llm_bench.py commands that holdout_llm_host2.sh runs, there with --budget-s 170 each (set in
the device script before the call, to keep the call within the device's ten minutes). llama-2-7b's
decodes past its 4,096-token context were measured and are refused by the model, as this draw's range
of contexts (512-16,384) could have told.

    python3 validation/bench/draw_llm_host2.py
"""

import random

PRESETS = ["llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "llama-2-7b", "llama-3.2-1b", "llama-3.2-3b", "qwen2.5-14b"]


def draw(seed: str) -> tuple[str, str]:
    r = random.Random(seed)
    models = ",".join(r.sample(PRESETS, 3))
    batches = sorted(r.sample(range(1, 17), 2))
    contexts = sorted(r.randrange(512, 16385, 64) for _ in range(2))
    dec_b = ",".join(map(str, batches))
    decode = (
        f"llm_bench.py --out OUT/llm-decode.json --models {models} --phases decode --engines eager,compiled "
        f"--graphs off --batches {dec_b} --contexts {','.join(map(str, contexts))} --budget-s 200"
    )
    # host-paced prompts: a few sequences of up to 512 tokens (a first version of this script drew
    # batches of 1-8 and prompts of 64-1,024 tokens, and its draw, batches 6 and 8 of 560 and 688
    # tokens, would have left the GPU pacing most prefills; redrawn before anything was measured, with a
    # new seed, which redrew the models and the decode batches and contexts too)
    batches = sorted(r.sample(range(1, 5), 2))
    seqs = sorted(r.randrange(64, 513, 16) for _ in range(2))
    prefill = (
        f"llm_bench.py --out OUT/llm-prefill.json --models {models} --phases prefill --engines eager,compiled "
        f"--batches {','.join(map(str, batches))} --seqs {','.join(map(str, seqs))} --budget-s 200"
    )
    return decode, prefill


if __name__ == "__main__":
    for cmd in draw("roofcalc h200 host2 2026-11-28 b"):
        print(cmd)
