"""Implementations as data: a traced step as an implementation file (roofcalc.impl), predicted at
other shapes. Expected values come from hand derivations written here and from the committed
measurements under validation/traces/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from roofcalc.hardware import load_hardware
from roofcalc.impl import load_impl, measured_overhead
from roofcalc.impl.build import build_impl
from roofcalc.impl.predict import kernel_times, predict, replay
from roofcalc.impl.spec import SCHEMA, ImplFile
from roofcalc.trace import read_trace
from roofcalc.trace.opcost import op_cost

from .conftest import VerifiedFor, load_script, run, run_json, trace_set_files

ROOT = Path(__file__).resolve().parent.parent
HF1 = ROOT / "validation" / "traces" / "h200" / "hf1"
TRACE = HF1 / "traces" / "hf-eager-llama-1b-decode-b3-c1000.json.gz"
# the capture ran 3 warm-up and 15 timed steps after the 1,000-token prompt: the traced step's context
TRACED_CONTEXT = 1000 + 3 + 15


@pytest.fixture(scope="module")
def impl() -> ImplFile:
    return build_impl(read_trace(TRACE), load_hardware("h200"), name="t", phase="decode", batch=3, size=TRACED_CONTEXT)


def test_shapes_become_formulas_over_batch_and_context(impl: ImplFile) -> None:
    cats = [k.dims for k in impl.kernels if k.op == "aten::cat" and k.dims]
    # DynamicCache appends the new token's K (or V) to the cache: [3, 8, 1018, 64] + [3, 8, 1, 64]
    assert [["batch", 8, "context", 64], ["batch", 8, 1, 64]] in [d[0] for d in cats]
    mms = [k.dims for k in impl.kernels if k.op == "aten::mm" and k.dims]
    # a projection's activations follow the batch; its weight (2048 x 2048, q_proj) stays
    assert [["batch", 2048], [2048, 2048]] in mms


def test_a_kernel_scales_with_its_op_bound(impl: ImplFile) -> None:
    hw = load_hardware("h200")
    times, scaled = kernel_times(impl, hw, {"batch": 12, "context": TRACED_CONTEXT})
    assert 0 < scaled <= len(impl.kernels)
    i, k = next(
        (i, k) for i, k in enumerate(impl.kernels) if k.op == "aten::mm" and k.dims == [["batch", 2048], [2048, 2048]]
    )

    def bound(rows: int) -> float:
        c = op_cost("aten::mm", [[rows, 2048], [2048, 2048]], k.types, k.concrete)
        return max(c.bytes / hw.bandwidth, c.flops / hw.peak("bf16"))  # type: ignore[union-attr]

    fixed = min(impl.fixed_us["matmul"], k.measured_us) * 1e-6
    by_hand = fixed + (k.measured_us * 1e-6 - fixed) * bound(12) / bound(3)
    assert times[i] == pytest.approx(by_hand)


def test_the_replay_of_the_traced_shape_is_the_trace(impl: ImplFile) -> None:
    # no profiler cost removed, no step time: the replay spans the traced step (host-paced: its
    # GPU was idle 87% of the time)
    t = read_trace(TRACE)
    p = predict(impl, load_hardware("h200"), dict(impl.traced))
    span = (t.last_us - t.first_us) * 1e-6
    assert p.limiter == "host" and p.step_s == pytest.approx(span, rel=0.03)


def test_replay_by_hand() -> None:
    # host issues A at 0 us and B at 10 us on one stream, waits for the GPU at 12 us, issues C at
    # 13 us on another stream and ends at 20 us. A 50 us, B 5 us, C 1 us: B starts when A ends (50),
    # ends at 55; the host resumes at 55 (43 us late), issues C at 56, ends at 63; C ends at 57.
    kernels = [
        {"name": n, "kind": "copy", "call": i, "stream": s, "issue_us": t, "measured_us": d}
        for i, (n, s, t, d) in enumerate([("A", 7, 0.0, 50.0), ("B", 7, 10.0, 5.0), ("C", 8, 13.0, 1.0)])
    ]
    impl = ImplFile.model_validate(
        {
            "schema": SCHEMA,
            "name": "x",
            "phase": "decode",
            "traced": {"batch": 1, "context": 64},
            "hardware": "h200",
            "source": "-",
            "made_by": "test",
            "host_scale": 1.0,
            "overhead": measured_overhead(),
            "host_end_us": 20.0,
            "syncs_us": [12.0],
            "fixed_us": {"copy": 1.0},
            "kernels": kernels,
        }
    )
    step, busy, host = replay(impl, [50e-6, 5e-6, 1e-6], 1.0)
    assert step == pytest.approx(63e-6) and busy == pytest.approx(56e-6) and host == pytest.approx(20e-6)
    # twice as fast a host: issues at 0, 5, sync at 6 (waits to 55), C at 6.5 + 49 = 55.5; ends 10 + 49 = 59
    assert replay(impl, [50e-6, 5e-6, 1e-6], 0.5)[0] == pytest.approx(59e-6)


def _with_step_time(hw: object, step_s: float) -> ImplFile:
    """The traced step as an implementation, with the profiler's measured cost and a step time."""
    return build_impl(
        read_trace(TRACE),
        hw,
        name="t",
        phase="decode",
        batch=3,
        size=TRACED_CONTEXT,  # type: ignore[arg-type]
        overhead=measured_overhead(),
        measured_step_s=step_s,
    )


