"""The host's pace of an implementation from its own host time per layer (roofcalc.impl.host_layer,
op decode/prefill --host-layer), against hand counts of the fused layout's kernels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from roofcalc.errors import InputError
from roofcalc.impl.host_layer import host_op_from_layer, host_ops_per_layer
from roofcalc.opdefs import load_op
from roofcalc.resolve import resolve_hardware
from roofcalc.validation import case_host_layer

from .conftest import ROOT, VerifiedFor, committed_report, hardware_yaml, load_script, run, run_json, trace_set_files

# a Llama layout of 16 layers (validation/traces/h100/impl-holdout9's llama-1b-hd64)
CONFIG = {
    "model_type": "llama",
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "num_hidden_layers": 16,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "rope_theta": 10000.0,
    "max_position_embeddings": 16384,
}
# validation/bench/fused_model.py issues per layer: two add+RMSNorm (Triton), the QKV GEMM, the
# rotary kernel (Triton), the copy of the attention output to (tokens, heads x dim), the flash
# attention, the output projection, the gate-up GEMM, SiLU x up (Triton) and the down projection
FUSED_KERNELS_PER_LAYER = 10
ISSUE_OPS = 2  # roofcalc counts each issued kernel at twice the host's op (EAGER_STEP_HOST_FACTOR)


def fused_layer_ops() -> float:
    doc = yaml.safe_load((ROOT / "impls" / "fused.yaml").read_text())
    return float(doc["figures"]["fused_layer_ops"]["value"])


def step_ops(impl: str, name: str) -> float:
    """The host work of one forward call outside its layers, as the implementation file holds it."""
    doc = yaml.safe_load((ROOT / "impls" / f"{impl}.yaml").read_text())
    return float(doc["figures"][name]["value"])


def config_file(tmp_path: Path) -> str:
    f = tmp_path / "config.json"
    f.write_text(json.dumps(CONFIG))
    return str(f)


def test_the_host_ops_of_a_fused_layer_are_its_kernels_and_its_own_work(tmp_path: Path) -> None:
    from roofcalc.presets import params_from_hf_config

    hw = resolve_hardware("h100", None, None)
    preset = dict(params_from_hf_config(config_file(tmp_path)))
    per_layer = ISSUE_OPS * FUSED_KERNELS_PER_LAYER + fused_layer_ops()
    n = host_ops_per_layer(load_op("prefill"), hw, {"batch": 1, "seq": 300, "impl": "fused"}, preset)
    assert n == pytest.approx(per_layer, rel=1e-6)
    op = host_op_from_layer(load_op("prefill"), hw, {"batch": 1, "seq": 300, "impl": "fused"}, preset, 592e-6)
    assert op == pytest.approx(592e-6 / per_layer, rel=1e-6)
    # a CUDA graph's replay issues nothing from Python
    assert host_ops_per_layer(load_op("decode"), hw, {"batch": 1, "context": 300, "impl": "fused"}, preset) == 0


def test_host_layer_paces_a_host_paced_step(tmp_path: Path) -> None:
    """1 x 300 tokens of the 16-layer fused layout: Python issues 164 kernels (10 a layer, the
    embedding, the last add+RMSNorm, the logits GEMM and their argmax), each at two host ops, 16
    layers of the implementation's own work and its forward call's own work outside the layers
    (fused_step_ops, once); then the GPU runs the logits and the argmax."""
    layer_s = 592e-6
    per_layer = ISSUE_OPS * FUSED_KERNELS_PER_LAYER + fused_layer_ops()
    op_s = layer_s / per_layer
    own = 16 * fused_layer_ops() + step_ops("fused", "fused_step_ops")
    host_total = (ISSUE_OPS * (16 * FUSED_KERNELS_PER_LAYER + 4) + own) * op_s
    args = ["op", "prefill", "--model-config", config_file(tmp_path), "--impl", "fused", "--batch", "1", "--seq", "300"]
    doc = run_json(*args, "--hw", "h100", "--host-layer", "592us", "--terms")
    assert doc["expected_limiter"] == "host"
    assert f"--host-layer 592 us a layer over the {per_layer:.1f} host ops counted in it" in doc["host_figure"]
    # twice the time per layer, twice the host's side of the step; the GPU's tail (the logits GEMM
    # and the argmax, issued last) is the same in both
    doc2 = run_json(*args, "--hw", "h100", "--host-layer", "1184us")
    assert doc2["expected_s"] - doc["expected_s"] == pytest.approx(host_total, rel=1e-6)
    tail = sum(t["seconds"] for t in doc["expected_terms"] if t["name"] in ("lm_head", "argmax"))
    assert 0 <= doc["expected_s"] - host_total - tail < 10e-6  # each queued at its stream floor
    why = next(t["reason"] for t in doc["expected_terms"] if t["name"] == "host issue")
    assert "164 PyTorch ops" in why and "an op that --host-layer gives" in why


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--impl", "fused", "--context", "300"], "replayed from a CUDA graph"),
        # a graph step whose layers take the GPU longer than a millisecond is no host-paced step either
        (["--impl", "fused", "--context", "16000", "--batch", "256"], "replayed from a CUDA graph"),
        (["--impl", "fused", "--seq", "300", "--host-layer", "1.5s"], "not a host time per layer"),
        (["--impl", "fused", "--seq", "300", "--host-layer", "1e-15"], "not a host time per layer"),
        (["--impl", "fused", "--seq", "300", "--host-layer", "fast"], "not a duration"),
    ],
)
def test_host_layer_refusals(tmp_path: Path, extra: list[str], message: str) -> None:
    phase = "decode" if "--context" in extra else "prefill"
    batch = [] if "--batch" in extra else ["--batch", "1"]
    args = ["op", phase, "--model-config", config_file(tmp_path), *batch, *extra]
    if "--host-layer" not in extra:
        args += ["--host-layer", "1ms"]
    r = run(*args)
    assert r.exit_code == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert len([line for line in r.stderr.splitlines() if line.startswith("Error")]) == 1


def test_host_layer_and_an_impl_file_exclude_each_other(tmp_path: Path) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text("schema: x\n")
    r = run("op", "prefill", "--model", "llama-3.1-8b", "--impl-file", str(f), "--host-layer", "1ms")
    assert r.exit_code == 2 and "--host-layer" in r.stderr


@pytest.mark.parametrize(
    "rec",
    [
        {"before": 1e-3},
        {"before": 1e-3, "after": None},
        {"before": -1, "after": 1e-3},
        [1e-3, 1e-3],
        5,
        {"before": 2, "after": 2},
    ],
)
def test_a_malformed_host_layer_record_is_refused(rec: object) -> None:
    with pytest.raises(InputError, match="host_layer_s"):
        case_host_layer({"host_layer_s": rec}, "case")


def test_a_host_layer_record_is_the_mean_of_its_two_timings() -> None:
    assert case_host_layer({}, "case") is None
    assert case_host_layer({"host_layer_s": {"before": 1e-3, "after": 3e-3}}, "case") == pytest.approx(2e-3)


@pytest.mark.parametrize("extra", [["--model", "mixtral-8x7b"], ["--model", "llama-3.1-8b", "--gpus", "2"]])
def test_host_layer_is_refused_where_it_was_not_timed(extra: list[str]) -> None:
    r = run("op", "prefill", *extra, "--impl", "hf", "--batch", "1", "--seq", "300", "--host-layer", "1ms")
    assert r.exit_code == 1 and "dense models on one GPU" in r.stderr and "Traceback" not in r.stderr


def test_every_way_of_giving_the_depth_counts_the_same(tmp_path: Path) -> None:
    """--model-config, and the same layout with its layers given again: one host op time."""
    base = ["op", "prefill", "--impl", "hf", "--batch", "1", "--seq", "300", "--host-layer", "1ms"]
    a = run_json(*base, "--model-config", config_file(tmp_path))
    b = run_json(*base, "--model-config", config_file(tmp_path), "--layers", "16")
    assert a["host_figure"] == b["host_figure"] and a["expected_s"] == b["expected_s"]


def test_host_track_report_is_what_the_code_computes(verified: VerifiedFor) -> None:
    """validation/expected/h200/host-track1.json: host-paced prefills of transformers and the fused
    layout, each against the hot loop timed around its round and against the implementation's own
    host time per layer timed there. The latter held more of them to [0.8, 1.25] (committed
    measurement; a development set, which the host figures per layer and per step are fitted to:
    validation/expected/step_ops.py)."""
    committed = committed_report(verified, "host_track_report", "h200/host-track1")
    s = {k: (v["within_target"], v["cases"]) for k, v in committed["summary"].items()}
    assert s == {
        "fused/ratio_hot_loop": (24, 48),
        "fused/ratio_host_layer": (40, 48),
        "hf/ratio_hot_loop": (79, 96),
        "hf/ratio_host_layer": (88, 96),
    }
    assert {r["limiter"] for r in committed["cases"]} == {"host"}


def test_a_card_without_an_expected_time_gets_none_from_the_host(tmp_path: Path) -> None:
    args = ["op", "prefill", "--model-config", config_file(tmp_path), "--impl", "hf", "--batch", "1", "--seq", "30"]
    assert run_json(*args, "--hw", "a100")["expected_s"] is None
    r = run(*args, "--hw", "a100", "--host-layer", "1ms")
    assert r.exit_code == 1 and "no expected time" in r.stderr and "Traceback" not in r.stderr


def test_the_band_of_host_layer_steps_is_for_host_paced_steps(tmp_path: Path) -> None:
    args = ["op", "prefill", "--model-config", config_file(tmp_path), "--impl", "hf", "--batch", "1", "--hw", "h100"]
    short = run_json(*args, "--seq", "300", "--host-layer", "1ms")
    assert short["expected_limiter"] == "host"
    assert short["summary"]["band"]["kind"] == "prefill/hf/python/1gpu/host/host-layer"
    # a long prompt the GPU paces keeps the band of such steps, whatever the host's figure
    long = run_json(*args, "--seq", "8000", "--host-layer", "1ms")
    assert long["expected_limiter"] != "host"
    assert long["summary"]["band"]["kind"] == run_json(*args, "--seq", "8000")["summary"]["band"]["kind"]


def test_compare_and_sweep_take_the_host_layer_as_op_does() -> None:
    base = ["--model", "llama-3.2-1b", "--impl", "hf", "--batch", "1", "--host-layer", "1.1ms"]
    one = run_json("op", "prefill", *base, "--seq", "300", "--hw", "h100")
    both = run_json("compare", "prefill", *base, "--seq", "300", "--hw", "h100", "--hw", "h200")
    assert [r["hardware"] for r in both] == ["h100", "h200"]
    assert both[0]["expected_s"] == one["expected_s"] and both[0]["host_figure"] == one["host_figure"]
    sw = run_json("sweep", "prefill", *base, "--seq", "150..300", "--steps", "2", "--hw", "h100")
    last = sw["rows"][-1]["result"]
    assert last["params"]["seq"] == 300 and last["expected_s"] == pytest.approx(one["expected_s"], rel=1e-12)
    # a card without an expected time is left out of a comparison, with its reason
    r = run("compare", "prefill", *base, "--seq", "300", "--hw", "h100", "--hw", "a100")
    assert r.exit_code == 0 and "skipped a100" in r.stderr and "no expected time" in r.stderr


def test_a_sweep_over_gpus_with_a_host_layer_is_refused() -> None:
    r = run("sweep", "prefill", "--model", "llama-3.2-1b", "--impl", "hf", "--batch", "1", "--seq", "300")
    assert r.exit_code == 2  # no range: a usage error of its own
    r = run(
        "sweep",
        "prefill",
        "--model",
        "llama-3.2-1b",
        "--impl",
        "hf",
        "--batch",
        "1",
        "--seq",
        "300",
        "--gpus",
        "1..4",
        "--host-layer",
        "1ms",
    )
    assert r.exit_code == 2 and "do not sweep --gpus" in r.stderr


def test_native_host_work_stays_at_the_hot_loop() -> None:
    """transformers' DynamicCache decode (hf-dynamic): doubling the time per layer adds one more
    layer time to each of its 16 layers (and, outside them, its kernels' issue and the forward
    call's own work, hf_step_ops, at the new op time) and leaves cuDNN's plan (native code) where it
    was, at the card's hot-loop op times the ops the implementation file counts for it."""
    doc = yaml.safe_load((ROOT / "impls" / "hf-dynamic.yaml").read_text())
    plan_ops = float(doc["figures"]["cudnn_plan_ops"]["value"])
    h200 = hardware_yaml("h200")
    hot = float(h200["expected"]["torch_op_floor_s"]["value"])
    args = ["op", "decode", "--model", "llama-3.2-1b", "--impl", "hf-dynamic", "--batch", "1", "--context", "100"]
    a = run_json(*args, "--hw", "h200", "--host-layer", "1ms")
    b = run_json(*args, "--hw", "h200", "--host-layer", "2ms")
    assert a["expected_limiter"] == b["expected_limiter"] == "host"
    # outside the layers: the forward call's own work (hf_step_ops, at the op time of 1 ms over the
    # ops counted a layer), and its kernels' issue (embedding, last norm, logits, argmax, the
    # cache's bookkeeping: less than one layer's worth)
    per_layer = a["host_figure"].split(" over the ")[1].split(" host ops")[0]
    outside = step_ops("hf", "hf_step_ops") * 1e-3 / float(per_layer)
    assert 16e-3 + outside < b["expected_s"] - a["expected_s"] < 17e-3 + outside
    tail = a["expected_s"] - (b["expected_s"] - a["expected_s"])  # the plan and the last kernels
    assert tail == pytest.approx(plan_ops * hot, rel=0.02)


def test_a_hardware_file_cannot_set_an_implementation_pace() -> None:
    """The expected section of a hardware or calibration file refuses the pace --host-layer gives."""
    from pydantic import ValidationError

    from roofcalc.hardware import Expected

    fig = {"value": 5e-5, "source": "mine", "kind": "measured"}
    with pytest.raises(ValidationError, match="impl_host_op_s"):
        Expected.model_validate({"impl_host_op_s": fig})
    assert Expected.model_validate({"torch_op_floor_s": fig}).impl_host_op_s is None


def test_host_seq_report_is_what_the_code_computes(verified: VerifiedFor) -> None:
    """validation/expected/h200/host-seq1.json: the host time per layer timed at 4, 32 and 128
    tokens, against host-paced prefills of 128 and 300 (committed measurement; a development set whose
    4-token layer timings hf_layer_ops and fused_layer_ops are fitted to, with other sets')."""
    committed = committed_report(verified, "host_seq_report", "h200/host-seq1")
    s = committed["summary"]
    # the length a layer is timed at moves the median by a few percent at most
    for impl in ("hf", "fused"):
        medians = [s[f"{impl}/ratio_layer_at_{n}"]["median"] for n in (4, 32, 128)]
        assert max(medians) - min(medians) < 0.05, medians
    assert s["fused/ratio_hot_loop"]["within_target"] < s["fused/ratio_layer_at_4"]["within_target"]


def test_a_card_without_the_hot_loop_takes_no_host_layer(tmp_path: Path) -> None:
    from roofcalc.errors import DomainError
    from roofcalc.presets import params_from_hf_config

    hw = resolve_hardware("h200", None, None)
    bare = hw.model_copy(update={"expected": hw.expected.model_copy(update={"torch_op_floor_s": None})})
    preset = dict(params_from_hf_config(config_file(tmp_path)))
    params = {"batch": 1, "context": 100, "impl": "hf-dynamic"}
    with pytest.raises(DomainError, match="torch_op_floor_s"):
        host_op_from_layer(load_op("decode"), bare, params, preset, 1e-3)


def test_a_step_no_host_paces_is_left_as_it_is() -> None:
    """Ten billion tokens: the GPU's work outlasts any host's issue, so the option changes nothing."""
    dims = ["--layers", "16", "--hidden", "2048", "--heads", "32", "--kv-heads", "8", "--head-dim", "64"]
    args = ["op", "prefill", *dims, "--ffn", "8192", "--vocab", "128256", "--impl", "hf", "--seq", "10000000000"]
    plain = run_json(*args, "--hw", "h200")
    paced = run_json(*args, "--hw", "h200", "--host-layer", "1ms")
    assert paced["expected_s"] == plain["expected_s"] and paced["host_figure"] is None


def test_an_op_without_named_implementations_takes_no_host_layer(tmp_path: Path) -> None:
    f = tmp_path / "tiny.yaml"
    f.write_text(
        "name: tiny\nsummary: an eager op with a preset option\nexample: roofcalc op ./tiny.yaml --n 4096\n"
        "presets: {option: model, help: a model}\nlaunch: \"'eager'\"\n"
        "params:\n  n: {type: int, default: 4096, help: vector length, units: elements}\n"
        "flops: 2*n\nbytes:\n  x: {expr: n*dtype_bytes, help: read x}\n"
        "kernels:\n  - {name: k1, help: a kernel, grid: 1, threads: 128, dram_bytes: n*dtype_bytes, repeat: 10}\n"
    )
    assert run("op", str(f), "--n", "10", "--hw", "h200").exit_code == 0
    r = run("op", str(f), "--n", "10", "--hw", "h200", "--host-layer", "1ms")
    assert r.exit_code == 2 and "no named implementations" in r.stderr


def test_the_host_work_figures_are_their_derivation(verified: VerifiedFor) -> None:
    """hf_step_ops and fused_step_ops, hf_layer_ops and fused_layer_ops (impls/hf.yaml,
    impls/fused.yaml) are the pooled medians that validation/expected/step_ops.py fits to the sets
    it names, and that script, run again on the committed timings, writes the committed
    validation/expected/h200/step-ops.json. The derivation adds back the figure the file holds, so
    that its result does not depend on it."""
    script = ROOT / "validation" / "expected" / "step_ops.py"
    path = ROOT / "validation" / "expected" / "h200" / "step-ops.json"
    committed = json.loads(path.read_text())
    sets = [s.split(" ")[0].removeprefix("validation/traces/") for s in committed["sets"]]
    assert sets == ["h200/host-track1", "h200/host-anatomy1", "h200/host-mode1"]
    layer_sets = [s.split(" ")[0].removeprefix("validation/traces/") for s in committed["layer"]["sets"]]
    assert layer_sets == [
        *sets,
        "h200/host-seq1",
        "h200/host-decode1",
        *(f"h200/impl-holdout{i}" for i in range(11, 20) if i != 14),
    ]

    def check() -> None:
        assert json.loads(json.dumps(load_script(script).derive())) == committed

    files = [script, path, *(f for s in layer_sets for f in trace_set_files(s))]
    verified.once("step-ops", files, check)
    for part, figures in (
        ("summary", ("hf_step_ops", "fused_step_ops")),
        ("layer", ("hf_layer_ops", "fused_layer_ops")),
    ):
        summary = committed[part] if part == "summary" else committed[part]["summary"]
        for impl, name in zip(("hf", "fused"), figures, strict=True):
            assert summary[impl]["figure"] == name
            assert step_ops(impl, name) == summary[impl]["median"]
            doc = yaml.safe_load((ROOT / "impls" / f"{impl}.yaml").read_text())["figures"][name]
            assert doc["kind"] == "fitted" and "step_ops.py" in doc["source"] and doc["fit_set"]
            assert f"median of {summary[impl]['timings']} timings" in doc["source"]
    # the layouts the per-layer figures' sources count are the layouts their timings are of
    layouts: dict[str, set[str]] = {}
    for _, impl, config, _, _ in load_script(script).layer_records():
        layouts.setdefault(impl, set()).add(json.dumps(config, sort_keys=True))
    for impl, name in (("hf", "hf_layer_ops"), ("fused", "fused_layer_ops")):
        doc = yaml.safe_load((ROOT / "impls" / f"{impl}.yaml").read_text())["figures"][name]
        assert f"timings of {len(layouts[impl])} layouts" in doc["source"]


@pytest.mark.parametrize(
    ("script_name", "set_name"),
    [("host_anatomy_report", "h200/host-anatomy1"), ("host_mode_report", "h200/host-mode1")],
)
def test_the_host_pace_reports_are_what_the_code_computes(
    script_name: str, set_name: str, verified: VerifiedFor
) -> None:
    """host-anatomy1 and host-mode1 (development sets): the committed reports are what their scripts
    compute from the committed timings with the current model."""
    committed = committed_report(verified, script_name, set_name)
    assert committed["set"] == set_name and "step_ops.py" in committed["role"]


def test_a_layer_timed_outside_no_grad_reads_the_step_too_fast() -> None:
    """host-mode1 (committed measurement): transformers' layer timed in PyTorch's default mode costs
    its host more than under no_grad (its parameters record autograd's graph), so a step run under
    no_grad and paced by it reads faster than the model than one paced by a layer timed under
    no_grad; the fused layout's plain tensors record nothing, and its two readings stay close."""
    s = json.loads((ROOT / "validation" / "expected" / "h200" / "host-mode1.json").read_text())["summary"]
    assert s["hf/grad/layer_vs_no_grad_median"] > 1.1
    assert s["hf/no_grad/ratio_layer_timed_in_grad"]["median"] < 0.93 * s["hf/no_grad/ratio_same_mode"]["median"]
    assert (
        abs(s["fused/no_grad/ratio_layer_timed_in_grad"]["median"] / s["fused/no_grad/ratio_same_mode"]["median"] - 1)
        < 0.05
    )


def test_a_comparison_refused_on_every_card_says_why_once() -> None:
    """compare with --host-layer under tensor parallelism: every card refuses for the same reason,
    which the one error line gives once (exit 1)."""
    r = run(
        "compare", "prefill", "--model", "llama-3.2-1b", "--impl", "hf", "--seq", "300",
        "--hw", "h100,h200", "--host-layer", "1ms", "--gpus", "2",
    )  # fmt: skip
    assert r.exit_code == 1 and "Traceback" not in r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].count("--host-layer:") == 1 and "one GPU" in lines[0]


