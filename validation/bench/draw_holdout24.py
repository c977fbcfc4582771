"""The draw of impl-holdout24's layouts, prompts and batches (validation/HOLDOUT.md), drawn before
the set was measured, with draw_holdout20's generator and another seed (draw_holdout20.draw, which
prints what the script run then printed); impl_bench.py's CONFIGS and SETS["holdout24"] hold its
result (vocab sizes and tying as in impl-holdout20: the families' own, the Llama layouts' drawn;
the second Llama named -h3072 beside an earlier llama-2b-kv6-16l of other widths).

    python3 validation/bench/draw_holdout24.py
"""

from draw_holdout20 import draw

draw("roofcalc impl-holdout24 2026-11-28")