def test_the_step_time_sets_the_host_scale() -> None:
    hw = load_hardware("h200")
    impl = _with_step_time(hw, 0.01337)
    assert predict(impl, hw, dict(impl.traced)).step_s == pytest.approx(0.01337, rel=1e-3)
    assert 0.3 < impl.host_scale < 1.0  # the profiler slowed the host beyond its measured cost per event


def test_save_and_predict_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "mine.yaml"
    res = run(
        "trace",
        str(TRACE),
        "--save-impl",
        str(out),
        "--batch",
        "3",
        "--context",
        str(TRACED_CONTEXT),
        "--step-time",
        "13.37ms",
        "--hw",
        "h200",
    )
    assert res.exit_code == 0, res.output
    assert (
        "implementation written to" in res.stderr
        and yaml.load(out.read_text(), Loader=yaml.CSafeLoader)["schema"] == SCHEMA
    )
    args = (
        "op",
        "decode",
        "--model",
        "llama-3.2-1b",
        "--impl-file",
        str(out),
        "--batch",
        "12",
        "--context",
        "4000",
        "--hw",
        "h200",
    )
    doc = run_json(*args)
    hw = load_hardware("h200")
    assert doc["expected_s"] == pytest.approx(predict(load_impl(out), hw, {"batch": 12, "context": 4000}).step_s)
    s = doc["summary"]
    # the eager traced predictions' hold-outs informed a choice of rule (impl_report.py SPENT): in-sample
    assert s["implementation"] == "mine" and s["band"]["kind"] == "decode/traced" and s["band"]["sample"] == "in-sample"
    text = run(*args).stdout
    assert text.splitlines()[0].endswith("mine") and "host issue" in text


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda d: d | {"extra_key": 1}, "extra_key"),
        (lambda d: d | {"phase": "train"}, "phase"),
        (lambda d: {**d, "kernels": [{**d["kernels"][0], "dims": [["__import__('os')", 3]]}]}, "kernels.0.dims"),
        (lambda d: {**d, "kernels": [{**d["kernels"][0], "dims": [[{"a": 1}]]}]}, "kernels.0.dims"),
        (lambda d: {**d, "kernels": [{**d["kernels"][0], "measured_us": -1}]}, "measured_us"),
        (lambda d: d | {"host_scale": 0}, "host_scale"),
        (lambda d: d | {"traced": {"batch": 0, "context": 5}}, "traced"),
    ],
)
def test_bad_implementation_files_are_refused(tmp_path: Path, impl: ImplFile, edit: object, needle: str) -> None:
    doc = impl.model_dump(mode="json", by_alias=True)
    doc["kernels"] = doc["kernels"][:2]
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(edit(doc)))  # type: ignore[operator]
    res = run("op", "decode", "--model", "llama-3.2-1b", "--impl-file", str(f), "--hw", "h200")
    assert res.exit_code == 2 and res.stdout == "", res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1 and str(f) in lines[0] and needle in lines[0], res.stderr


