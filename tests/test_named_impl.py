"""Named implementations (impls/*.yaml, --impl NAME): their files, how they patch the op files'
kernels, what they fix, the architectures read from configs, and their committed validation.
Expected values come from hand derivations written here and from the committed measurements."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from roofcalc.errors import SpecError
from roofcalc.impl.named import NamedImpl, all_figures, impl_names, load_named
from roofcalc.opdefs import load_op
from roofcalc.presets import params_from_hf_config

from .conftest import DATA, VerifiedFor, committed_report, hardware_yaml, load_script, run, run_json, trace_set_files

ROOT = Path(__file__).resolve().parent.parent
HF = DATA / "hf"
DEV1 = ROOT / "validation" / "traces" / "h200" / "impl-dev1" / "times.json"


def config_file(tmp_path: Path, label: str) -> Path:
    """The config of a committed measured case (random-weight models from configs), as a file."""
    doc = json.loads(DEV1.read_text())
    cfg = next(c["config"] for c in doc["cases"] if c["model"] == label)
    f = tmp_path / f"{label}.json"
    f.write_text(json.dumps(cfg))
    return f


def test_the_impl_choices_are_the_registry() -> None:
    """--impl lists exactly the implementation files that have that step."""
    for op in ("decode", "prefill"):
        choices = load_op(op).params["impl"].choices
        assert sorted(choices or []) == sorted(n for n in impl_names() if op in load_named(n).phases)


def test_every_figure_says_what_it_is() -> None:
    for name in impl_names():
        for fname, fig in all_figures(load_named(name)).items():
            assert fig.kind in ("datasheet", "measured", "fitted", "derived", "transferred"), (name, fname)
            assert fig.source.strip(), (name, fname)


def test_a_fitted_figure_without_its_fit_set_is_refused() -> None:
    doc = yaml.safe_load((ROOT / "impls" / "hf.yaml").read_text())
    assert doc["figures"]["hf_layer_ops"]["kind"] == "fitted"
    del doc["figures"]["hf_layer_ops"]["fit_set"]
    with pytest.raises(ValueError, match="fit set"):
        NamedImpl.model_validate(doc)


def test_reference_is_the_op_files_kernels_unchanged() -> None:
    """--impl reference is what the op gave before implementations were named; --engine compiled
    names the compiled implementation."""
    base = run_json("op", "decode", "--model", "llama-3.1-8b", "--batch", "8", "--hw", "h200")
    ref = run_json("op", "decode", "--model", "llama-3.1-8b", "--batch", "8", "--hw", "h200", "--impl", "reference")
    assert ref["expected_s"] == base["expected_s"] and ref["summary"]["implementation"] == "reference-eager+graphs"
    comp = run_json("op", "decode", "--model", "llama-3.1-8b", "--batch", "8", "--hw", "h200", "--engine", "compiled")
    comp2 = run_json("op", "decode", "--model", "llama-3.1-8b", "--batch", "8", "--hw", "h200", "--impl", "compiled")
    assert comp["expected_s"] == comp2["expected_s"] != base["expected_s"]
    assert comp["bound_s"] == base["bound_s"]  # an implementation changes the expected time, not the bound


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--impl", "hf", "--engine", "compiled"], "--engine: implementation hf fixes it (eager)"),
        (["--impl", "hf", "--no-cuda-graphs"], "--cuda-graphs: implementation hf fixes it (on)"),
        (["--impl", "hf", "--gpus", "16"], "--gpus must divide --kv-heads: transformers' tensor-parallel plan"),
        (["--impl", "hf-dynamic", "--cache-len", "5000"], "--cache-len does not apply"),
        (["--impl", "hf", "--cache-len", "200000"], "--cache-len exceeds the model's maximum context"),
        (["--impl", "hf", "--context", "4096", "--cache-len", "100"], "--cache-len must hold the context"),
        (["--impl", "nope"], "--impl"),
    ],
)
def test_what_an_implementation_cannot_run_is_refused(args: list[str], needle: str) -> None:
    r = run("op", "decode", "--model", "llama-3.1-8b", "--hw", "h200", *args)
    errors = [line for line in r.stderr.splitlines() if line.startswith("Error")]
    assert r.exit_code == 2 and needle in r.stderr and len(errors) == 1 and "Traceback" not in r.stderr, r.output


def test_hf_dynamic_has_no_prefill() -> None:
    r = run("op", "prefill", "--model", "llama-3.1-8b", "--impl", "hf-dynamic")
    assert r.exit_code == 2 and "hf-dynamic" in r.stderr


def kernels(res: dict) -> dict[str, dict]:
    return {k["name"]: k for k in res["expected_kernels"]}


def test_hf_static_cache_copies_kv_to_every_head_over_every_slot(tmp_path: Path) -> None:
    """transformers' StaticCache always builds a mask, so SDPA's grouped-query path is not taken:
    repeat_kv copies K and V (2 per layer, 16 layers) to all 32 heads over all 4,160 slots.
    Its grid: 8 x 32 x 4,160 x 64 elements, 512 per 128-thread block (4 each) = 133,120 blocks.
    It is a named term of the expected time, not of the bound."""
    cfg = config_file(tmp_path, "llama-1b")
    res = run_json("op", "decode", "--model-config", str(cfg), "--impl", "hf", "--batch", "8", "--context", "4096",
                   "--cache-len", "4160", "--hw", "h200")  # fmt: skip
    k = kernels(res)
    assert k["repeat_kv"]["count"] == 2 * 16 and k["repeat_kv"]["grid"] == 8 * 32 * 4160 * 64 // 512
    assert "flash_attention" not in k and k["attention_masked"]["count"] == 16
    assert any(t["name"].startswith("repeat_kv") for t in res["expected_terms"])
    # the attention over a larger allocation grows with it; the bound reads the context alone
    big = run_json("op", "decode", "--model-config", str(cfg), "--impl", "hf", "--batch", "8", "--context", "4096",
                   "--cache-len", "16384", "--hw", "h200")  # fmt: skip
    assert big["expected_s"] > 2 * res["expected_s"] and big["bound_s"] == res["bound_s"]
    assert res["summary"]["band"]["kind"] == "decode/hf/graphs/1gpu" and res["summary"]["text"].endswith("hf+graphs")


def test_no_repeat_without_grouped_kv_heads(tmp_path: Path) -> None:
    """repeat_kv returns its input when every query head has its own KV head (Phi-3 mini)."""
    cfg = config_file(tmp_path, "phi3-mini")
    res = run_json("op", "decode", "--model-config", str(cfg), "--impl", "hf", "--batch", "4", "--context", "2048",
                   "--hw", "h200")  # fmt: skip
    assert "repeat_kv" not in kernels(res)


def test_hf_under_tensor_parallelism_takes_each_gpus_share() -> None:
    """transformers' "auto" plan at TP=2 (validation/traces/h100x2/hf-tp-dev traces): each GPU
    holds 16 of Llama 3.1 8B's 32 query heads and 4 of its 8 KV heads, so repeat_kv copies 4 KV
    heads into 16 over 4,160 slots: 8 x 16 x 4,160 x 128 elements, 512 per block. The
    embedding is split by vocabulary, and one all-reduce joins it: 2 x 32 + 1 all-reduces."""
    args = (
        "op",
        "decode",
        "--model",
        "llama-3.1-8b",
        "--impl",
        "hf",
        "--batch",
        "8",
        "--context",
        "4096",
        "--cache-len",
        "4160",
        "--hw",
        "h100",
    )
    k = kernels(run_json(*args, "--gpus", "2"))
    assert k["repeat_kv"]["count"] == 2 * 32 and k["repeat_kv"]["grid"] == 8 * 16 * 4160 * 128 // 512
    assert k["allreduce"]["count"] == 2 * 32 and k["embed_allreduce"]["count"] == 1
    assert "embed_allreduce" not in kernels(run_json(*args))  # one GPU: the embedding is whole


def test_the_tp_host_figure_is_what_its_measurement_gives() -> None:
    """hf_tp_layer_ops is derived from validation/traces/h100x2/hf-tp-host-layers2 by
    validation/expected/hf_tp_host.py; the file says so, with its kind."""
    from roofcalc.impl.named import load_named

    fig = load_named("hf").figures["hf_tp_layer_ops"]
    derived = load_script(ROOT / "validation" / "expected" / "hf_tp_host.py").derive()["hf_tp_layer_ops"]
    assert fig.kind == "derived" and fig.value == pytest.approx(derived, abs=0.05)
    two = run_json(
        "op", "prefill", "--model", "llama-3.2-1b", "--impl", "hf", "--seq", "16", "--hw", "h100", "--gpus", "2"
    )
    assert "impls/hf.yaml:hf_tp_layer_ops" in two["expected_figures"]["derived"]


def test_no_repeat_where_a_gpu_holds_one_kv_head() -> None:
    """At TP=8 each GPU holds one of the 8 KV heads: expand() then reshape() of (batch, 1, 4,
    slots, head_dim) into (batch, 4, ...) is a view, so nothing is copied (Qwen2 0.5B-like at TP=2
    measured 3.2-3.9 ms where copies would have made it 4.6-5.9: hf-tp-dev). The 4 query heads
    then read the one KV head's K and V: once from DRAM (2 x 8 x 1 x 4,160 x 128 x 2 bytes, plus q
    in and o out, 2 x 8 x 512 x 2), and three more times from the L2, which binds: the H100's
    measured L2 bandwidth (6.687 TB/s) over all four reads."""
    res = run_json("op", "decode", "--model", "llama-3.1-8b", "--impl", "hf", "--batch", "8", "--context", "4096",
                   "--cache-len", "4160", "--gpus", "8", "--hw", "h100")  # fmt: skip
    k = kernels(res)
    assert "repeat_kv" not in k
    att = k["attention_masked"]
    dram = 2 * 8 * 1 * 4160 * 128 * 2 + 2 * 8 * 512 * 2
    reread = 3 * 2 * 8 * 1 * 4160 * 128 * 2
    assert "re-reads hit L2" in att["reason"]
    assert att["seconds"] == pytest.approx((dram + reread) / 6.687e12, rel=0.03)


def test_dynamic_cache_builds_a_cudnn_plan_every_step() -> None:
    """hf-dynamic: the host's work per step includes cuDNN's plan for the new KV length, 5,856
    host-op times; on the H200 registry's host (7.326 us an op) that alone is 42.9 ms."""
    res = run_json("op", "decode", "--model", "llama-3.2-1b", "--impl", "hf-dynamic", "--batch", "4", "--hw", "h200")
    assert res["expected_s"] > 5856 * 7.326e-6 and res["expected_limiter"] == "host"
    # the result names the implementation's figures with their kinds
    assert "impls/hf-dynamic.yaml:cudnn_plan_ops" in res["expected_figures"]["measured"]
    assert "impls/hf.yaml:hf_layer_ops" in res["expected_figures"]["fitted"]  # read from hf's file
    host = next(t for t in res["expected_terms"] if t["name"] == "host issue")
    assert "own host work" in host["reason"]
    assert "cache_cat" in kernels(res) and "cache_write" not in kernels(res)


