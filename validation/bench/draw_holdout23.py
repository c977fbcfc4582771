"""The draw of impl-holdout23's layouts, prompts and batches (validation/HOLDOUT.md), drawn before
the set was measured, with draw_holdout20's generator and another seed (draw_holdout20.draw, which
prints what the script run then printed); impl_bench.py's
CONFIGS and SETS["holdout23"] hold its result (vocab sizes and tying as in impl-holdout20: the
families' own, the Llama layouts' drawn).

    python3 validation/bench/draw_holdout23.py
"""

from draw_holdout20 import draw

draw("roofcalc impl-holdout23 2026-11-28")