def test_another_card_or_phase_is_refused(tmp_path: Path, impl: ImplFile) -> None:
    f = tmp_path / "i.yaml"
    from roofcalc.impl import save_impl

    save_impl(impl, str(f))
    other = run("op", "decode", "--model", "llama-3.2-1b", "--impl-file", str(f), "--hw", "h100")
    assert other.exit_code == 1 and "traced on h200" in other.stderr
    phase = run("op", "prefill", "--model", "llama-3.2-1b", "--impl-file", str(f), "--hw", "h200")
    assert phase.exit_code == 2 and "decode step" in phase.stderr
    usage = run("trace", str(TRACE), "--save-impl", str(tmp_path / "x.yaml"), "--batch", "3")
    assert usage.exit_code == 2 and "--context" in usage.stderr and not (tmp_path / "x.yaml").exists()


def test_the_holdout_report_is_what_the_code_computes(verified: VerifiedFor) -> None:
    """validation/expected/h200/impl-holdout1.json, recomputed from the committed traces and
    times (a hold-out drawn before the predictor was written: validation/traces/README.md)."""
    script = ROOT / "validation" / "expected" / "impl_report.py"
    path = ROOT / "validation" / "expected" / "h200" / "impl-holdout1.json"
    committed = json.loads(path.read_text())
    assert committed["summary"]["in_band"] == sum(r["in_band"] for r in committed["rows"] if not r["same_shape"])

    def check() -> None:
        again = json.loads(json.dumps(load_script(script).report("h200/holdout1", True), sort_keys=True))
        assert again == committed

    verified.once("impl-holdout-report", [script, path, *trace_set_files("h200/holdout1")], check)


def _mutated(tmp_path: Path, change: object) -> Path:
    doc = json.loads((ROOT / "tests" / "data" / "impl" / "hf-eager-llama-1b.yaml").read_text())
    change(doc)  # type: ignore[operator]
    f = tmp_path / "m.yaml"
    f.write_text(json.dumps(doc))
    return f


def _set_dims(dims: list[object]) -> object:
    return lambda d: d["kernels"][0].__setitem__("dims", dims)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (_set_dims([["context//0"]]), "kernels.0.dims"),
        (_set_dims([["10**10**10"]]), "kernels.0.dims"),
        (_set_dims([["log2(0)"]]), "kernels.0.dims"),
        (_set_dims([["'abc'"]]), "no strings"),
        (_set_dims([["batch**batch**batch"]]), "kernels.0.dims"),
        (_set_dims([[[[3]]]]), "two deep"),
        (lambda d: d.__setitem__("traced", {"batch": 3}), "traced"),
        (lambda d: d.__setitem__("traced", {"batch": 3, "seq": 1018}), "traced"),
        (lambda d: d.__setitem__("kernels", []), "kernels"),
        (lambda d: d["fixed_us"].__setitem__("matmul", -1e6), "fixed_us"),
        (lambda d: d.__setitem__("syncs_us", [-5]), "syncs_us"),
        (lambda d: d.__setitem__("host_end_us", 1e300), "host_end_us"),
        (lambda d: d.__setitem__("hardware", ""), "hardware"),
        (lambda d: d.__setitem__("host_scale", "1"), "host_scale"),
        (lambda d: d["kernels"][0].__setitem__("types", ["x"] * 10_000), "types"),
    ],
)
def test_hostile_implementation_files(tmp_path: Path, change: object, needle: str) -> None:
    """Found by a hostile review: each once gave exit 70 or a wrong answer. Now one line, exit 2."""
    f = _mutated(tmp_path, change)
    res = run(
        "op",
        "decode",
        "--model",
        "llama-3.2-1b",
        "--impl-file",
        str(f),
        "--hw",
        "h200",
        "--batch",
        "1000000000",
        "--context",
        "1000",
    )
    assert res.exit_code == 2 and res.stdout == "", res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1 and needle in lines[0], res.stderr


def test_a_recorded_number_string_survives_the_round_trip(tmp_path: Path) -> None:
    # layer_norm's epsilon is recorded as the string "1e-05": a YAML writer left it unquoted and the
    # loader read it back as a number; implementation files are JSON (which YAML reads too)
    out = tmp_path / "x.yaml"
    res = run(
        "trace",
        "tests/data/traces/decode-eager.json",
        "--save-impl",
        str(out),
        "--batch",
        "1",
        "--context",
        "100",
        "--hw",
        "h100",
    )
    assert res.exit_code == 0, res.output
    assert run("op", "decode", "--model", "llama-3.2-1b", "--hw", "h100", "--impl-file", str(out)).exit_code == 0


