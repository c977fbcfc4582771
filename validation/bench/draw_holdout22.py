"""The draw of impl-holdout22's layouts, prompts and batches (validation/HOLDOUT.md), drawn before
the set was measured, with draw_holdout20's generator and another seed (draw_holdout20.draw, which
prints what the script run then printed); impl_bench.py's
CONFIGS and SETS["holdout22"] hold its result (vocab sizes and tying as in impl-holdout20: the
families' own, the Llama layouts' drawn).

    python3 validation/bench/draw_holdout22.py
"""

from draw_holdout20 import draw

draw("roofcalc impl-holdout22 2026-11-28")
