"""cuDNN's SM90 flash forward (attention._cudnn_flash): what transformers' prefill runs on H100 and
H200 through SDPA. Expected values: hand derivations written here, and the committed development
grid (validation/expected/h100/kernels/cudnn1/dev.json), against which its figures were fitted."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from roofcalc.expected.attention import (
    CUDNN_FIXED_S,
    CUDNN_FP32_PER_SCORE,
    CUDNN_GEMM_FRACTION,
    CUDNN_TILE_S,
    _cudnn_flash,
)
from roofcalc.expected.card import card, tensor_rate
from roofcalc.expected.records import Kernel
from roofcalc.hardware import load_hardware

from .conftest import ROOT, load_script, run, run_json

DEV = ROOT / "validation" / "expected" / "h100" / "kernels" / "cudnn1" / "dev.json"
REPORT = load_script(ROOT / "validation" / "expected" / "cudnn_report.py")


def attn(
    batch: int, heads: int, seq: int, head_dim: int, causal: bool, kv_heads: int | None = None, dtype: str = "bf16"
) -> Kernel:
    """The kernel of one SDPA call (validation/expected/cudnn_report.py's, which its reports use)."""
    shape = {"batch": batch, "heads": heads, "kv_heads": kv_heads or heads, "seq": seq, "head_dim": head_dim}
    return REPORT.kernel({**shape, "causal": causal}, dtype)  # type: ignore[no-any-return]


def seconds(hw: str, k: Kernel) -> float:
    h = load_hardware(hw)
    (e,) = _cudnn_flash(h, card(h), k, 4 if k.dtype == "fp32" else 2)
    return e.seconds


def test_one_tile_a_block_is_its_keys_at_the_longer_of_wgmma_and_the_softmax() -> None:
    """4 heads of 4,096 tokens, not causal: 128 tiles of 128 rows, one on each of 128 SMs. By
    hand: 3 us a launch, 0.5 us a tile, and 128 x 4,096 scores at the longer of WGMMA's 4 x 128
    FLOP per score at 0.905 of the rate a large GEMM reaches (the registry's tensor_fraction
    0.7736 of 989.4 TFLOP/s: 0.70 of the peak) over 132 SMs and the softmax's exp (16 a clock) and
    5.5 FP32 operations (the card's lanes) at the probe's sustained 1,589 MHz; at head size 128
    WGMMA binds, at 64 the softmax."""
    h = load_hardware("h100")
    assert h.peak("bf16") == pytest.approx(989.4e12, rel=1e-3)
    assert float(h.expected.tensor_fraction["bf16"].value) == 0.7736
    c = card(h)  # the lanes are the card's FP32 peak over 2 x 132 SMs x 1.98 GHz: 127.98
    assert (c.sfu_per_clk, c.clock_hz, round(c.fp32_per_clk)) == (16, 1589e6, 128)
    per_sm = 0.905 * 0.7736 * h.peak("bf16") / 132
    softmax = (1 / 16 + 5.5 / c.fp32_per_clk) / 1589e6
    for d, score in ((128, 4 * 128 / per_sm), (64, softmax)):
        assert score == max(4 * d / per_sm, softmax)
        want = 3e-6 + 0.5e-6 + 128 * 4096 * score
        assert seconds("h100", attn(1, 4, 4096, d, False)) == pytest.approx(want, rel=1e-12)
    assert (CUDNN_FIXED_S, CUDNN_TILE_S, CUDNN_GEMM_FRACTION, CUDNN_FP32_PER_SCORE) == (3e-6, 0.5e-6, 0.905, 5.5)


def test_h200_takes_its_own_gemm_rate_clock_and_bandwidth() -> None:
    """The same SM on an H200: its tensor_fraction (0.791), its sustained clock and its DRAM; one
    tile a block at head size 128 is WGMMA-bound on both, so beyond the launch's and the tile's
    fixed costs the H200 takes the H100's time times the ratio of their GEMM rates."""
    h100, h200 = load_hardware("h100"), load_hardware("h200")
    k = attn(1, 4, 4096, 128, False)
    ratio = tensor_rate(h100, "bf16") / tensor_rate(h200, "bf16")
    fixed = CUDNN_FIXED_S + CUDNN_TILE_S
    assert (seconds("h200", k) - fixed) / (seconds("h100", k) - fixed) == pytest.approx(ratio, rel=1e-9)


def test_causal_is_top_left_whatever_the_key_count() -> None:
    """SDPA's is_causal is top-left aligned: with more keys than queries, query row i still sees
    keys 0..i, so the extra keys cost nothing (FA-2 aligns bottom-right)."""
    k = attn(1, 33, 1024, 128, True)
    longer = Kernel(**{**k.__dict__, "kv_seq": 4096})
    assert seconds("h100", longer) == pytest.approx(seconds("h100", k), rel=1e-9)


def test_tiles_go_in_order_to_the_block_that_frees_first() -> None:
    """Causal, 8 heads of 4,096 tokens: 256 tiles of 1-32 key tiles. Taken in order (head by head,
    the shortest first) by the first free of 132 blocks, the busiest block ends up with about
    1.7x the mean work (the same 8 heads of 16,384 tokens, 1,024 tiles, even out): the measured
    kernel took 92.6 us against 51.9 us for one head alone on 32 SMs."""
    k = attn(1, 8, 4096, 128, True)
    h = load_hardware("h100")
    c = card(h)
    per_sm = CUDNN_GEMM_FRACTION * tensor_rate(h, "bf16") / c.sms
    work = sum(CUDNN_TILE_S + 128 * 128 * (i + 1) * 4 * 128 / per_sm for i in range(32)) * 8
    t = seconds("h100", k) - CUDNN_FIXED_S
    assert 1.5 < t / (work / 132) < 1.9
    long = attn(1, 8, 16384, 128, True)
    work_long = sum(CUDNN_TILE_S + 128 * 128 * (i + 1) * 4 * 128 / per_sm for i in range(128)) * 8
    assert (seconds("h100", long) - CUDNN_FIXED_S) / (work_long / 132) < 1.2


def test_the_development_grid_is_what_the_model_was_fitted_to() -> None:
    """In-sample: the 89 shapes of the development grid (head size 64, 96, 128, causal or not,
    1-264 heads, 256-16,384 tokens, grouped KV heads) against their profiled kernel times."""
    doc = json.loads(DEV.read_text())
    assert doc["device"] == "NVIDIA H100 80GB HBM3"
    ratios = []
    for c in doc["cases"]:
        assert c["error"] is None and "sdpa_sm90_flash_fprop_wgmma" in c["cudnn"]["kernel"]
        assert c["default"]["kernel"] == c["cudnn"]["kernel"]  # SDPA's own pick for every shape
        k = attn(c["batch"], c["heads"], c["seq"], c["head_dim"], c["causal"], c["kv_heads"])
        ratios.append(c["cudnn"]["median_us"] * 1e-6 / seconds("h100", k))
    assert len(ratios) == 89
    assert sum(0.8 <= r <= 1.25 for r in ratios) >= 87 and sum(0.9 <= r <= 1.1 for r in ratios) >= 70
    assert 0.97 < statistics.median(ratios) < 1.06 and min(ratios) > 0.75 and max(ratios) < 1.3


@pytest.mark.parametrize(
    ("hw", "dtype", "seq", "head_dim"),
    [
        ("a100", "bf16", 2048, 128),
        ("b200", "bf16", 2048, 128),
        ("h100", "fp32", 2048, 128),
        ("h100", "bf16", 2048, 256),
    ],
)
def test_where_sdpa_does_not_run_the_sm90_kernel_flashattention2_stands(
    hw: str, dtype: str, seq: int, head_dim: int
) -> None:
    """Other cards, 32-bit data and heads over 128: FlashAttention-2's model, as SDPA runs it."""
    from roofcalc.expected.attention import _flash

    h = load_hardware(hw)
    k = attn(2, 16, seq, head_dim, True, dtype=dtype)
    (e,) = _cudnn_flash(h, card(h), k, 4 if dtype == "fp32" else 2)
    assert e.model == "flash" and e.seconds == _flash(h, card(h), k, 4 if dtype == "fp32" else 2)[0].seconds


def test_transformers_prefill_runs_cudnn_attention_and_the_fused_layout_flashattention2() -> None:
    """The hf implementation's prefill attention is SDPA's pick: cuDNN's flash forward on an H100
    (its kernel time what _cudnn_flash gives for the layer's heads; elsewhere FlashAttention-2,
    test above). The fused layout forces FlashAttention-2 (sdpa_kernel(FLASH_ATTENTION))."""
    args = ["op", "prefill", "--model", "llama-3.2-1b", "--batch", "2", "--seq", "3000"]
    h100 = {k["name"]: k for k in run_json(*args, "--impl", "hf", "--hw", "h100")["expected_kernels"]}
    fused = {k["name"]: k for k in run_json(*args, "--impl", "fused", "--hw", "h100")["expected_kernels"]}
    assert "flash_attention" not in h100 and h100["sdpa_attention"]["model"] == "cudnn_flash"
    assert "cuDNN's SM90 flash forward" in h100["sdpa_attention"]["reason"]
    assert h100["sdpa_attention"]["seconds"] == pytest.approx(
        seconds("h100", attn(2, 32, 3000, 64, True, 8)), rel=1e-12
    )
    assert fused["flash_attention"]["model"] == "flash"
    assert math.isclose(h100["sdpa_attention"]["count"], 16)


def test_many_tiles_take_the_closed_form_within_a_tile_of_the_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond CUDNN_SIMULATED_TILES the busiest block is the tiles' mean plus the longest (the list
    scheduling bound), from one head's scores in closed form: within one tile of simulating every
    tile; a prompt of 2^31 tokens takes no list of its 2^24 tiles."""
    import roofcalc.expected.attention as attention

    for causal in (True, False):
        k = attn(4, 40, 8200, 128, causal, 8)  # 4 x 40 x 65 = 10,400 tiles
        closed = seconds("h100", k)
        monkeypatch.setattr(attention, "CUDNN_SIMULATED_TILES", 10**6)
        simulated = seconds("h100", k)
        monkeypatch.undo()
        h = load_hardware("h100")
        longest_tile = CUDNN_TILE_S + 128 * 8320 * 4 * 128 / (CUDNN_GEMM_FRACTION * tensor_rate(h, "bf16") / 132)
        assert simulated <= closed <= simulated + longest_tile
    assert math.isfinite(seconds("h100", attn(1, 32, 2**31, 128, True)))


@pytest.mark.parametrize("set_name", ["h100/kernels/cudnn1/dev", "h100/kernels/cudnn1/holdout10"])
def test_the_committed_cudnn_reports_are_what_the_code_computes(set_name: str) -> None:
    """validation/expected/cudnn_report.py's reports, recomputed from the committed timings."""
    path = ROOT / "validation" / "expected" / f"{set_name}-report.json"
    mod = load_script(ROOT / "validation" / "expected" / "cudnn_report.py")
    assert json.loads(path.read_text()) == json.loads(json.dumps(mod.report(set_name)))