def test_the_saved_card_is_the_traced_one(tmp_path: Path) -> None:
    out = tmp_path / "a.yaml"
    assert run("trace", str(TRACE), "--save-impl", str(out), "--batch", "3", "--context", "1018").exit_code == 0
    assert load_impl(out).hardware == "h200"  # the trace's device, not the default card
    other = run(
        "trace",
        str(TRACE),
        "--save-impl",
        str(tmp_path / "b.yaml"),
        "--batch",
        "3",
        "--context",
        "1018",
        "--hw",
        "h100",
    )
    assert other.exit_code == 2 and "ran on h200" in other.stderr and not (tmp_path / "b.yaml").exists()
    trace_copy = tmp_path / "t.json.gz"
    trace_copy.write_bytes(TRACE.read_bytes())
    same = run("trace", str(trace_copy), "--save-impl", str(trace_copy), "--batch", "3", "--context", "1018")
    assert same.exit_code == 2 and "would replace the trace" in same.stderr


@pytest.mark.parametrize(("step", "needle"), [("1us", "kernels alone take"), ("1000", "over 20x")])
def test_a_step_time_of_another_step_is_refused(tmp_path: Path, step: str, needle: str) -> None:
    res = run(
        "trace",
        str(TRACE),
        "--save-impl",
        str(tmp_path / "x.yaml"),
        "--batch",
        "3",
        "--context",
        "1018",
        "--step-time",
        step,
    )
    assert res.exit_code == 2 and needle in res.stderr, res.output


def test_a_slower_host_than_traced_is_kept() -> None:
    # the traced step is host-paced (GPU busy 3.1 of 23.6 ms): a step time above the replay at scale 1
    # (18.9 ms, profiler cost removed) stretches the host, it is not capped at 1
    hw = load_hardware("h200")
    impl = _with_step_time(hw, 0.025)
    assert impl.host_scale > 1.0
    assert predict(impl, hw, dict(impl.traced)).step_s == pytest.approx(0.025, rel=1e-3)


def test_another_model_or_gpu_count_is_flagged() -> None:
    f = str(ROOT / "tests" / "data" / "impl" / "hf-eager-llama-1b.yaml")
    doc = run_json("op", "decode", "--model", "llama-3.1-70b", "--impl-file", f, "--hw", "h200")
    assert any("traced on another model" in n for n in doc["expected_notes"])
    tp = run("op", "decode", "--model", "llama-3.2-1b", "--impl-file", f, "--hw", "h200", "--gpus", "2")
    assert tp.exit_code == 1 and "one GPU" in tp.stderr


def test_a_trace_of_several_steps_is_not_kept_as_one(tmp_path: Path) -> None:
    # two ProfilerStep annotations: their kernels would be kept as one step twice as long
    doc = json.loads((ROOT / "tests" / "data" / "traces" / "decode-eager.json").read_text())
    doc["traceEvents"].append(
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": "ProfilerStep#8",
            "pid": 2871,
            "tid": 2871,
            "ts": 388.0,
            "dur": 1.0,
            "args": {},
        }
    )
    f = tmp_path / "two.json"
    f.write_text(json.dumps(doc))
    res = run(
        "trace", str(f), "--save-impl", str(tmp_path / "x.yaml"), "--batch", "1", "--context", "100", "--hw", "h100"
    )
    assert res.exit_code == 2 and "2 profiler steps" in res.stderr and not (tmp_path / "x.yaml").exists()


def test_the_profiler_overhead_is_the_committed_measurement() -> None:
    """roofcalc.impl.measured_overhead() is what validation/traces/h200/overhead1 measured."""
    o = json.loads((ROOT / "validation" / "traces" / "h200" / "overhead1" / "times.json").read_text())
    m = measured_overhead()
    assert (m.per_cpu_op_s, m.per_launch_s) == (
        o["profiler_overhead"]["per_cpu_op_s"],
        o["profiler_overhead"]["per_launch_s"],
    )
    assert (ROOT / m.source).exists()


TRACE5 = ROOT / "validation" / "traces" / "h100" / "impl-trace5"
TP_DEV = ROOT / "validation" / "traces" / "h100x2" / "hf-tp-dev"


