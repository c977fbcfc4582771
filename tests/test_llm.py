"""Model-level decode and prefill: presets, HF configs, MoE, tensor parallelism, memory fit."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from roofcalc import analyze
from roofcalc.errors import CheckError, InputError
from roofcalc.presets import load_presets, params_from_hf_config

from .conftest import DATA, run, run_json

HF = DATA / "hf"
PRESETS = load_presets().presets


def hand_decode(p: dict, batch: int, context: int, e: int = 2) -> dict:  # type: ignore[type-arg]
    """Decode-step FLOPs and bytes from the model dimensions, written out independently of the op file."""
    L, d, h, hk, dh, f, V = (p[k] for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab"))
    E, k = p.get("experts", 1), p.get("experts_per_token", 1)
    touched = E * (1 - (1 - k / E) ** batch) if E > 1 else 1
    router = d * E if E > 1 else 0
    attn_w = d * h * dh + 2 * d * hk * dh + h * dh * d
    expert = 3 * d * f
    weights_read = L * (attn_w + expert * touched + router + 2 * d) + d + V * d
    flops = (
        2 * batch * L * (attn_w + expert * k + router)  # linear layers
        + 2 * batch * V * d  # LM head
        + 4 * batch * L * h * dh * (context + 1)  # Q K^T and P V
        + 4 * batch * d * (2 * L + 1)
    )  # RMSNorms
    return {
        "weights": weights_read * e,
        "kv_read": batch * L * 2 * hk * dh * context * e,
        "kv_write": batch * L * 2 * hk * dh * e,
        "flops": flops,
    }


@pytest.mark.parametrize("model", sorted(PRESETS))
@pytest.mark.parametrize("batch", [1, 256])
def test_every_preset_by_hand(model: str, batch: int) -> None:
    p = PRESETS[model].params
    ctx = 2048
    r = analyze("decode", "h200", model=model, batch=batch, context=ctx)
    want = hand_decode(dict(p), batch, ctx)
    terms = {t.term: t.bytes for t in r.bytes_breakdown}
    assert terms["weights"] == pytest.approx(want["weights"], rel=1e-12)
    assert terms["kv_read"] == want["kv_read"] and terms["kv_write"] == want["kv_write"]
    assert r.flops == pytest.approx(want["flops"], rel=1e-12)


def test_presets_required_by_the_issue() -> None:
    assert {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b"} <= set(
        PRESETS
    )
    assert any(p.params["kv_heads"] == p.params["heads"] for p in PRESETS.values())  # one without GQA
    assert all(p.source for p in PRESETS.values())


def test_mixtral_experts_touched_grows_with_batch() -> None:
    # one token picks 2 of 8 experts: exactly 2 read; 32 tokens: 8 * (1 - (6/8)^32) ~ 7.9992
    one = analyze("decode", "b200", model="mixtral-8x7b", batch=1, context=1)
    many = analyze("decode", "b200", model="mixtral-8x7b", batch=32, context=1)
    info1 = {i.name: i.value for i in one.info}
    info32 = {i.name: i.value for i in many.info}
    assert info1["experts_touched"] == 2
    assert info32["experts_touched"] == pytest.approx(8 * (1 - 0.75**32))
    w1 = {t.term: t.bytes for t in one.bytes_breakdown}["weights"]
    w32 = {t.term: t.bytes for t in many.bytes_breakdown}["weights"]
    assert w32 > 3 * w1


def test_seed004_crossover_near_295() -> None:
    # seed 004: "You cross into compute-bound territory only at B ~ 295" (70B fp16 on H100)
    # the crossover is a derived answer, computed when asked for (not inside analyze)
    from roofcalc.hardware import load_hardware
    from roofcalc.opdefs import load_op
    from roofcalc.presets import get_preset
    from roofcalc.roofline import crossover

    c = crossover(
        load_op("decode"),
        load_hardware("h100"),
        "batch",
        {"context": 1, "dtype": "fp16"},
        dict(get_preset("llama-3.1-70b").params),
    )
    assert analyze("decode", "h100", model="llama-3.1-70b", batch=1, context=1, dtype="fp16").crossover is None
    assert c.value is not None
    v = c.value
    assert abs(v - 295) <= 5
    assert analyze("decode", "h100", model="llama-3.1-70b", batch=v - 1, context=1, dtype="fp16").bound == "memory"
    assert analyze("decode", "h100", model="llama-3.1-70b", batch=v, context=1, dtype="fp16").bound == "compute"


def test_long_context_never_crosses() -> None:
    res = run_json("op", "decode", "--model", "llama-3.1-8b", "--batch", "1", "--context", "32768")
    assert res["crossover"]["value"] is None and "stays memory-bound for any --batch" in res["crossover"]["text"]


def test_tensor_parallel_terms() -> None:
    one = analyze("decode", "h100", model="llama-3.1-70b", batch=16, context=8192)
    four = analyze("decode", "h100", model="llama-3.1-70b", batch=16, context=8192, gpus=4)
    w1 = {t.term: t.bytes for t in one.bytes_breakdown}
    w4 = {t.term: t.bytes for t in four.bytes_breakdown}
    assert w4["kv_read"] * 4 == w1["kv_read"]  # 8 KV heads split 2 per GPU
    assert w4["weights"] == pytest.approx(w1["weights"] / 4, rel=0.001)
    # ring all-reduce, twice a layer, 2(N-1)/N of batch x hidden x 2 bytes; plus the logits all-gather
    ar = 80 * 2 * 2 * 3 * 16 * 8192 * 2 // 4 + 16 * 128256 * 2 * 3 // 4
    assert four.interconnect_bytes == ar
    assert four.t_interconnect_s == pytest.approx(ar / 450e9)  # 900 GB/s bidirectional NVLink
    assert four.predicted_s == pytest.approx(
        max(four.t_compute_s, four.t_memory_s) + four.t_interconnect_s + four.t_overhead_s
    )
    assert one.interconnect_bytes == 0 and one.t_interconnect_s == 0


def test_memory_fit_and_gpus_needed() -> None:
    r = analyze("decode", "h100", model="llama-3.1-70b", batch=1, context=1024, dtype="fp16")
    assert r.memory is not None and not r.memory.fits
    weights = next(i.bytes for i in r.memory.items if i.term == "weights")
    assert weights == pytest.approx(2 * 70.55e9, rel=0.005)  # 70.55B parameters in fp16
    assert r.memory.gpus_needed == math.ceil(r.memory.needed_bytes / 80e9) == 2
    r2 = analyze("decode", "h100", model="llama-3.1-70b", batch=1, context=1024, dtype="fp16", gpus=2)
    assert r2.memory is not None and r2.memory.fits


def test_tokens_per_second() -> None:
    r = analyze("decode", "h100", model="llama-3.1-8b", batch=8)
    assert r.tokens == 8 and r.tokens_per_s == pytest.approx(8 / r.predicted_s)
    p = analyze("prefill", "h200", model="qwen2.5-7b", batch=4, seq=4096)
    assert p.tokens == 4 * 4096 and p.time_label == "time to first token"
    assert "time to first token" in run("op", "prefill", "--model", "qwen2.5-7b").stdout


def test_breakdown_rows() -> None:
    r = analyze("prefill", "h200", model="qwen2.5-7b", batch=4, seq=4096)
    parts = {b.part: b for b in r.breakdown}
    assert set(parts) == {"qkv_projection", "attention", "output_projection", "mlp", "norms", "lm_head"}
    assert parts["norms"].bound == "memory" and parts["mlp"].bound == "compute"
    # the parts' FLOPs add up to the op's FLOPs
    assert sum(b.flops for b in r.breakdown) == r.flops


# --- Hugging Face config.json


def test_config_equals_preset() -> None:
    from_cfg = analyze("decode", "h100", model_config=str(HF / "llama-3.1-8b.json"), batch=4)
    from_preset = analyze("decode", "h100", model="llama-3.1-8b", batch=4)
    assert from_cfg.flops == from_preset.flops and from_cfg.bytes == from_preset.bytes


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        ("llama-3.1-8b.json", {"kv_heads": 8, "head_dim": 128, "tie_embeddings": False, "max_context": 131072}),
        ("mixtral-8x7b.json", {"experts": 8, "experts_per_token": 2, "ffn": 14336}),
        ("llama-2-7b.json", {"kv_heads": 32, "head_dim": 128}),  # no num_key_value_heads: MHA
        ("qwen2-tied.json", {"kv_heads": 2, "head_dim": 64, "tie_embeddings": True}),  # 896 / 14
        ("gemma-head-dim.json", {"head_dim": 256, "kv_heads": 16}),  # explicit head_dim != hidden / heads
    ],
)
def test_config_layouts(name: str, expect: dict) -> None:  # type: ignore[type-arg]
    got = params_from_hf_config(str(HF / name))
    for k, v in expect.items():
        assert got[k] == v, k


@pytest.mark.parametrize(
    ("patch", "text"),
    [
        ({"hidden_size": None}, "hidden_size: required field is missing"),
        ({"num_attention_heads": 0}, "num_attention_heads: must be at least 1"),
        ({"num_key_value_heads": 5}, "num_key_value_heads: 5 does not divide num_attention_heads 32"),
        ({"vocab_size": "big"}, "vocab_size: expected an integer"),
        ({"tie_word_embeddings": "yes"}, "tie_word_embeddings: expected true or false"),
    ],
)
def test_bad_configs(tmp_path: Path, patch: dict, text: str) -> None:  # type: ignore[type-arg]
    cfg = json.loads((HF / "llama-3.1-8b.json").read_text())
    for k, v in patch.items():
        if v is None:
            del cfg[k]
        else:
            cfg[k] = v
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    with pytest.raises(InputError, match=None) as ei:
        params_from_hf_config(str(f))
    assert text in str(ei.value)
    res = run("op", "decode", "--model-config", str(f))
    assert res.exit_code == 2 and text in res.output


def test_context_past_the_maximum_from_config() -> None:
    res = run("op", "decode", "--model-config", str(HF / "llama-2-7b.json"), "--context", "5000")
    assert res.exit_code == 2 and "exceeds the model's maximum context" in res.output


def test_not_json(tmp_path: Path) -> None:
    f = tmp_path / "config.json"
    f.write_text("{not json")
    res = run("op", "prefill", "--model-config", str(f))
    assert res.exit_code == 2 and "not JSON" in res.output


def test_model_and_config_together() -> None:
    res = run("op", "decode", "--model", "llama-3.1-8b", "--model-config", str(HF / "llama-3.1-8b.json"))
    assert res.exit_code == 2 and "not both" in res.output


# --- CLI


@pytest.mark.parametrize(
    "args",
    [
        [
            "op",
            "decode",
            "--model",
            "llama-3.1-70b",
            "--batch",
            "16",
            "--context",
            "8192",
            "--hw",
            "h100",
            "--gpus",
            "4",
        ],
        [
            "op",
            "decode",
            "--model-config",
            str(HF / "llama-3.1-8b.json"),
            "--batch",
            "8",
            "--context",
            "4096",
            "--kv-dtype",
            "fp8",
        ],
        ["op", "prefill", "--model", "qwen2.5-7b", "--batch", "4", "--seq", "4096", "--hw", "h200", "--breakdown"],
        ["op", "decode", "--model", "mixtral-8x7b", "--batch", "32", "--context", "2048", "--hw", "b200"],
    ],
)
def test_issue_examples(args: list[str]) -> None:
    res = run(*args)
    assert res.exit_code == 0, res.output
    assert "memory" in res.stdout and "bound: tokens/s" in res.stdout


def test_breakdown_flag_and_json() -> None:
    res = run("op", "prefill", "--model", "qwen2.5-7b", "--batch", "4", "--seq", "4096", "--breakdown")
    assert "qkv_projection" in res.stdout and "lm_head" in res.stdout
    d = run_json("op", "decode", "--model", "llama-3.1-70b", "--gpus", "4")
    for key in ("t_interconnect_s", "interconnect_bytes", "tokens", "tokens_per_s", "memory", "breakdown", "crossover"):
        assert key in d
    assert d["crossover"]["param"] == "batch"


def test_gpus_must_divide_heads() -> None:
    res = run("op", "decode", "--model", "llama-3.1-8b", "--gpus", "3")
    assert res.exit_code == 2 and "--gpus must divide --heads" in res.output


def test_gpus_without_interconnect_figure() -> None:
    res = run("op", "decode", "--model", "llama-3.1-8b", "--gpus", "2", "--hw", "m3-max", "--dtype", "fp16")
    assert res.exit_code == 1 and "no interconnect bandwidth" in res.output


def test_model_list() -> None:
    res = run("model", "list")
    assert res.exit_code == 0 and "mixtral-8x7b" in res.stdout and "8 (top 2)" in res.stdout
    rows = run_json("model", "list")
    assert {r["model"] for r in rows} == set(PRESETS)


def test_sweep_of_a_prompt_length_keeps_its_crossover_search_within_the_context() -> None:
    """The crossover search over seq ran to 2^20 tokens, which the model's own check refuses
    (exit 2 for a sweep of 128..1024); it now stops at the longest prompt the check accepts."""
    r = run("sweep", "prefill", "--model", "llama-3.1-8b", "--seq", "128..1024", "--hw", "h200")
    assert r.exit_code == 0, r.output
    assert "prefill turns compute-bound at --seq" in r.output


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"]}, "model_type: 'gemma2' is not modelled"),
        ({"model_type": "gpt_neox"}, "model_type: 'gpt_neox' is not modelled (supported: llama"),
        ({"model_type": None, "architectures": ["FalconForCausalLM"]}, "model_type: 'falcon' is not modelled"),
        ({"sliding_window": 4096}, "sliding_window: attention over a window of 4096 tokens is not modelled"),
    ],
)
def test_unmodelled_layouts_are_refused(tmp_path: Path, changes: dict[str, object], needle: str) -> None:
    """A config whose kernels differ from the layout roofcalc counts is refused, naming the field,
    never run silently as a Llama (a Gemma 2 config once was)."""
    cfg = json.loads((HF / "llama-3.1-8b.json").read_text()) | changes
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    res = run("op", "decode", "--model-config", str(f), "--batch", "1")
    assert res.exit_code == 2 and needle in res.stderr and str(f) in res.stderr, res.output


@pytest.mark.parametrize("changes", [{"sliding_window": None}, {"sliding_window": 4096, "use_sliding_window": False}])
def test_full_attention_configs_pass(tmp_path: Path, changes: dict[str, object]) -> None:
    cfg = json.loads((HF / "qwen2-tied.json").read_text()) | changes
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    assert run("op", "decode", "--model-config", str(f), "--batch", "1").exit_code == 0


def test_gpus_needed_is_a_count_the_model_accepts_and_that_holds_the_step() -> None:
    """Found by a hostile test: the hint divided one GPU's memory by the capacity, so it named
    counts the model refuses (69 for transformers' 405B, whose 8 KV heads the count must divide)
    or that still do not fit (the KV cache is copied once GPUs outnumber its heads). Now: the
    fewest accepted count that fits, checked here by evaluating at it and below (a 70B decode of
    64 x 26,000 tokens: 9 by one GPU's memory over the capacity, 16 with the cache's copies); 0
    where none up to 4,096 does."""
    big: dict[str, Any] = {"model": "llama-3.1-405b", "impl": "hf", "batch": 64, "seq": 131072}
    r = analyze("prefill", "h200", gpus=8, **big)
    assert r.memory is not None and not r.memory.fits and r.memory.gpus_needed == 0
    assert "no count of these GPUs the model accepts (up to 4,096) holds it" in r.warnings[0]
    kv: dict[str, Any] = {"model": "llama-3.1-70b", "batch": 64, "context": 26000}
    one = analyze("decode", "h100", **kv)
    assert one.memory is not None and not one.memory.fits
    n = one.memory.gpus_needed
    at = analyze("decode", "h100", gpus=n, **kv)
    assert at.memory is not None and at.memory.fits and n == 16
    assert math.ceil(one.memory.needed_bytes / one.memory.usable_bytes) == 9
    for g in range(1, n):  # every smaller count is refused or does not fit
        try:
            below = analyze("decode", "h100", gpus=g, **kv)
        except CheckError:  # refused by the op's checks
            continue
        assert below.memory is not None and not below.memory.fits