def test_native_host_work_that_grows_with_the_layers_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """host_ops_native is paid once a step at the hot loop's op: a file whose native work scales with
    the layers through a term of its own (which the check on the literal name 'layers' does not
    see) is refused when --host-layer counts a layer's ops, not paced as Python."""
    from roofcalc.errors import SpecError
    from roofcalc.impl import named

    real = named.load_named
    base = real("hf-dynamic")
    phase = base.phases["decode"].model_copy(
        update={"terms": {"per_step_layers": "layers"}, "host_ops_native": "per_step_layers*100"}
    )
    aliased = base.model_copy(update={"phases": {"decode": phase}})
    monkeypatch.setattr(named, "load_named", lambda name: aliased if name == "hf-dynamic" else real(name))
    named._APPLIED.clear()
    hw = resolve_hardware("h200", None, None)
    params = {"batch": 1, "context": 300, "impl": "hf-dynamic", "layers": 16, "hidden": 2048, "heads": 32,
              "kv_heads": 8, "head_dim": 64, "ffn": 8192, "vocab": 128256}  # fmt: skip
    with pytest.raises(SpecError, match="host_ops_native grows with the layers"):
        host_ops_per_layer(load_op("decode"), hw, params, None)
    named._APPLIED.clear()
    monkeypatch.setattr(named, "load_named", real)
    # a layer of the reference decode issues 40 kernels at two host ops each, and hf's Python
    hf_layer_ops = yaml.safe_load((ROOT / "impls" / "hf.yaml").read_text())["figures"]["hf_layer_ops"]["value"]
    assert host_ops_per_layer(load_op("decode"), hw, params, None) == pytest.approx(2 * 40 + hf_layer_ops)


