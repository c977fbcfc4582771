"""FlashAttention-2's fixed tile shapes (roofcalc/expected/attention.py): a block computes whole
tiles of keys, and a split prompt's combine kernel issues all its blocks' warps. Expected values
are hand derivations from the kernels' tile shapes and the committed times of
validation/expected/h100/kernels/flash-dev (ops-flash-dev.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofcalc import analyze
from roofcalc.expected import Kernel
from roofcalc.expected.attention import _flash_scores
from roofcalc.hardware import load_hardware

ROOT = Path(__file__).resolve().parent.parent


def _kernel(seq: int, kv_seq: int, head_dim: int, causal: bool) -> Kernel:
    return Kernel(
        name="attn",
        model="flash",
        help="",
        dtype="bf16",
        batch=8,
        heads=64,
        kv_heads=8,
        seq=seq,
        kv_seq=kv_seq,
        head_dim=head_dim,
        causal=causal,
    )


def test_a_two_token_prompt_computes_a_whole_tile() -> None:
    # head size 64: 128 query rows by a 128-key tile per block, whatever the 2 tokens use of it
    scores, longest, _, _ = _flash_scores(_kernel(2, 2, 64, False), 8, 1, 128, 512, 512, 1, 128)
    assert longest == 128 * 128 and scores == 512 * 128 * 128
    # causal, 300 keys at head size 128 (64-key tiles): block 0 sees 128 keys, block 1 256, block
    # 2 all 300, rounded up to 320: 128 x (128 + 256 + 320)
    _, longest, block_sum, _ = _flash_scores(_kernel(300, 300, 128, True), 8, 3, 128, 1536, 1536, 1, 64)
    assert block_sum == 128 * (128 + 256 + 320) and longest == 128 * 320


def _measured(label: str) -> float:
    cases = json.loads((ROOT / "validation" / "expected" / "h100" / "ops-flash-dev.json").read_text())["cases"]
    return float(next(c for c in cases if c["label"] == label)["median_s"])


@pytest.mark.parametrize(
    ("b", "h", "hk", "s", "d", "causal"),
    [(8, 64, 8, 2, 64, False), (8, 64, 8, 8, 64, True), (8, 64, 8, 2, 128, False), (2, 8, 4, 512, 128, False)],
)
def test_short_prompts_read_their_committed_times(b: int, h: int, hk: int, s: int, d: int, causal: bool) -> None:
    """The 512-block tiny prompts read 1.6-1.8 of the model before whole tiles; a split 512-token
    prompt 1.5 before the combine's issue rate. Now within [0.8, 1.25]."""
    label = f"attn-flash-bf16-b{b}h{h}kv{hk}-s{s}-d{d}" + ("-causal" if causal else "")
    r = analyze(
        "attention",
        load_hardware("h100"),
        batch=b,
        heads=h,
        kv_heads=hk,
        seq=s,
        kv_seq=s,
        head_dim=d,
        causal=causal,
        impl="flash",
    )
    assert r.expected_s is not None
    assert 0.8 <= _measured(label) / r.expected_s <= 1.25