def test_fused_layout_launches_fused_kernels() -> None:
    res = run_json("op", "decode", "--model", "llama-3.1-8b", "--impl", "fused", "--batch", "16", "--hw", "h200")
    names = set(kernels(res))
    assert {"qkv_gemm", "gate_up_gemm", "add_rmsnorm", "rope_cache", "silu_mul_fused"} <= names
    assert not names & {"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "rmsnorm_eager"}
    # 2 norms a layer and the final one
    assert kernels(res)["add_rmsnorm"]["count"] == 2 * 32 + 1


def test_layouts_from_configs(tmp_path: Path) -> None:
    """Qwen3's per-head q/k norms and Phi-3's fused projections are read, not refused."""
    qwen3 = params_from_hf_config(str(config_file(tmp_path, "qwen3-0.6b")))
    phi3 = params_from_hf_config(str(config_file(tmp_path, "phi3-mini")))
    assert qwen3["qk_norm"] is True and "fused_qkv" not in qwen3
    assert phi3["fused_qkv"] is True and phi3["fused_gate_up"] is True
    res = run_json("op", "decode", "--model-config", str(config_file(tmp_path, "phi3-mini")), "--batch", "2",
                   "--hw", "h200")  # fmt: skip
    k = kernels(res)
    assert "qkv_proj" in k and "q_proj" not in k and "gate_up_proj" in k and "gate_proj" not in k
    res = run_json("op", "decode", "--model-config", str(config_file(tmp_path, "qwen3-0.6b")), "--batch", "2",
                   "--hw", "h200")  # fmt: skip
    assert kernels(res)["qk_norm"]["count"] == 16 * 28  # eager: 8 kernels for q and 8 for k, 28 layers


def test_a_window_that_covers_the_context_is_no_window(tmp_path: Path) -> None:
    cfg = json.loads((HF / "llama-3.1-8b.json").read_text()) | {"sliding_window": 131072}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    assert run("op", "decode", "--model-config", str(f), "--batch", "1").exit_code == 0


def test_impl_commands() -> None:
    r = run("impl", "list")
    assert r.exit_code == 0 and all(n in r.output for n in impl_names())
    doc = run_json("impl", "show", "hf-dynamic")
    assert doc["figures"]["cudnn_plan_ops"]["kind"] == "measured" and "hf_layer_ops" in doc["figures"]
    r = run("impl", "show", "nope")
    assert r.exit_code == 2 and "unknown implementation" in r.stderr


@pytest.mark.parametrize(
    "set_name",
    [
        "h200/impl-holdout3",
        "h100/impl-holdout5",
        "h100x2/hf-tp-holdout2",
        "h100x4/hf-tp4-holdout1",
        "h100x2/hf-tp-dev",
        "h200x2/hf-tp-holdout4",
        "h200x2/hf-tp-holdout5",
        "h100/impl-dev3-phi3",
        "h100/impl-holdout7",
        "h100/impl-holdout8",
        "h100/impl-holdout9",
        "h200/impl-holdout10",
        "h200/impl-holdout11",
        "h200/impl-holdout12",
        "h200/impl-holdout13",
        "h200/impl-holdout14",
        "h200/impl-holdout15",
        "h200/impl-holdout16",
        "h200/impl-holdout17",
        "h200/impl-holdout18",
        "h200/impl-holdout19",
        "h200/impl-holdout20",
        "h200/impl-holdout21",
        "h200/impl-holdout22",
        "h200/impl-holdout23",
        "h200/impl-holdout24",
        "h100/impl-dev4-qwen3",
    ],
)
def test_committed_named_report_is_what_the_code_computes(set_name: str, verified: VerifiedFor) -> None:
    script = ROOT / "validation" / "expected" / "named_report.py"
    card, name = set_name.split("/")
    path = ROOT / "validation" / "expected" / card / f"named-{name}.json"

    def check() -> None:
        rep = load_script(script).report(set_name)
        assert json.loads(json.dumps(rep)) == json.loads(path.read_text())

    verified.once("named-report", [script, path, *trace_set_files(set_name)], check)


def _registry_holdout(name: str) -> tuple[dict[str, Any], dict[str, tuple[Any, ...]], dict[str, float]]:
    """An H200 hold-out's named report (every kind of step a hold-out), its counts per kind (within
    target with the case's figures, with the hot loop, with the registry's; cases), and the hot loop
    around each step (the mean of its timings before and after) from the set's times.json."""
    rep = json.loads((ROOT / "validation" / "expected" / "h200" / f"named-{name}.json").read_text())
    assert set(rep["role"].values()) == {"hold-out"}
    counts = {
        k: (v["within_target"], v.get("within_target_hot_loop"), v["registry"]["within_target"], v["cases"])
        for k, v in rep["summary"].items()
    }
    times = json.loads((ROOT / "validation" / "traces" / "h200" / name / "times.json").read_text())
    hot = {
        c["label"]: (c["host_op_s"]["before"] + c["host_op_s"]["after"]) / 2
        for c in times["cases"]
        if c.get("host_op_s")
    }
    return rep, counts, hot


def test_the_hold_out_targets_hold() -> None:
    """The issue's targets on the fresh hold-outs (measured after the model they test was frozen):
    graph decode within [0.85, 1.2] every case; prefill and Python decode as the committed report
    counts them (the misses are named in docs/implementations.md)."""
    h2 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout2.json").read_text())
    h3 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout3.json").read_text())
    for rep in (h2, h3):
        for row in rep["cases"]:
            if row["kind"] == "graphs":
                assert 0.85 <= row["ratio_host"] <= 1.2, row
    h5 = json.loads((ROOT / "validation" / "expected" / "h100" / "named-impl-holdout5.json").read_text())
    assert all(0.85 <= row["ratio"] <= 1.2 for row in h5["cases"] if row["kind"] == "graphs")
    # three Phi-3 layouts never run, measured after the rotary pass-through cat was committed
    h7 = json.loads((ROOT / "validation" / "expected" / "h100" / "named-impl-holdout7.json").read_text())
    assert {k: (v["within_target"], v["cases"]) for k, v in h7["summary"].items()} == {
        "hf/graphs": (12, 12),
        "hf/prefill": (9, 9),
    }
    # five layouts never run, every implementation, measured before any change (ninth session):
    # every target held but three prompts of transformers (1.31-1.33 with the host timed around
    # each); its prefills are in-sample since the eleventh session (the step's last kernels,
    # closes_step); of the two host-paced 1 x 400 prompts still over then, Qwen3's still is (1.26;
    # Phi-3's came within with the forward call's own host work, hf_step_ops)
    h8 = json.loads((ROOT / "validation" / "expected" / "h100" / "named-impl-holdout8.json").read_text())
    # (the fused layout's two 1 x 400 prompts read 1.35-1.41 since its Python per layer was refitted
    # on H200 hosts' timings, fused_layer_ops, in the fourteenth and fifteenth sessions)
    assert {k: (v["within_target"], v["cases"]) for k, v in h8["summary"].items()} == {
        "fused/prefill": (6, 8),
        "fused/graphs": (10, 10),
        "hf/prefill": (19, 20),
        "hf/graphs": (25, 25),
        "hf-dynamic/python": (10, 10),
    }
    assert h8["role"]["prefill"] == "in-sample" and h8["role"]["graphs"] == "hold-out"
    misses = [r for r in h8["cases"] if r["kind"] == "prefill" and not 0.8 <= r["ratio_host"] <= 1.25]
    hf_misses = [r for r in misses if r["impl"] == "hf"]
    assert [r["label"][3:8] for r in hf_misses] == ["qwen3"] and all(r["limiter"] == "host" for r in misses)
    assert all(1.25 < r["ratio_host"] < 1.3 for r in hf_misses)
    # five more layouts never run, measured before the eleventh session's changes (the closing
    # kernels, cuDNN's flash forward) and evaluated once after them: every target held but two
    # Phi-3 prompts of transformers in a slow host's process and two host-paced prompts of the
    # fused layout (validation/HOLDOUT.md), which are within since fused_layer_ops was refitted
    h9 = json.loads((ROOT / "validation" / "expected" / "h100" / "named-impl-holdout9.json").read_text())
    assert {k: (v["within_target"], v["cases"]) for k, v in h9["summary"].items()} == {
        "fused/prefill": (10, 10),
        "fused/graphs": (10, 10),
        "hf/prefill": (23, 25),
        "hf/graphs": (25, 25),
        "hf-dynamic/python": (10, 10),
    }
    assert set(h9["role"].values()) == {"hold-out"}
    misses = [r for r in h9["cases"] if r["kind"] == "prefill" and not 0.8 <= r["ratio_host"] <= 1.25]
    assert sorted(r["label"] for r in misses) == [
        "hf-phi3-1b-kv4-prefill-b1-s300",
        "hf-phi3-1b-kv4-prefill-b2-s1200",
    ]
    # three more layouts on an H200, drawn and measured after the session's last model change:
    # every GPU-paced prompt (up to 2 x 12,000 tokens) and every decode within; three host-paced
    # 1 x 500 prompts out (validation/HOLDOUT.md); since hf_layer_ops and fused_layer_ops were
    # refitted, the fused Mistral is within and the fused Llama out (1.41), and transformers' Mistral
    # sits at the edge (1.248 with the fourteenth session's fit, 1.256 once host-seq1's and
    # host-decode1's timings joined it in the fifteenth)
    h10 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout10.json").read_text())
    assert {k: (v["within_target"], v["cases"]) for k, v in h10["summary"].items()} == {
        "fused/prefill": (7, 8),
        "fused/graphs": (6, 6),
        "hf/prefill": (10, 12),
        "hf/graphs": (9, 9),
        "hf-dynamic/python": (3, 3),
    }
    misses = [r for r in h10["cases"] if not 0.8 <= r.get("ratio_host", r["ratio"]) <= 1.25 and r["kind"] == "prefill"]
    assert all(r["label"].endswith("-b1-s500") and r["limiter"] == "host" for r in misses) and len(misses) == 3
    # four more layouts on an H200, each prefill with the implementation's own host time per layer
    # timed around it, drawn before that figure entered the model and evaluated once after: the
    # fused layout's host-paced prompts all within (the hot loop around them had put them at
    # 0.63-0.78 with fused_layer_ops as it was then, within since its refit); transformers'
    # host-paced prompts out all faster than the model. impl_bench.py
    # timed transformers' layer in PyTorch's default mode there, where its parameters record
    # autograd's graph, beside steps run under no_grad, as in impl-holdout12 to -15
    # (validation/traces/h200/host-mode1): their prefills (and -14's and -15's decode from Python)
    # are in-sample since, their graph decode a hold-out (validation/HOLDOUT.md)
    expected = {
        11: {"fused/prefill": (10, 10, 10), "fused/graphs": (2, None, 2), "hf/prefill": (14, 19, 20)},
        12: {"fused/prefill": (12, 8, 12), "fused/graphs": (2, None, 2), "hf/prefill": (27, 23, 30)},
        13: {
            "fused/prefill": (5, 5, 6),
            "fused/graphs": (2, None, 2),
            "hf/prefill": (10, 11, 12),
            "hf-dynamic/python": (12, 12, 12),
        },
        14: {"hf/prefill": (11, 12, 12), "hf-dynamic/python": (16, 16, 16)},
        15: {
            "fused/prefill": (6, 6, 6),
            "fused/graphs": (2, None, 2),
            "hf/prefill": (11, 12, 12),
            "hf-dynamic/python": (8, 8, 8),
        },
    }
    for n, want in expected.items():
        rep = json.loads((ROOT / "validation" / "expected" / "h200" / f"named-impl-holdout{n}.json").read_text())
        got = {k: (v["within_target"], v.get("within_target_hot_loop"), v["cases"]) for k, v in rep["summary"].items()}
        assert got == want, n
        assert rep["role"]["prefill"] == rep["role"]["python"] == "in-sample", n
        assert rep["role"]["graphs"] == ("in-sample" if n == 14 else "hold-out"), n
        layered = [r for r in rep["cases"] if r.get("host_layer_s")]
        assert layered and {r["host_layer_autograd"] for r in layered} == {"default"}, n
        # transformers' rows, paced by a layer timed with autograd recording: faster than the model
        hf = [r["ratio_host"] for r in layered if r["impl"] == "hf" and r["kind"] == "prefill"]
        assert sorted(hf)[len(hf) // 2] < 0.95, n
    h11 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout11.json").read_text())
    misses = [r for r in h11["cases"] if r["kind"] == "prefill" and not 0.8 <= r["ratio_host"] <= 1.25]
    assert all(r["impl"] == "hf" and r["limiter"] == "host" and r["ratio_host"] < 0.8 for r in misses)
    # four more, drawn after that, the layer timed under no_grad as the steps run, evaluated once
    # with the forward call's own host work outside its layers (hf_step_ops, fused_step_ops); these
    # and impl-holdout17 to -19 timed the layer the fourteenth session refitted hf_layer_ops and
    # fused_layer_ops to (validation/expected/step_ops.py): their prefill and Python decode steps
    # are in-sample since, their graph decode a hold-out
    h16 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout16.json").read_text())
    assert {
        k: (v["within_target"], v.get("within_target_hot_loop"), v["cases"]) for k, v in h16["summary"].items()
    } == {
        "fused/prefill": (7, 8, 8),
        "fused/graphs": (2, None, 2),
        "hf/prefill": (15, 12, 16),
        "hf-dynamic/python": (8, 8, 8),
    }
    assert h16["role"] == {"prefill": "in-sample", "graphs": "hold-out", "python": "in-sample"}
    assert {r["host_layer_autograd"] for r in h16["cases"] if r.get("host_layer_s")} == {"no_grad"}
    assert 0.95 < h16["summary"]["hf/prefill"]["median"] < 1.1
    # five more, drawn after impl-holdout16's evaluation, on a host that moved within cases
    # (validation/HOLDOUT.md): every miss a prompt the host paces, as many with either figure
    h17 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout17.json").read_text())
    assert {
        k: (v["within_target"], v.get("within_target_hot_loop"), v["cases"]) for k, v in h17["summary"].items()
    } == {
        "fused/prefill": (7, 5, 8),
        "fused/graphs": (2, None, 2),
        "hf/prefill": (14, 14, 20),  # 16 with the hot loop before the fifteenth session's refit
        "hf-dynamic/python": (10, 10, 10),
    }
    assert h17["role"] == {"prefill": "in-sample", "graphs": "hold-out", "python": "in-sample"}
    misses = [r for r in h17["cases"] if r["kind"] == "prefill" and not 0.8 <= r["ratio_host"] <= 1.25]
    assert len(misses) == 7 and {r["limiter_host"] for r in misses} == {"host"}
    # four more, drawn after --cudnn-plans-cached: each DynamicCache decode case timed again in its
    # process, its plans then cached, within its target with the option
    h18 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout18.json").read_text())
    assert {
        k: (v["within_target"], v.get("within_target_hot_loop"), v["cases"]) for k, v in h18["summary"].items()
    } == {
        "hf/prefill": (7, 8, 8),
        "hf-dynamic/python": (12, 12, 12),
        "hf-dynamic (plans cached)/python": (12, 12, 12),
    }
    assert set(h18["role"].values()) == {"in-sample"}
    cached = [r for r in h18["cases"] if r.get("cudnn_plans_cached")]
    assert len(cached) == 12 and all(r["label"].endswith("-warm") for r in cached)
    # with the card's own figures (what the command prints without --host-layer) such steps read
    # slower than the model: its hot loop paces transformers' Python faster than it ran (median
    # 1.24 with the H200's probe figure, 6.94 us, until the sixteenth session; 1.175 with the
    # median of the hot loops timed around steps, 7.33 us)
    assert h18["summary"]["hf-dynamic (plans cached)/python"]["registry"] == {"within_target": 10, "median": 1.175}
    # four more, drawn after those mends: every kind of step of hf, hf-dynamic and fused
    h19 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout19.json").read_text())
    assert {
        k: (v["within_target"], v.get("within_target_hot_loop"), v["cases"]) for k, v in h19["summary"].items()
    } == {
        "fused/prefill": (5, 4, 6),
        "fused/graphs": (2, None, 2),
        "hf/prefill": (12, 11, 12),
        "hf-dynamic/python": (8, 8, 8),
        "hf-dynamic (plans cached)/python": (8, 8, 8),
    }
    assert h19["role"] == {"prefill": "in-sample", "graphs": "hold-out", "python": "in-sample"}
    # seven layouts drawn at random after hf_layer_ops and fused_layer_ops were refitted (fourteenth
    # session), every kind of step: each prefill's one miss a prompt whose layer timings moved 1.6x
    # and more; with the hot loop the fused layout's host-paced prompts read slower than the model
    h20 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout20.json").read_text())
    assert {
        k: (v["within_target"], v.get("within_target_hot_loop"), v["cases"]) for k, v in h20["summary"].items()
    } == {
        "fused/prefill": (15, 10, 16),
        "fused/graphs": (4, None, 4),
        "hf/prefill": (27, 28, 28),
        "hf-dynamic/python": (14, 14, 14),
        "hf-dynamic (plans cached)/python": (14, 14, 14),
    }
    assert set(h20["role"].values()) == {"hold-out"}
    misses = [r for r in h20["cases"] if r["kind"] == "prefill" and not 0.8 <= r["ratio_host"] <= 1.25]
    assert len(misses) == 2 and all(r["host_layer_moved"] > 1.5 for r in misses)
    # seven more drawn at random before the fifteenth session's refit and evaluated once after it,
    # transformers' graph decode too: every decode within; the prefill misses prompts during which
    # the host's pace moved (layer timings before and after more than named_report's STEADY_LAYER,
    # 1.2x, apart) but one, Phi-3's 3 x 410 at 1.262
    h21 = json.loads((ROOT / "validation" / "expected" / "h200" / "named-impl-holdout21.json").read_text())
    assert {
        k: (v["within_target"], v.get("within_target_hot_loop"), v["cases"]) for k, v in h21["summary"].items()
    } == {
        "fused/prefill": (15, 12, 16),
        "fused/graphs": (4, None, 4),
        "hf/prefill": (21, 20, 28),
        "hf/graphs": (7, None, 7),
        "hf-dynamic/python": (14, 14, 14),
        "hf-dynamic (plans cached)/python": (14, 14, 14),
    }
    assert set(h21["role"].values()) == {"hold-out"}
    misses = [r for r in h21["cases"] if r["kind"] == "prefill" and not 0.8 <= r["ratio_host"] <= 1.25]
    assert len(misses) == 8 and sum(r["host_layer_moved"] > 1.2 for r in misses) == 7
    assert all(0.85 <= r["ratio"] <= 1.2 for r in h21["cases"] if r["kind"] == "graphs")
    # seven more drawn at random before the H200 registry's host figure became the median of the
    # hot loops timed around steps (sixteenth session), evaluated once after: with the case's own
    # host figures every decode within and prefill 24 of 28 and 14 of 16; with the registry's, the
    # 25 host-paced steps that read more than 1.5x the model (1.51-2.24) ran with the hot loop at
    # 9.2-11.7 us against the figure's 7.33, which no one figure of the host's two states can say
    h22, counts, hot = _registry_holdout("impl-holdout22")
    assert counts == {
        "fused/prefill": (14, 9, 7, 16),
        "fused/graphs": (4, None, 4, 4),
        "hf/prefill": (24, 26, 15, 28),
        "hf/graphs": (7, None, 7, 7),
        "hf-dynamic/python": (14, 14, 12, 14),
        "hf-dynamic (plans cached)/python": (14, 14, 9, 14),
    }
    slow_misses = [
        r for r in h22["cases"] if r["kind"] != "graphs" and r["ratio"] > 1.5 and r["limiter_host"] == "host"
    ]
    assert len(slow_misses) >= 10 and all(hot[r["label"]] > 9e-6 for r in slow_misses)
    # seven more drawn after that evaluation, the same model, on a host in its fast state around
    # most steps: with the registry's figures every miss a step with the hot loop above 9 us
    h23, counts, hot = _registry_holdout("impl-holdout23")
    assert counts == {
        "fused/prefill": (16, 14, 13, 16),
        "fused/graphs": (4, None, 4, 4),
        "hf/prefill": (26, 28, 27, 28),
        "hf/graphs": (7, None, 7, 7),
        "hf-dynamic/python": (14, 14, 14, 14),
        "hf-dynamic (plans cached)/python": (14, 14, 13, 14),
    }
    target = {"prefill": (0.8, 1.25), "python": (0.67, 1.5), "graphs": (0.85, 1.2)}
    reg_misses = [r for r in h23["cases"] if not target[r["kind"]][0] <= r["ratio"] <= target[r["kind"]][1]]
    assert len(reg_misses) == 5 and all(hot[r["label"]] > 9e-6 for r in reg_misses)
    # transformers at TP=2 and TP=4, measured after its model (hf_tp_layer_ops included) was committed
    for card, name in (("h100x2", "hf-tp-holdout2"), ("h100x4", "hf-tp4-holdout1"), ("h200x2", "hf-tp-holdout4")):
        tp = json.loads((ROOT / "validation" / "expected" / card / f"named-{name}.json").read_text())
        assert all(v["within_target"] == v["cases"] for v in tp["summary"].values()), tp["summary"]
        assert set(tp["summary"]) == {"hf/graphs", "hf/prefill", "hf-dynamic/python"}
    # four layouts drawn at random after the H200 registry's host figure changed, at TP=2: with each
    # step's host speed timed around it all but one prompt within; with the registry's figures the
    # misses are 7 of the 8 prompts of the two layouts whose rank 0 ran in the host's slow state
    tp = json.loads((ROOT / "validation" / "expected" / "h200x2" / "named-hf-tp-holdout5.json").read_text())
    assert set(tp["role"].values()) == {"hold-out"}
    assert {
        k: (v["within_target"], v.get("registry", {}).get("within_target"), v["cases"])
        for k, v in tp["summary"].items()
    } == {
        "hf/graphs": (4, None, 4),
        "hf/prefill": (15, 9, 16),
        "hf-dynamic/python": (8, 8, 8),
    }
    misses = {r["label"].split("-prefill")[0] for r in tp["cases"] if r["kind"] == "prefill" and r["ratio"] > 1.25}
    assert misses == {"hf-tp2-llama-2b-kv2-20l-f7680", "hf-tp2-qwen2-1b-kv2-25l"}
    # impl-holdout3's fused prompts at 1 x 300, within before fused_layer_ops was refitted on later
    # H200 hosts, read 1.37 and 1.55 of the model with the host timed in their run since
    s = h3["summary"]
    assert (s["fused/prefill"]["within_target"], s["fused/prefill"]["cases"]) == (6, 8)
    assert s["hf/prefill"]["within_target"] >= 0.9 * s["hf/prefill"]["cases"]
    assert s["hf-dynamic/python"]["within_target"] >= 0.9 * s["hf-dynamic/python"]["cases"]


def test_spec_errors_name_the_file() -> None:
    from roofcalc.impl.named import apply

    bad = load_named("hf").model_copy(
        update={"phases": {"decode": load_named("hf").phases["decode"].model_copy(update={"drop": ["no_such"]})}}
    )
    with pytest.raises(SpecError, match=r"impls/hf\.yaml: phases\.decode: drop"):
        apply(load_op("decode"), bad)


def test_a_phase_term_cannot_shadow_a_figure() -> None:
    """A phase's own term named as one of the implementation's figures would replace the figure in
    its formulas while `impl show` still printed the figure: refused, naming the file that holds it."""
    from roofcalc.impl.named import apply

    hf = load_named("hf")
    phase = hf.phases["prefill"].model_copy(update={"terms": {"hf_step_ops": "1"}})
    with pytest.raises(SpecError, match=r"terms: 'hf_step_ops' is already a figure of impls/hf\.yaml"):
        apply(load_op("prefill"), hf.model_copy(update={"phases": {"prefill": phase}}))


@pytest.mark.parametrize("value", [-65.5, True, float("nan"), float("inf"), "65.5", None])
def test_a_figure_is_a_finite_count(value: object) -> None:
    """Every figure of an implementation file counts host work or a time: a finite number of at
    least 0; a negative one, a boolean (pydantic would read true as 1), NaN, infinity, a string or
    nothing is refused when the file is read."""
    from roofcalc.impl.named import ImplFigure

    with pytest.raises(ValueError, match="value"):
        ImplFigure.model_validate({"value": value, "kind": "derived", "source": "a test"})
    assert ImplFigure.model_validate({"value": 0, "kind": "derived", "source": "a test"}).value == 0


def test_a_named_implementation_file_is_not_an_impl_file(tmp_path: Path) -> None:
    """impls/hf.yaml given to --impl-file: one line saying what --impl-file takes (exit 2)."""
    mine = tmp_path / "myhf.yaml"
    mine.write_text((ROOT / "impls" / "hf.yaml").read_text())
    r = run("op", "prefill", "--model", "llama-3.2-1b", "--impl-file", str(mine), "--seq", "300", "--hw", "h100")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "named implementation's file" in r.stderr and "--save-impl" in r.stderr
    assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1


def test_an_implementation_file_and_a_named_one_are_not_both_taken() -> None:
    impl = ROOT / "tests" / "data" / "impl" / "hf-eager-llama-1b.yaml"
    for extra in (["--impl", "hf"], ["--engine", "compiled"]):
        r = run("op", "decode", "--model", "llama-3.2-1b", "--impl-file", str(impl), "--hw", "h200", *extra)
        assert r.exit_code == 2 and "not both" in r.stderr, r.output


def test_qwen3_head_dim_defaults_as_its_config_class_does(tmp_path: Path) -> None:
    """transformers' Qwen3Config defaults head_dim to 128, not hidden / heads (1024 / 16 = 64)."""
    cfg = json.loads(config_file(tmp_path, "qwen3-0.6b").read_text())
    del cfg["head_dim"]
    f = tmp_path / "q3.json"
    f.write_text(json.dumps(cfg))
    assert params_from_hf_config(str(f))["head_dim"] == 128


@pytest.mark.parametrize("window", ["4096", 4096.0, True, [4096]])
def test_a_sliding_window_that_is_not_an_integer_is_refused(tmp_path: Path, window: object) -> None:
    cfg = json.loads((HF / "llama-3.1-8b.json").read_text()) | {"sliding_window": window}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    r = run("op", "decode", "--model-config", str(f), "--batch", "1")
    assert r.exit_code == 2 and "sliding_window: expected an integer or null" in r.stderr, r.output


def test_a_sweep_names_its_implementation() -> None:
    r = run("sweep", "decode", "--model", "llama-3.2-1b", "--impl", "fused", "--batch", "1..4", "--hw", "h200")
    assert r.exit_code == 0 and "implementation fused+graphs" in r.output


def test_fused_under_tensor_parallelism_takes_each_gpus_share() -> None:
    """Llama 3.1 8B (32 heads, 8 KV heads, ffn 14,336) over 2 GPUs at batch 8: each GPU's rotary
    kernel has a program per token and local head, 8 x (16 + 4) = 160; its SiLU*up covers 7,168
    columns in blocks of 1,024, 8 x 7 = 56 programs; the residual stream is all-reduced twice a
    layer (64) and the logits gathered once."""
    res = run_json("op", "decode", "--model", "llama-3.1-8b", "--impl", "fused", "--gpus", "2", "--batch", "8",
                   "--hw", "h100")  # fmt: skip
    k = kernels(res)
    assert k["rope_cache"]["grid"] == 160 and k["silu_mul_fused"]["grid"] == 56
    assert k["allreduce"]["count"] == 64 and k["logits_gather"]["count"] == 1
    assert res["summary"]["band"]["kind"] == "decode/fused/graphs/tp"


def test_what_an_implementation_holds_counts_in_the_fit(tmp_path: Path) -> None:
    """hf's prefill keeps the logits of every position: batch 2 x 4,096 tokens x 128,256 x 2 bytes."""
    res = run_json("op", "prefill", "--model", "llama-3.1-8b", "--impl", "hf", "--batch", "2", "--seq", "4096",
                   "--hw", "h200")  # fmt: skip
    terms = {t["term"]: t["bytes"] for t in res["memory"]["items"]}
    assert terms["logits_all"] == 2 * 4096 * 128256 * 2
    ref = run_json("op", "prefill", "--model", "llama-3.1-8b", "--batch", "2", "--seq", "4096", "--hw", "h200")
    assert res["memory"]["per_gpu_bytes"] == ref["memory"]["per_gpu_bytes"] + terms["logits_all"]


def test_qk_norm_kernels_each_touch_q_or_k(tmp_path: Path) -> None:
    """Qwen3 0.6B-like (16 heads, 8 KV heads, head_dim 128), prefill of 512 tokens: q is 512 x 2,048
    elements and k 512 x 1,024. Each of the 16 eager kernels a layer touches one of them: on average
    768 x 512 elements, so 192 blocks of 2,048; the compiled pair moves 2 + 2 bytes an element."""
    cfg = config_file(tmp_path, "qwen3-0.6b")
    res = run_json("op", "prefill", "--model-config", str(cfg), "--batch", "1", "--seq", "512", "--hw", "h200")
    assert kernels(res)["qk_norm"]["grid"] == 512 * (2048 + 1024) // 2048


def test_a_broken_implementation_file_is_a_spec_error() -> None:
    from roofcalc.impl.named import apply

    hf = load_named("hf")
    bad = hf.model_copy(
        update={"phases": {"prefill": hf.phases["prefill"].model_copy(update={"host_ops": "layers*nosuch"})}}
    )
    with pytest.raises(SpecError, match="nosuch"):
        apply(load_op("prefill"), bad)


def test_a_result_lists_the_implementation_figures_its_step_reads() -> None:
    """hf's graph decode reads none of its figures (its per-layer host work is a prefill's and
    hf-dynamic's); hf's prefill reads hf_layer_ops."""
    dec = run_json("op", "decode", "--model", "llama-3.2-1b", "--impl", "hf", "--hw", "h200")
    assert not any("impls/" in f for figs in dec["expected_figures"].values() for f in figs)
    pre = run_json("op", "prefill", "--model", "llama-3.2-1b", "--impl", "hf", "--hw", "h200")
    assert "impls/hf.yaml:hf_layer_ops" in pre["expected_figures"]["fitted"]


def test_phi3s_rotary_joins_its_parts_with_one_more_cat(tmp_path: Path) -> None:
    """transformers' Phi-3 rotary code cats the rotated part of q and of k to the part it leaves
    alone: the committed trace of a phi3-mini-12l prefill (validation/traces/h100/impl-dev3-phi3)
    has 73 CatArrayBatchedCopy kernels, 6 a layer over its 12 layers (rotate_half's two, these two,
    DynamicCache's two for K and V) and the step's rotary table."""
    import gzip

    folder = ROOT / "validation" / "traces" / "h100" / "impl-dev3-phi3"
    with gzip.open(folder / "traces" / "hf-phi3-mini-12l-prefill-b1-s200.json.gz") as f:
        doc = json.loads(f.read())
    cats = sum(1 for e in doc["traceEvents"] if e.get("cat") == "kernel" and "CatArrayBatchedCopy" in e["name"])
    assert cats == 73
    cfg = tmp_path / "phi3.json"
    model = json.loads((folder / "times.json").read_text())["cases"][0]["config"]
    cfg.write_text(json.dumps(model))
    assert params_from_hf_config(str(cfg))["rope_pass_cat"] is True
    res = run_json("op", "prefill", "--model-config", str(cfg), "--impl", "hf", "--batch", "1", "--seq", "200",
                   "--hw", "h100")  # fmt: skip
    k = kernels(res)
    assert k["rope_pass_cat"]["count"] == k["rope_cat"]["count"] == k["cache_write"]["count"] == 2 * 12
    assert cats == 3 * 2 * 12 + 1
    # a Llama's rotary code has no such cat
    cfg.write_text(json.dumps(dict(model, model_type="llama")))
    res = run_json("op", "prefill", "--model-config", str(cfg), "--impl", "hf", "--batch", "1", "--seq", "200",
                   "--hw", "h100")  # fmt: skip
    assert "rope_pass_cat" not in kernels(res)


def test_cached_cudnn_plans_take_the_plan_out_of_a_dynamic_decode_step() -> None:
    """--cudnn-plans-cached: a process that has already decoded this batch to these lengths finds
    cuDNN's plan for each in its cache, so the step pays no plan: at the card's hot-loop op, the
    figure's op times less (the step stays host-paced). Other implementations build no plan per step
    and refuse it (exit 2)."""
    plan_ops = float(
        yaml.safe_load((ROOT / "impls" / "hf-dynamic.yaml").read_text())["figures"]["cudnn_plan_ops"]["value"]
    )
    hot = float(hardware_yaml("h200")["expected"]["torch_op_floor_s"]["value"])
    args = ["op", "decode", "--model", "llama-3.2-1b", "--impl", "hf-dynamic", "--batch", "2", "--context", "900"]
    cold = run_json(*args, "--hw", "h200")
    warm = run_json(*args, "--hw", "h200", "--cudnn-plans-cached")
    assert cold["expected_limiter"] == warm["expected_limiter"] == "host"
    assert cold["expected_s"] - warm["expected_s"] == pytest.approx(plan_ops * hot, rel=1e-9)
    for impl in ("reference", "compiled", "hf", "fused"):
        r = run("op", "decode", "--model", "llama-3.2-1b", "--impl", impl, "--hw", "h200", "--cudnn-plans-cached")
        assert r.exit_code == 2 and "does not apply" in r.stderr and "Traceback" not in r.output, impl
    traced = str(ROOT / "tests" / "data" / "impl" / "hf-eager-llama-1b.yaml")
    r = run("op", "decode", "--model", "llama-3.2-1b", "--impl-file", traced, "--cudnn-plans-cached")
    assert r.exit_code == 2 and "--impl-file" in r.stderr and "reference" not in r.stderr
    # the band printed is that of the committed steps with their plans cached, not of those that built them
    assert warm["summary"]["band"]["kind"].startswith("decode/hf-dynamic-plans-cached/python/1gpu")
    assert cold["summary"]["band"]["kind"].startswith("decode/hf-dynamic/python/1gpu")


def test_the_dynamic_decode_steps_with_plans_cached_read_the_model(verified: VerifiedFor) -> None:
    """validation/traces/h200/host-decode1 (development): the same DynamicCache decode cases timed in
    three rounds of one process; the first round built cuDNN's plans, the later ones found them
    cached, and read the model with --cudnn-plans-cached (its committed report is what the code
    computes)."""
    committed = committed_report(verified, "host_decode_report", "h200/host-decode1")
    s = committed["summary"]
    built, cached = (
        s["hf-dynamic/plans_built/ratio_layer_at_prefill"],
        s["hf-dynamic/plans_cached/ratio_layer_at_prefill"],
    )
    assert built["within_target"] == built["cases"] and cached["within_target"] == cached["cases"] == 16
    assert 0.9 < cached["median"] < 1.1