def test_no_loop_of_the_host_tracks_the_fused_layer_better(verified: VerifiedFor) -> None:
    """h200/host-footprint1 (committed measurement, development): over 24 rounds of eight processes,
    the fused layout's time per layer spreads as much in units of 40 distinct ops or of a Triton
    launch as in the one-op loop's; transformers' layer follows the one-op loop (correlation 0.88).
    One round of the fused layer jumped 1.9x with the loop and transformers' layer unmoved."""
    committed = committed_report(verified, "host_footprint_report", "h200/host-footprint1")
    loops = committed["loops"]
    assert committed["rounds"] == 24 and committed["processes"] == 8
    assert loops["fused/one_op"]["cv"] <= min(loops["fused/many_ops"]["cv"], loops["fused/triton"]["cv"])
    assert loops["hf/one_op"]["correlation"] > 0.85 > loops["fused/one_op"]["correlation"]
    [jump] = committed["jumps"]
    assert jump["impl"] == "fused" and jump["layer_over_usual"] > 1.5
    assert 0.9 < jump["other_layer_over_usual"] < 1.1 and 0.9 < jump["one_op_over_usual"] < 1.1


def test_a_layer_costs_no_steady_share_more_hot_loop_ops_in_the_slow_state(verified: VerifiedFor) -> None:
    """h200/host-footprint2 (committed measurement, development): ten rounds in each of six
    processes, five with rounds in both of the host's states. A layer's time in one-op units in the
    slow rounds over the fast ones went both ways from process to process (transformers' median
    1.09, 0.77-1.30; the fused layout's 0.91, 0.78-1.27): the slow state costs a layer no steady
    share more hot-loop ops, though plain Python slows more than the loop (host-state1)."""
    committed = committed_report(verified, "host_footprint_report", "h200/host-footprint2")
    assert committed["rounds"] == 60 and committed["processes"] == 6
    for impl, v in committed["by_state"].items():
        assert len(v["processes"]) == 5, impl
        assert v["min"] < 0.9 and v["max"] > 1.2 and 0.85 < v["median"] < 1.15, impl