def test_the_graph_gap_is_what_its_fit_set_gives() -> None:
    """roofcalc.impl.graph_replay(): the median over impl-dev1's seven graph decode steps traced at
    the shape they were timed at of (replay time - the traced kernels' time) / kernels."""
    import statistics

    from roofcalc.impl import graph_replay

    folder = ROOT / "validation" / "traces" / "h200" / "impl-dev1"
    gaps = []
    for c in json.loads((folder / "times.json").read_text())["cases"]:
        if c.get("trace") and c.get("cuda_graphs"):
            kernels = read_trace(folder / "traces" / c["trace"]).kernels
            gaps.append((c["median_s"] - sum(k.dur for k in kernels) * 1e-6) / len(kernels))
    g = graph_replay()
    assert len(gaps) == 7 and g.kind == "fitted"
    assert g.per_kernel_s == pytest.approx(statistics.median(gaps), abs=0.005e-6)


def test_a_graph_replayed_step_from_the_command_line(tmp_path: Path) -> None:
    """trace --save-impl --cuda-graphs: the kernels back to back, each after the graph's gap; at
    the traced shape that is the traced kernels plus 0.37 us each."""
    trace = TRACE5 / "traces" / "fused-llama-1b-deep-decode-b2-c600.json.gz"
    out = tmp_path / "fused.yaml"
    r = run(
        "trace",
        str(trace),
        "--save-impl",
        str(out),
        "--batch",
        "2",
        "--context",
        "600",
        "--cuda-graphs",
        "--hw",
        "h100",
    )
    assert r.exit_code == 0, r.output
    impl = load_impl(out)
    assert impl.graph is not None and impl.gpus == 1
    kernels = read_trace(trace).kernels
    same = predict(impl, load_hardware("h100"), {"batch": 2, "context": 600})
    assert same.step_s == pytest.approx(sum(k.dur for k in kernels) * 1e-6 + 0.37e-6 * len(kernels), rel=1e-6)
    assert same.host_s == 0 and same.limiter == "gpu"
    cfg = tmp_path / "cfg.json"
    case = next(c for c in json.loads((TRACE5 / "times.json").read_text())["cases"] if c["model"] == "llama-1b-deep")
    cfg.write_text(json.dumps(case["config"]))
    doc = run_json("op", "decode", "--model-config", str(cfg), "--impl-file", str(out), "--batch", "8",
                   "--context", "2400", "--hw", "h100")  # fmt: skip
    assert any(t["name"] == "graph gaps" for t in doc["expected_terms"])
    assert doc["summary"]["band"]["kind"] == "decode/traced-graphs"
    both = run("trace", str(trace), "--save-impl", str(tmp_path / "y.yaml"), "--batch", "2", "--context", "600",
               "--cuda-graphs", "--step-time", "1ms")  # fmt: skip
    assert both.exit_code == 2 and "--step-time" in both.stderr and not (tmp_path / "y.yaml").exists()
    alone = run("trace", str(trace), "--cuda-graphs")
    assert alone.exit_code == 2 and "--save-impl" in alone.stderr


def test_strided_elementwise_kernels_stream_at_their_in_order_rate() -> None:
    """ATen's legacy elementwise_kernel keeps one element per thread in flight: on an H200, 132
    SMs x 2,048 threads x 2 bytes (bf16) over the loaded latency 0.4677 us = 1.156 TB/s."""
    from roofcalc.impl.predict import _in_order_rate
    from roofcalc.impl.spec import ImplKernel

    k = ImplKernel(name="void at::native::elementwise_kernel<128, 4, ...>", kind="copy", call=0, stream=7,
                   issue_us=0, measured_us=5, types=["c10::BFloat16"])  # fmt: skip
    assert _in_order_rate(k, load_hardware("h200")) == pytest.approx(132 * 2048 * 2 / 4.677e-7, rel=1e-3)
    vec = k.model_copy(update={"name": "void at::native::vectorized_elementwise_kernel<4, ...>"})
    assert _in_order_rate(vec, load_hardware("h200")) is None