@pytest.mark.parametrize("model", ["flash", "cudnn_flash"])
@pytest.mark.parametrize("field", ["batch", "heads", "seq", "kv_seq", "head_dim"])
def test_an_attention_kernel_without_a_size_is_refused(tmp_path: Path, model: str, field: str) -> None:
    """Found by a hostile test: an attention kernel with no heads (or a zero or negative batch,
    prompt, key count or head size) ended in exit 70. Now one line, exit 1: a valid file whose
    formulas give no work for these parameters."""
    import yaml

    op = yaml.safe_load((ROOT / "ops" / "attention.yaml").read_text())
    k = next(k for k in op["kernels"] if k.get("model") == "flash")
    k["model"], k[field] = model, -1 if field == "head_dim" else 0
    f = tmp_path / "att.yaml"
    f.write_text(yaml.safe_dump(op, sort_keys=False))
    res = run("op", str(f), "--hw", "h100")
    assert res.exit_code == 1 and res.stdout == "", res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1 and "an attention kernel needs batch, heads, seq, kv_seq and head_dim" in lines[0]


def test_an_op_file_of_too_many_kernels_is_refused(tmp_path: Path) -> None:
    """At most MAX_KERNELS (1,000) kernels an op file: 50,000 took a minute to read."""
    import yaml

    from roofcalc.opdefs import MAX_KERNELS

    op = yaml.safe_load((ROOT / "ops" / "attention.yaml").read_text())
    op["kernels"] = [{"name": f"k{i}", "help": "x"} for i in range(MAX_KERNELS + 1)]
    f = tmp_path / "many.yaml"
    f.write_text(yaml.safe_dump(op, sort_keys=False))
    res = run("op", str(f), "--hw", "h100")
    assert res.exit_code == 2 and "at most 1000 items" in res.stderr, res.output


