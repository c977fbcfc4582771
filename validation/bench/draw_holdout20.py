"""The draw of impl-holdout20's layouts, prompts and batches (validation/HOLDOUT.md), as it was run
before the set was measured; impl_bench.py's CONFIGS and SETS["holdout20"] hold its result (the
vocab sizes and embeddings' tying of the Mistral, Qwen and Phi-3 layouts are their families', as in
the earlier hold-outs; the two Llama layouts' are drawn).

    python3 validation/bench/draw_holdout20.py
"""

import random


def layouts(seed: str, families: list[str]) -> random.Random:
    r = random.Random(seed)
    for fam in families:
        hidden = r.choice([1536, 1792, 2048, 2304, 2560, 3072])
        heads = hidden // 128
        kv = r.choice([k for k in (1, 2, 3, 4, 6, 8) if heads % k == 0 and k < heads])
        layers = r.randint(14, 26)
        ffn = round(hidden * r.uniform(2.5, 3.6) / 256) * 256
        print(fam, "hidden", hidden, "heads", heads, "kv_heads", kv, "layers", layers, "ffn", ffn)
    if seed.endswith("2026-11-28"):
        pre = [(r.randint(1, 4), r.randrange(200, 490, 10)) for _ in range(3)] + [(1, r.randrange(2400, 4010, 100))]
        dyn = [(r.randint(2, 12), r.randrange(600, 2410, 100)) for _ in range(2)]
        dec = [(r.randint(4, 10), r.randrange(1500, 2610, 100))]
        print("prefill", pre, "dynamic", dyn, "graph decode", dec)
    return r


def draw(seed: str) -> None:
    """A hold-out's whole draw: five families' layouts with the prompts and batches, the first Llama
    layout's vocabulary and tying, then two more layouts (Llama and Mistral) and the second's."""
    layouts(seed, ["llama", "mistral", "qwen2", "qwen3", "phi3"])
    r = random.Random(seed + " vocab")
    print("llama vocab", r.choice([32000, 64256, 100352, 128256]), "tie", r.choice([True, False]))
    r = layouts(seed + " extra", ["llama", "mistral"])
    print("extra llama vocab", r.choice([32000, 64256, 100352, 128256]), "tie", r.choice([True, False]))


if __name__ == "__main__":
    draw("roofcalc impl-holdout20 2026-11-28")