def test_a_tensor_parallel_trace_predicts_its_own_gpu_count(tmp_path: Path) -> None:
    """A rank's trace of transformers at TP=2 records its collectives' group (2 GPUs); predicted at
    --gpus 2 its all-reduces take the card's graph-captured latency and bus bandwidth (the trace's
    own include the wait for the other rank under the profiler); another GPU count is refused."""
    trace = TP_DEV / "traces" / "hf-static-tp2-llama-1b-decode-b1-c512.json.gz"
    out = tmp_path / "tp.yaml"
    assert run("trace", str(trace), "--save-impl", str(out), "--batch", "1", "--context", "576", "--cuda-graphs",
               "--hw", "h100").exit_code == 0  # fmt: skip
    impl = load_impl(out)
    assert impl.gpus == 2
    comm = [k for k in impl.kernels if k.kind == "communication"]
    assert len(comm) == 34 and all(k.comm_bytes for k in comm)
    hw = load_hardware("h100")
    times, _ = kernel_times(impl, hw, {"batch": 1, "context": 576})
    e = hw.expected
    lat, bus = float(e.allreduce_graph_latency_s.value), float(e.allreduce_bus_bytes_per_s.value)
    ar = next(t for k, t in zip(impl.kernels, times, strict=True) if "AllReduce" in k.name)
    assert ar == pytest.approx(lat + 2 * 1 * 2048 * 2 / 2 / bus)  # 2 x (n-1)/n of 2,048 bf16 elements
    args = ("op", "decode", "--model", "llama-3.2-1b", "--impl-file", str(out), "--batch", "8", "--hw", "h100")
    two = run_json(*args, "--context", "2048", "--gpus", "2")
    assert two["expected_s"] == pytest.approx(predict(impl, hw, {"batch": 8, "context": 2048}).step_s)
    one = run(*args, "--context", "2048")
    assert one.exit_code == 1 and "traced on 2 GPUs" in one.stderr and "trace a run on 1" in one.stderr


def test_an_op_calls_extra_work_is_shared_among_its_kernels() -> None:
    """Replayed from a graph, one op call of two kernels (cuDNN's attention: 30 us and 10 us traced,
    their kind's shortest 2 us) whose work at the card's achievable rate grows by 40 us: the call's
    40 us are shared 28:8 by the kernels' traced time beyond their fixed cost, not added to each."""
    from roofcalc.impl.predict import _variable_time

    a = _variable_time(28e-6, 1.0, 1e-6, 2.0, 41e-6, graph=True, share=28 / 36)
    b = _variable_time(8e-6, 1.0, 1e-6, 2.0, 41e-6, graph=True, share=8 / 36)
    assert a + b == pytest.approx(36e-6 + 40e-6)
    assert a == pytest.approx(28e-6 + 40e-6 * 28 / 36)
    # an eager step scales with the bound (the traced rate kept): twice the bound, twice the time
    assert _variable_time(28e-6, 1.0, 1e-6, 2.0, 41e-6, graph=False) == pytest.approx(56e-6)


@pytest.mark.parametrize("card_set", ["h100/impl-trace6", "h100/impl-trace5", "h200/impl-dev1", "h100x2/hf-tp-dev"])
def test_the_graph_reports_are_what_the_code_computes(card_set: str, verified: VerifiedFor) -> None:
    script = ROOT / "validation" / "expected" / "impl_report.py"
    card, name = card_set.split("/")
    path = ROOT / "validation" / "expected" / card / f"impl-{name}-graphs.json"

    def check() -> None:
        committed = json.loads(path.read_text())
        assert json.loads(json.dumps(load_script(script).report(card_set, True, True), sort_keys=True)) == committed

    verified.once("impl-graph-report", [script, path, *trace_set_files(card_set)], check)


def test_records_meet_their_own_kernels_whatever_the_file_order(tmp_path: Path) -> None:
    """The kernel events of a trace need not be in time order: each kernel keeps its own op,
    stream and collective whatever their order in the file; a collective's group and bytes come
    from its record_param_comms op where the kernel event has none (tests/data/traces/tp2-allreduce.json:
    an all-reduce of 32,768 bf16 over 2 GPUs sends 2 x 1/2 x 65,536 B = 65,536 B)."""
    src = ROOT / "tests" / "data" / "traces" / "tp2-allreduce.json"
    doc = json.loads(src.read_text())
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    rest = [e for e in doc["traceEvents"] if e.get("cat") != "kernel"]
    doc["traceEvents"] = rest + kernels[::-1]
    shuffled = tmp_path / "shuffled.json"
    shuffled.write_text(json.dumps(doc))
    hw = load_hardware("h100")
    a = build_impl(read_trace(src), hw, name="a", phase="decode", batch=1, size=512, cuda_graphs=True)
    b = build_impl(read_trace(shuffled), hw, name="a", phase="decode", batch=1, size=512, cuda_graphs=True)
    assert [(k.name, k.op, k.stream, k.comm_bytes) for k in a.kernels] == [
        (k.name, k.op, k.stream, k.comm_bytes) for k in b.kernels
    ]
    comm = [k for k in a.kernels if k.kind == "communication"]
    assert a.gpus == 2 and [k.comm_bytes for k in comm] == [65536]
    assert all(k.comm_bytes is None for k in a.kernels if k.kind != "communication")