def test_the_cpu_changes_speed_with_the_hot_loop(verified: VerifiedFor) -> None:
    """h200/host-state1 (committed measurement, development): in five processes run one after
    another on one lender machine (two pinned to one CPU each; CPUs 0, 2, 4 and 15 seen), rounds
    fell in a fast and a slow state of the CPU the process ran on: plain Python, with no PyTorch in
    it, took about 1.7x as long in the slow state, the launch path and the probe's hot loop about
    1.35-1.4x. So the host's Python slows more than the hot loop it is counted in."""
    committed = committed_report(verified, "host_state_report", "h200/host-state1")
    procs = committed["processes"]
    assert set(procs) == {"p1", "p2", "p3", "pin0", "pin15"} and procs["pin0"]["cpus"] == [0]
    for p in procs.values():
        assert p["rounds"] == 100 and 0 < p["slow_rounds"] < 100
        assert p["py_s"]["slow_over_fast"] > p["op_s"]["slow_over_fast"] > 1.25
        assert p["correlation_op_py"] > 0.45
    ratio = committed["slow_over_fast"]
    assert 1.6 < ratio["py_s"] < 1.8 and 1.3 < ratio["op_s"] < 1.45


def test_each_cpu_switches_speed_on_its_own(verified: VerifiedFor) -> None:
    """h200/host-state2 (committed measurement, development): three processes at the same time,
    pinned to CPUs 0, 8 and 15 of one lender machine, each switched between the two speeds (plain
    Python 1.6-1.7x slower in the slow state), and each pair was in the same state about as often as
    chance would have it (52-60% of their rounds against 48-50%): not a switch of the whole
    machine."""
    committed = committed_report(verified, "host_state_report", "h200/host-state2")
    assert set(committed["processes"]) == {"pin0", "pin8", "pin15"}
    for p in committed["processes"].values():
        assert 1.5 < p["py_s"]["slow_over_fast"] < 1.8 and 0.3 < p["slow_rounds"] / p["rounds"] < 0.7
    pairs = committed["together"]
    assert len(pairs) == 3 and all(v["rounds"] >= 95 for v in pairs.values())
    assert all(abs(v["same_state"] - v["by_chance"]) < 0.15 for v in pairs.values())


