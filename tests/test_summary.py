"""The answer first: the summary of an op or LLM step (expected time and its measured band, tok/s,
the bound named as the bound, the fit against usable memory), in the table and the JSON."""

from __future__ import annotations

import importlib.util
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import roofcalc
from roofcalc.summary import _bands, band_kind

from .conftest import run, run_json

ROOT = Path(__file__).resolve().parent.parent


def test_the_band_file_is_what_the_reports_give() -> None:
    """roofcalc/bands.json is validation/expected/make_bands.py's output over the committed reports."""
    spec = importlib.util.spec_from_file_location("make_bands", ROOT / "validation" / "expected" / "make_bands.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    committed = json.loads((ROOT / "roofcalc" / "bands.json").read_text())
    assert committed == json.loads(json.dumps(mod.bands(ROOT / "validation" / "expected")))
    # a percentile by hand: p5 of 1..21 is 2.0 (position 0.05 * 20 = 1), p95 is 20.0
    assert mod.percentile([float(i) for i in range(1, 22)], 0.05) == 2.0
    assert mod.percentile([float(i) for i in range(1, 22)], 0.95) == 20.0


def test_summary_leads_the_json_and_the_table() -> None:
    doc = run_json("op", "gemm", "--m", "8192", "--hw", "h100")
    assert next(iter(doc)) == "summary"
    s = doc["summary"]
    band = _bands()["bands"]["gemm"]
    # the band is the expected time times the p5 and p95 of measured/expected of committed GEMM cases
    assert s["expected_low_s"] == pytest.approx(doc["expected_s"] * band["low"])
    assert s["expected_high_s"] == pytest.approx(doc["expected_s"] * band["high"])
    # the GEMM band pools in-sample sets and the fresh hold-outs (validation/HOLDOUT.md), and says so
    assert s["band"]["cases"] == band["cases"] and s["band"]["sample"] == "in-sample and hold-out"
    assert s["bound_s"] == doc["bound_s"] == doc["predicted_s"]  # predicted_s: the deprecated alias
    out = run("op", "gemm", "--m", "8192", "--hw", "h100").stdout.splitlines()
    assert out[0].startswith("expected ") and "bound" in out[0] and out[0] == s["text"]
    assert out[1].startswith("band: ")


def test_llm_step_summary_names_the_implementation_and_tokens() -> None:
    doc = run_json("op", "decode", "--model", "llama-3.1-8b", "--batch", "16", "--context", "4096", "--hw", "h200")
    s = doc["summary"]
    assert s["implementation"] == "reference-eager+graphs"
    assert s["band"]["kind"] == band_kind("decode", doc["params"]) == "decode/reference-eager/graphs/1gpu"
    assert s["expected_tokens_per_s"] == pytest.approx(16 / doc["expected_s"])
    assert s["bound_tokens_per_s"] == pytest.approx(16 / doc["bound_s"])
    assert "tok/s" in s["text"] and "reference-eager+graphs" in s["text"] and s["fits"] is True


@pytest.mark.parametrize(("batch", "seq", "pace"), [(1, 400, "host"), (4, 3000, "gpu")])
def test_a_python_issued_step_takes_the_band_of_its_pace(batch: int, seq: int, pace: str) -> None:
    """transformers' prefill issued from Python: a short prompt the host paces in the model takes
    the band of the committed steps the host paced (the host's speed moves between processes), a
    long one the band of those the GPU paced; each band counts the committed named-implementation
    rows of that pace."""
    doc = run_json(
        "op",
        "prefill",
        "--model",
        "llama-3.2-1b",
        "--impl",
        "hf",
        "--batch",
        str(batch),
        "--seq",
        str(seq),
        "--hw",
        "h100",
    )
    assert (doc["expected_limiter"] == "host") == (pace == "host")
    band = doc["summary"]["band"]
    assert band["kind"] == f"prefill/hf/python/1gpu/{pace}"
    # make_bands leaves out the host-paced steps of the sets timed after a profiler session
    spec = importlib.util.spec_from_file_location("make_bands", ROOT / "validation" / "expected" / "make_bands.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    reports = [json.loads(f.read_text()) for f in (ROOT / "validation" / "expected").rglob("named-*.json")]
    rows = [
        row
        for rep in reports
        if rep["set"] not in mod.PROFILED
        for row in rep["cases"]
        if row["kind"] == "prefill" and row["impl"] == "hf" and row.get("gpus", 1) == 1
    ]
    # the host paces a row in the model, or would at the slow end of the card's hosts (host_exposed)
    paced = [r for r in rows if (r["limiter"] == "host" or bool(r.get("host_exposed"))) == (pace == "host")]
    assert band["cases"] == len(paced) < len(rows)
    want = mod._band([float(r["ratio"]) for r in paced])
    assert (band["low"], band["high"], band["median"]) == (want["low"], want["high"], want["median"])


@pytest.mark.parametrize(
    ("engine", "batch", "seq", "pace"),
    [("eager", 1, 272, "host"), ("eager", 4, 2048, "gpu"), ("compiled", 3, 64, "host"), ("compiled", 4, 2048, "gpu")],
)
def test_the_reference_steps_take_the_band_of_their_pace(engine: str, batch: int, seq: int, pace: str) -> None:
    """The reference implementation's prefill issued from Python (llm_bench.py's steps, eager or
    compiled) takes the band of the committed registry cases of its pace, as the named
    implementations do: counted here straight from the reports' cases, their `limiter` and
    `host_exposed` (the host would pace them at the slow end of the card's hosts)."""
    args = ("--model", "llama-3.1-8b", "--engine", engine, "--batch", str(batch), "--seq", str(seq), "--hw", "h200")
    doc = run_json("op", "prefill", *args)
    assert (doc["expected_limiter"] == "host") == (pace == "host")
    band = doc["summary"]["band"]
    assert band["kind"] == f"prefill/reference-{engine}/python/1gpu/{pace}"
    ratios: dict[str, list[float]] = {"host": [], "gpu": []}
    for f in (ROOT / "validation" / "expected").rglob("*-registry.json"):
        for case in json.loads(f.read_text()).get("cases", []):
            p = case.get("params") or {}
            if (
                case.get("op") == "prefill"
                and p.get("engine") == engine
                and not p.get("impl")
                and not p.get("cuda_graphs")
                and p.get("gpus", 1) == 1
                and case.get("limiter")
                and isinstance(case.get("ratio"), (int, float))
            ):
                exposed = case["limiter"] == "host" or case.get("host_exposed")
                ratios["host" if exposed else "gpu"].append(case["ratio"])
    mine = sorted(ratios[pace])
    assert band["cases"] == len(mine) >= 20
    # p5 and p95 by linear interpolation between ranks, as numpy's default
    for q, got in ((0.05, band["low"]), (0.95, band["high"])):
        pos = (len(mine) - 1) * q
        lo = mine[int(pos)]
        hi = mine[min(int(pos) + 1, len(mine) - 1)]
        assert got == pytest.approx(lo + (hi - lo) * (pos - int(pos)), abs=1e-4)
    # the host paces the steps whose band is the wider: its speed moves between processes
    other = sorted(ratios["gpu" if pace == "host" else "host"])
    spread = {pace: mine[-1] / mine[0], ("gpu" if pace == "host" else "host"): other[-1] / other[0]}
    assert spread["host"] > spread["gpu"]


def test_a_step_the_slow_host_would_pace_takes_the_host_band() -> None:
    """llama-3.1-8b's compiled prefill of 3 x 128 tokens on the H200: at the card's host figure
    (7.33 us an op) the GPU paces it in the model (the host's wait under a tenth of the step), at
    the slow end of the card's hosts (torch_op_slow_s, 10.7 us: the 95th percentile of the hot
    loops timed around steps) the host would. It prints the band of the host-paced steps; a
    longer prompt, which the GPU paces either way, that of the GPU-paced ones; a step replayed
    from a CUDA graph has no host to expose."""
    from roofcalc.hardware import load_hardware
    from roofcalc.validation import with_host_op

    hw = load_hardware("h200")
    assert hw.expected is not None and hw.expected.torch_op_slow_s is not None
    assert hw.expected.torch_op_floor_s is not None
    assert hw.expected.torch_op_slow_s.value > 1.4 * hw.expected.torch_op_floor_s.value
    slow = with_host_op(hw, hw.expected.torch_op_slow_s.value, "test")
    args = {"model": "llama-3.1-8b", "batch": 3, "engine": "compiled"}
    short = roofcalc.analyze("prefill", "h200", seq=128, **args)
    assert short.expected_limiter == "compute" and short.expected_host_exposed is True
    assert roofcalc.analyze("prefill", slow, seq=128, **args).expected_limiter == "host"
    long = roofcalc.analyze("prefill", "h200", seq=1024, **args)
    assert long.expected_limiter == "compute" and long.expected_host_exposed is False
    assert roofcalc.analyze("prefill", slow, seq=1024, **args).expected_limiter == "compute"
    graphs = roofcalc.analyze("decode", "h200", model="llama-3.1-8b", batch=3, context=1024, cuda_graphs=True)
    assert graphs.expected_host_exposed is None
    cli = ("op", "prefill", "--model", "llama-3.1-8b", "--batch", "3", "--engine", "compiled", "--hw", "h200")
    doc = run_json(*cli, "--seq", "128")
    assert doc["summary"]["band"]["kind"] == "prefill/reference-compiled/python/1gpu/host"
    # the terms show the GPU's kernels: a note says why the band is the host-paced steps'
    assert any("slow end of the card's hosts" in n for n in doc["expected_notes"])
    assert run_json(*cli, "--seq", "1024")["summary"]["band"]["kind"] == "prefill/reference-compiled/python/1gpu/gpu"
    # a calibration (one machine's probe) takes the slow end from its registry part
    cal = str(Path(__file__).resolve().parent.parent / "validation" / "probe" / "h200" / "calibration.yaml")
    calibrated = run_json(*cli, "--seq", "128", "--calibration", cal)
    assert calibrated["expected_host_exposed"] is True
    assert calibrated["summary"]["band"]["kind"] == "prefill/reference-compiled/python/1gpu/host"


def test_a_split_band_of_few_cases_is_not_printed() -> None:
    """Tensor parallelism's host-paced fused prefill: bands.json holds fewer than 20 such cases (a
    min-max of two steps, 1.53-1.84, which would not even contain the expected time); the step
    prints its kind's whole band instead, which contains 1."""
    from roofcalc.summary import band_named

    few = band_named("prefill/fused/python/tp/host")
    assert few is not None and few.cases < 20 and few.spread == "min-max"
    doc = run_json(
        "op", "prefill", "--model", "llama-3.1-8b", "--batch", "1", "--seq", "128", "--impl", "fused", "--gpus", "2"
    )
    assert doc["expected_host_exposed"] is True
    band = doc["summary"]["band"]
    assert band["kind"] == "prefill/fused/python/tp" and band["low"] <= 1 <= band["high"]


def test_usable_memory_by_hand() -> None:
    # H100: cudaDeviceProp.totalGlobalMem 85,017,493,504 B (validation/probe/h100/probe.json), less
    # the default reserve of 1 GiB + 5% of it
    r = roofcalc.analyze("decode", "h100", model="llama-3.1-8b")
    total = 85_017_493_504
    assert r.memory is not None
    assert r.memory.capacity_bytes == total
    assert r.memory.usable_bytes == pytest.approx(total - 2**30 - 0.05 * total)


def test_a_step_that_does_not_fit_says_so_first() -> None:
    args = ("op", "decode", "--model", "llama-3.1-70b", "--batch", "1", "--context", "4096", "--hw", "h100")
    doc = run_json(*args)
    # 70.6e9 parameters of 2 bytes is over 140 GB: more than one 80 GB card
    assert doc["summary"]["fits"] is False and doc["warnings"][0].startswith("does not fit")
    assert "at least 2 GPUs" in doc["warnings"][0]
    out = run(*args).stdout.splitlines()
    assert "DOES NOT FIT" in out[0] or "DOES NOT FIT" in out[1]
    assert any(line.startswith("warning: does not fit") for line in out[:5])
    strict = run(*args, "--strict")
    assert strict.exit_code == 1 and "does not fit" in strict.stderr
    # with two GPUs it fits, and --strict is content
    ok = run("op", "decode", "--model", "llama-3.1-70b", "--gpus", "2", "--hw", "h100", "--strict")
    assert ok.exit_code == 0, ok.output


def test_memory_reserve_option() -> None:
    r0 = run_json("op", "decode", "--model", "llama-3.1-8b", "--hw", "h100", "--memory-reserve", "0")
    assert r0["memory"]["reserve_bytes"] == 0 and r0["memory"]["usable_bytes"] == r0["memory"]["capacity_bytes"]
    r4 = run_json("op", "decode", "--model", "llama-3.1-8b", "--hw", "h100", "--memory-reserve", "4GiB")
    assert r4["memory"]["reserve_bytes"] == 4 * 2**30
    bad = run("op", "decode", "--model", "llama-3.1-8b", "--hw", "h100", "--memory-reserve", "100GiB")
    assert bad.exit_code == 2 and "--memory-reserve" in bad.stderr


def test_cards_without_measured_figures_have_no_expected_time() -> None:
    doc = run_json("op", "decode", "--model", "llama-3.1-8b", "--hw", "a100")
    assert doc["expected_s"] is None and doc["summary"]["expected_s"] is None
    assert doc["summary"]["text"].startswith("no expected time for this card")
    assert "roofcalc probe" in doc["summary"]["band_note"]


def test_compare_ranks_by_expected_and_shows_both() -> None:
    res = run("compare", "gemm", "--m", "4096", "--hw", "h100,h200")
    lines = res.stdout.splitlines()
    assert "ranked by the expected time" in lines[0]
    header = next(ln for ln in lines if "(fastest)" in ln)
    h100 = roofcalc.analyze("gemm", "h100", m=4096).expected_s
    h200 = roofcalc.analyze("gemm", "h200", m=4096).expected_s
    assert h100 is not None and h200 is not None
    fastest = "h200" if h200 < h100 else "h100"
    assert f"{fastest} (fastest)" in header
    assert any(ln.startswith("expected time") for ln in lines) and any(ln.startswith("bound time") for ln in lines)


def test_sweep_shows_expected_beside_the_bound() -> None:
    res = run("sweep", "gemm", "--m", "64..1024", "--hw", "h100")
    assert "h100 expected" in res.stdout and "h100 bound" in res.stdout


def test_roofline_chart_marks_expected_points(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.svg"
    res = run("roofline", "--hw", "h100", "--op", "gemm:m=8192", "--op", "gemv:m=4096,n=4096", "--plot", str(out))
    assert res.exit_code == 0, res.output
    data = out.read_bytes()
    assert 5_000 < len(data) < 3_000_000 and ET.fromstring(data).tag.endswith("svg")
    assert b"expected (at the expected time)" in data
    chart = run_json("roofline", "--hw", "h100", "--op", "gemm:m=8192")
    p, r = chart["points"][0], chart["results"][0]
    # achieved FLOP/s at the expected time, under the roof
    assert p["expected_flops_per_s"] == pytest.approx(r["flops"] / r["expected_s"])
    assert p["expected_flops_per_s"] < p["attainable_flops_per_s"]


def test_occupancy_leads_with_its_answer_and_advises_only_below_the_ceiling() -> None:
    out = run("occupancy", "--hw", "h100", "--threads", "256", "--regs", "64", "--smem", "32k").stdout
    assert out.splitlines()[0] == "4 blocks/SM · 32 of 64 warps (50.0% occupancy) · limited by registers"
    # static shared memory: 48 KiB static, 256 threads x 10 regs on an H200: shared memory binds at 4 blocks;
    # 5 blocks need each at most floor(233472 / 5) rounded down to 128 B, less the 1 KiB reserved
    out = run("occupancy", "--threads", "256", "--regs", "10", "--static-smem", "48k", "--hw", "h200").stdout
    assert "static shared memory at most 45,568 B" in out and "no single change" not in out
    full = run("occupancy", "--threads", "256", "--regs", "32", "--hw", "h100").stdout
    assert "100.0% occupancy" in full and "to fit" not in full


def test_static_shared_memory_over_48k_is_refused() -> None:
    # CUDA programming guide: a block's static __shared__ memory is at most 48 KB; more is dynamic
    res = run("occupancy", "--threads", "128", "--regs", "32", "--static-smem", "49153", "--hw", "h100")
    assert res.exit_code == 2 and "--static-smem" in res.stderr and "dynamic" in res.stderr
    assert run("occupancy", "--threads", "128", "--regs", "32", "--static-smem", "48k", "--hw", "h100").exit_code == 0


def test_help_lists_the_choices_and_list_marks_optional_parameters() -> None:
    text = run("op", "decode", "--help", env={"COLUMNS": "120"}).stdout
    assert "--dtype [fp64|fp32|tf32|bf16|fp16|fp8|int8|fp4]" in text and "--engine [eager|compiled]" in text
    listing = run("op", "--list").stdout
    assert "--max-context (optional)" in " ".join(listing.split()) and "--max-context (required)" not in listing


def test_json_mode_warnings_go_to_stderr_too() -> None:
    res = run("op", "decode", "--model", "llama-3.1-70b", "--batch", "1", "--hw", "h100", "--json")
    doc = json.loads(res.stdout)  # stdout: only the JSON
    assert doc["warnings"][0].startswith("does not fit")
    assert res.stderr.splitlines()[0] == "warning: " + doc["warnings"][0]


def test_trace_plot_draws_the_ops_on_the_roof(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "t.svg"
    trace = ROOT / "validation" / "traces" / "h200" / "hf1" / "traces" / "hf-eager-llama-8b-prefill-b4-s500.json.gz"
    res = run("trace", str(trace), "--plot", str(out))
    assert res.exit_code == 0, res.output
    data = out.read_bytes()
    assert 5_000 < len(data) < 3_000_000 and ET.fromstring(data).tag.endswith("svg")
    assert b"traced ops against the roofline" in data and b"aten::mm" in data and b"h200 bf16 roof" in data


def test_a_result_names_its_figures_by_kind() -> None:
    doc = run_json("op", "gemm", "--m", "64", "--hw", "h100")
    kinds = doc["expected_figures"]
    # hardware/h100.yaml: the narrow-tile F.linear fit and gemmSN's step are fitted, the all-reduce
    # figures transferred from two H200s, the probe's floors measured
    assert {"linear_gemm_floor_s", "gemm_sn_k_step_s"} <= set(kinds["fitted"])
    assert "allreduce_latency_s" in kinds["transferred"] and "graph_floor_s" in kinds["measured"]
    assert run_json("op", "gemm", "--m", "64", "--hw", "a100")["expected_figures"] == {}