def test_a_cache_length_does_not_apply_to_a_traced_file(tmp_path: Path) -> None:
    f = str(ROOT / "tests" / "data" / "impl" / "hf-eager-llama-1b.yaml")
    r = run("op", "decode", "--model", "llama-3.2-1b", "--impl-file", f, "--hw", "h200", "--cache-len", "8192")
    assert r.exit_code == 2 and "--cache-len" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_collectives_of_two_group_sizes_are_refused(tmp_path: Path) -> None:
    """An implementation's shapes are the shards of one GPU count: a rank's trace of transformers at
    TP=2 whose first collective is made to record a group of 3 GPUs is refused, nothing written."""
    import gzip

    src = (
        ROOT
        / "validation"
        / "traces"
        / "h100x2"
        / "hf-tp-dev"
        / "traces"
        / "hf-static-tp2-llama-1b-decode-b1-c512.json.gz"
    )
    doc = json.loads(gzip.decompress(src.read_bytes()))
    grouped = sorted((e for e in doc["traceEvents"] if "Group size" in (e.get("args") or {})), key=lambda e: e["ts"])
    for cat in ("cpu_op", "kernel"):  # the first collective's op and its kernel
        next(e for e in grouped if e.get("cat") == cat)["args"]["Group size"] = 3
    bad = tmp_path / "mixed.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "mixed.yaml"
    r = run(
        "trace", str(bad), "--save-impl", str(out), "--batch", "1", "--context", "512", "--cuda-graphs", "--hw", "h100"
    )
    assert r.exit_code == 2 and "groups of 2, 3 GPUs" in r.stderr and not out.exists(), r.output


def test_a_graph_file_against_the_flags_and_another_model(tmp_path: Path) -> None:
    """A graph-replayed file refuses --no-cuda-graphs; one traced on a 3B model and asked for a 1B
    model says so (its GEMMs read 2.6x the weights the model's step reads)."""
    trace = (
        ROOT
        / "validation"
        / "traces"
        / "h100"
        / "impl-trace6"
        / "traces"
        / "hf-static-llama-3b-gqa2-decode-b3-c700-L764.json.gz"
    )
    out = tmp_path / "g.yaml"
    assert run("trace", str(trace), "--save-impl", str(out), "--batch", "3", "--context", "700", "--cuda-graphs",
               "--hw", "h100").exit_code == 0  # fmt: skip
    args = ("op", "decode", "--model", "llama-3.2-1b", "--impl-file", str(out), "--batch", "8", "--hw", "h100")
    r = run(*args, "--no-cuda-graphs")
    assert r.exit_code == 2 and "--no-cuda-graphs" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    notes = run_json(*args)["expected_notes"]
    assert any("traced on another model" in n for n in notes), notes


@pytest.mark.parametrize(
    "option", [["--cuda-graphs"], ["--no-cuda-graphs"], ["--dtype", "fp32"], ["--kv-dtype", "fp8"]]
)
def test_an_implementation_file_refuses_what_its_trace_fixes(option: list[str]) -> None:
    """Found by a hostile test: --cuda-graphs and --dtype were silently ignored with --impl-file
    (the traced step's kernels ran as traced). Now refused, one line, exit 2."""
    args = ["op", "decode", "--model", "llama-3.2-1b", "--impl-file", "tests/data/impl/hf-eager-llama-1b.yaml"]
    res = run(*args, "--batch", "12", "--context", "4000", "--hw", "h200", *option)
    assert res.exit_code == 2 and res.stdout == "", res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1 and f"the traced step fixes {option[0]}" in lines[0], res.stderr
