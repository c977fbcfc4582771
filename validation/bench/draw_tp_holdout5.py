"""The draw of h200x2/hf-tp-holdout5's layouts, prompts and batches (validation/HOLDOUT.md), drawn
before the set was measured: draw_holdout20's distributions (hidden 1,536-3,072 in heads of 128,
14-26 layers, the MLP 2.5-3.6x, the prompts and batches), with the KV heads drawn among 2, 4, 6
and 8 that divide the heads, so that each of two GPUs holds a whole number of them under
transformers' tp_plan="auto"; Llama, Mistral, Qwen2 and Qwen3 (the families the earlier TP sets
ran), their own vocabularies, the Llama layout's drawn. impl_bench.py's CONFIGS and hf_tp.py's
SETS["holdout5"] hold its result.

    python3 validation/bench/draw_tp_holdout5.py
"""

import random

SEED = "roofcalc hf-tp-holdout5 2026-11-28"
r = random.Random(SEED)
for fam in ["llama", "mistral", "qwen2", "qwen3"]:
    hidden = r.choice([1536, 1792, 2048, 2304, 2560, 3072])
    heads = hidden // 128
    kv = r.choice([k for k in (2, 4, 6, 8) if heads % k == 0 and k < heads])
    layers = r.randint(14, 26)
    ffn = round(hidden * r.uniform(2.5, 3.6) / 256) * 256
    print(fam, "hidden", hidden, "heads", heads, "kv_heads", kv, "layers", layers, "ffn", ffn)
pre = [(r.randint(1, 4), r.randrange(200, 490, 10)) for _ in range(3)] + [(1, r.randrange(2400, 4010, 100))]
dyn = [(r.randint(2, 12), r.randrange(600, 2410, 100)) for _ in range(2)]
dec = [(r.randint(4, 10), r.randrange(1500, 2610, 100))]
print("prefill", pre, "dynamic", dyn, "graph decode", dec)
print("llama vocab", r.choice([32000, 64256, 100352, 128256]), "tie", r.choice([True, False]))