def test_otsu_splits_two_clusters_in_the_middle_of_their_gap() -> None:
    # logarithms 0, 0, 0, ln 10, ln 10: the split is between the clusters, at exp(ln(10) / 2)
    otsu = load_script(ROOT / "validation" / "expected" / "host_epochs_report.py").otsu
    assert otsu([1.0, 1.0, 1.0, 10.0, 10.0]) == pytest.approx(10**0.5)
    assert otsu([2.0, 4.0, 100.0]) == pytest.approx((4.0 * 100.0) ** 0.5)


def test_an_eager_decodes_slow_stretches_are_its_hosts(verified: VerifiedFor) -> None:
    """h200/host-epochs1 and -2 (committed measurements, development): the reference implementation's
    eager decode of mistral-7b at batch 15 over 14,720 tokens, one synchronized step after another on
    an H200. The host paced most steps: its issue of a step took 99% of the GPU's time for it (median),
    the GPU running on for about 0.1 ms after the last kernel was issued, where a GPU that set the pace
    would have a queue of kernels left; the GPU's own work was about 15.3 ms a step (its least time),
    and a few hundred steps of host-epochs1 left it busy longer after the issue (the fast host's
    margin is thin). In host-epochs2's slow stretches (steps of 28 ms against 17) the issue slowed
    as much as the GPU's time, 1.69x, and as plain Python sampled beside it (1.76x), far more than
    the probe's hot loop (1.32x); the SM and memory clocks stayed at 1,980 and 3,201 MHz with no
    throttle reason, and the vCPUs lost 1 tick of 123,896 to the hypervisor (steal)."""
    first = committed_report(verified, "host_epochs_report", "h200/host-epochs1")
    rep = committed_report(verified, "host_epochs_report", "h200/host-epochs2")
    assert first["steps"] == 1500 and first["slow_steps"] > 0 and first["issue_over_gpu_median"] > 0.98
    assert rep["steps"] == 4000 and rep["slow_windows"] == 26 and rep["issue_over_gpu_median"] > 0.98
    # a queue of kernels left at the end of the issue would take milliseconds; the slow windows had 0.1 ms
    assert max(rep["gpu_after_issue_median_s_slow_and_fast"]) < 2e-4 and 0.015 < rep["min_gpu_s"] < 0.016
    w = rep["slow_and_fast_windows"]
    assert 1.6 < w["issue_s"]["slow_over_fast"] < 1.8
    assert abs(w["issue_s"]["slow_over_fast"] - w["gpu_s"]["slow_over_fast"]) < 0.02
    assert w["hot_loop_op_s"]["slow_over_fast"] < 1.4 < w["plain_python_s"]["slow_over_fast"]
    for r in (first, rep):
        assert r["sm_and_memory_clocks_mhz"] == ["1980/3201"] and r["throttle_reasons"] == ["0x0000000000000000"]
        assert r["steal_ticks"] <= 1 < r["cpu_ticks"]


