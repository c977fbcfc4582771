"""The draw of impl-holdout23's layouts, prompts and batches (validation/HOLDOUT.md), as it was run
before the set was measured, with draw_holdout20's generator and another seed; impl_bench.py's
CONFIGS and SETS["holdout23"] hold its result (vocab sizes and tying as in impl-holdout20: the
families' own, the Llama layouts' drawn).

    python3 validation/bench/draw_holdout23.py
"""

import random

from draw_holdout20 import layouts

SEED = "roofcalc impl-holdout23 2026-11-28"
layouts(SEED, ["llama", "mistral", "qwen2", "qwen3", "phi3"])
r = random.Random(SEED + " vocab")
print("llama vocab", r.choice([32000, 64256, 100352, 128256]), "tie", r.choice([True, False]))
r = layouts(SEED + " extra", ["llama", "mistral"])
print("extra llama vocab", r.choice([32000, 64256, 100352, 128256]), "tie", r.choice([True, False]))