def test_the_hold_out_as_evaluated_once() -> None:
    """The hold-out of 40 causal prefill shapes (seed 10), drawn before the model and evaluated
    once after its last change (validation/HOLDOUT.md): 37 within [0.8, 1.25], median 1.107; the
    misses are short prompts of many heads, which ran longer than the model."""
    rep = json.loads(
        (ROOT / "validation" / "expected" / "h100" / "kernels" / "cudnn1" / "holdout10-report.json").read_text()
    )
    s = rep["summary"]
    assert rep["role"] == "hold-out" and (s["cases"], s["within_0.8_1.25"], s["sdpa_default_is_cudnn"]) == (40, 37, 40)
    misses = [c for c in rep["cases"] if not 0.8 <= c["ratio"] <= 1.25]
    assert all(c["ratio"] > 1.25 and c["shape"]["seq"] < 300 for c in misses)


def test_the_attention_op_offers_sdpas_default_pick() -> None:
    """roofcalc op attention --impl sdpa: the op's one kernel is cuDNN's flash forward on an H100
    (its time what _cudnn_flash gives; the op's FLOPs and bytes those of impl flash); a causal call
    with more keys than queries is refused, since SDPA's is_causal aligns to the top left."""
    args = ["op", "attention", "--batch", "2", "--heads", "12", "--kv-heads", "2", "--seq", "3000", "--causal"]
    sdpa = run_json(*args, "--impl", "sdpa", "--hw", "h100")
    flash = run_json(*args, "--impl", "flash", "--hw", "h100")
    (k,) = sdpa["expected_kernels"]
    assert k["name"] == "sdpa_attention" and k["model"] == "cudnn_flash"
    assert k["seconds"] == pytest.approx(seconds("h100", attn(2, 12, 3000, 128, True, 2)), rel=1e-12)
    assert (sdpa["flops"], sdpa["bytes"]) == (flash["flops"], flash["bytes"])
    assert sdpa["expected_s"] < flash["expected_s"]
    res = run("op", "attention", "--seq", "100", "--kv-seq", "200", "--causal", "--impl", "sdpa", "--hw", "h100")
    assert res.exit_code == 2 and "aligned to the top left" in res.stderr, res.output