def test_other_host_paced_steps_slow_as_plain_python_does(verified: VerifiedFor) -> None:
    """h200/host-epochs3, -4 and -5 (committed measurements, development): the same eager decode
    again, an eager prefill of 128 tokens on llama-3.2-1b and a compiled decode of qwen2.5-7b without
    graphs, 3,000 steps each. Each was host-paced (issue 98-100% of the GPU's time); in its slow
    windows its issue slowed 1.51-1.63x, plain Python 1.56-1.65x (within 7% of the issue), the hot
    loop 1.35-1.41x (7-17% under it). Sampled at the start of each window, each loop took out a
    quarter to a half of the spread of the window's issue (its coefficient of variation 0.19-0.26;
    over the hot loop 0.10-0.15, over plain Python 0.10-0.17), neither more than the other."""
    for name in ("h200/host-epochs3", "h200/host-epochs4", "h200/host-epochs5"):
        rep = committed_report(verified, "host_epochs_report", name)
        w = rep["slow_and_fast_windows"]
        issue, py, hot = (w[k]["slow_over_fast"] for k in ("issue_s", "plain_python_s", "hot_loop_op_s"))
        assert rep["steps"] == 3000 and rep["issue_over_gpu_median"] > 0.97 and rep["slow_windows"] >= 30, name
        assert 1.45 < issue < 1.7 and abs(py / issue - 1) < 0.07 and hot < issue / 1.07, name
        cv = rep["issue_per_loop_cv"]
        assert cv["issue_s"] > 0.18 and all(0.09 < cv[k] < 0.17 for k in ("hot_loop_op_s", "plain_python_s")), name
        assert rep["sm_and_memory_clocks_mhz"] == ["1980/3201"] and rep["steal_ticks"] <= 2, name
