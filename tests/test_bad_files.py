"""A corpus of malformed hardware and op files: each is refused quickly, naming the file,
the field and the reason. The exact message of each is pinned here."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from roofcalc.errors import RoofcalcError
from roofcalc.hardware import load_hardware_file
from roofcalc.opdefs import load_op_file
from roofcalc.roofline import analyze

from .conftest import run

BAD = Path(__file__).parent / "data" / "bad"

EXPECTED = {
    "hw-alias-bomb.yaml": (2, "1:4: invalid YAML: anchors and aliases (&name, *name) are not allowed in spec files"),
    "hw-bad-compute-capability.yaml": (2, "compute_capability: String should match pattern '^\\d+\\.\\d+$'"),
    "hw-bad-id.yaml": (2, "id: String should match pattern '^[a-z0-9][a-z0-9._-]*$'"),
    "hw-bad-kind.yaml": (
        2,
        "peak_flops_per_s.fp16.kind: Input should be 'datasheet', 'measured', 'fitted', 'estimate', 'derived', "
        "'transferred' or 'documented'",
    ),
    "hw-configs-not-a-list.yaml": (2, "sm.shared_memory_configs_kib.value: Input should be a valid list"),
    "hw-duplicate-key.yaml": (2, "5:1: invalid YAML: duplicate key 'vendor'"),
    "hw-empty-sources.yaml": (2, "sources: Dictionary should have at least 1 item after validation, not 0"),
    "hw-empty.yaml": (2, "expected a mapping at the top level, got NoneType"),
    "hw-figure-without-source.yaml": (2, "peak_flops_per_s.bf16.source: required field is missing"),
    "hw-missing-name.yaml": (2, "name: required field is missing"),
    "hw-negative-peak.yaml": (2, "peak_flops_per_s.bf16: value must not be negative (got -1000000000000000.0)"),
    "hw-no-identity.yaml": (2, "(top level): give compute_capability (NVIDIA) or gpu_family (others)"),
    "hw-not-utf8.yaml": (2, "not UTF-8 text"),
    "hw-peak-is-a-list.yaml": (2, "old_peaks: unknown key (+1 more)"),
    "hw-peak-not-a-number.yaml": (
        2,
        "peak_flops_per_s.bf16.value: Input should be a valid number, unable to parse string as a number",
    ),
    "hw-tabs.yaml": (2, "12:1: invalid YAML: found character that cannot start any token"),
    "hw-top-level-list.yaml": (2, "expected a mapping at the top level, got list"),
    "hw-typo-nested-key.yaml": (
        2,
        "memory.bandwith_bytes_per_s: unknown key (did you mean 'bandwidth_bytes_per_s'?) (+1 more)",
    ),
    "hw-unclosed-bracket.yaml": (2, "10:7: invalid YAML: did not find expected ',' or '}'"),
    "hw-unknown-dtype.yaml": (
        2,
        "peak_flops_per_s: unknown dtype 'fp12'; known: fp64, fp32, tf32, bf16, fp16, fp8, int8, fp4",
    ),
    "hw-unknown-key.yaml": (2, "bandwith_tb_s: unknown key"),
    "hw-unknown-source.yaml": (2, "peak_flops_per_s.fp16: source 'nowhere' is not listed under sources"),
    "hw-zero-bandwidth.yaml": (2, "memory.bandwidth_bytes_per_s: value must be positive (got 0)"),
    "hw-gemv-fraction-above-one.yaml": (
        2,
        "expected.unaligned_gemv_bandwidth_fraction: value must be at most 1, a fraction of the "
        "streaming-read bandwidth (got 1.5)",
    ),
    "op-attribute-access.yaml": (2, "flops: attribute access 'n.real' is not allowed"),
    "op-bad-dtype-default.yaml": (
        2,
        "dtype_default: 'fp12' is not one of fp64, fp32, tf32, bf16, fp16, fp8, int8, fp4",
    ),
    "op-bad-int-default.yaml": (2, "params.n: default 'many' of an int parameter must be an integer"),
    "op-bad-param-type.yaml": (2, "params.n.type: Input should be 'int', 'float', 'bool', 'choice' or 'dtype'"),
    "op-call-not-allowed.yaml": (2, "flops: call of 'abs' is not allowed (allowed: min, max, ceil, floor, log2, sqrt)"),
    "op-choice-without-choices.yaml": (2, "params.impl: a choice parameter needs 'choices'"),
    "op-default-from-unknown.yaml": (2, "params.m.default_from: 'zz' is not an earlier parameter"),
    "op-division-by-zero.yaml": (1, "flops: division by zero in 'n/(n-n)'"),
    "op-duplicate-param.yaml": (2, "6:3: invalid YAML: duplicate key 'n'"),
    "op-huge-power.yaml": (1, "flops: exponent 100000 is too large"),
    "op-import.yaml": (
        2,
        "flops: call of \"__import__('os').getpid\" is not allowed (allowed: min, max, ceil, floor, log2, sqrt)",
    ),
    "op-lambda.yaml": (2, "flops: call of 'lambda: 1' is not allowed (allowed: min, max, ceil, floor, log2, sqrt)"),
    "op-missing-flops.yaml": (2, "flops: required field is missing"),
    "op-negative-bytes.yaml": (1, "a FLOP or byte formula came out negative for these parameters"),
    "op-negative-kernel-bytes.yaml": (1, "kernels.0.prior_bytes came out negative for these parameters"),
    "op-no-byte-terms.yaml": (2, "bytes: Dictionary should have at least 1 item after validation, not 0"),
    "op-param-named-dtype.yaml": (2, "params: 'dtype' is implicit; set dtype_default instead"),
    "op-syntax-error.yaml": (2, "flops: syntax error in '2*(n': '(' was never closed"),
    "op-undeclared-name.yaml": (2, "flops: unknown name 'q'"),
    "op-unknown-key.yaml": (2, "flop: unknown key"),
}


def _load(path: Path) -> None:
    if path.name.startswith("hw-"):
        load_hardware_file(path)
    else:
        analyze(load_op_file(path), "h100")


def test_corpus_is_complete() -> None:
    files = {p.name for p in BAD.glob("*.yaml")}
    assert files == set(EXPECTED) and len(files) >= 30


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_exact_message(name: str) -> None:
    path = BAD / name
    code, message = EXPECTED[name]
    t0 = time.perf_counter()
    with pytest.raises(RoofcalcError) as ei:
        _load(path)
    assert time.perf_counter() - t0 < 1.0  # refused quickly, alias bomb included
    sep = "" if message[0].isdigit() else ": "  # line:col follows the file name directly after a colon
    assert str(ei.value) == f"{path}:{message}" if sep == "" else str(ei.value) == f"{path}{sep}{message}"
    assert ei.value.exit_code == code


@pytest.mark.parametrize("name", ["hw-negative-peak.yaml", "hw-alias-bomb.yaml", "hw-tabs.yaml"])
def test_through_the_cli(name: str) -> None:
    res = run("op", "gemm", "--hw-file", str(BAD / name))
    assert res.exit_code == 2 and str(BAD / name) in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("name", ["op-undeclared-name.yaml", "op-division-by-zero.yaml"])
def test_user_op_files_through_the_cli(name: str) -> None:
    res = run("op", str(BAD / name))
    assert res.exit_code == EXPECTED[name][0] and EXPECTED[name][1] in res.output


def test_fifty_megabyte_file(tmp_path: Path) -> None:
    big = tmp_path / "huge.yaml"
    with big.open("w") as f:
        line = "# " + "x" * 1021 + "\n"
        for _ in range(50 * 1024):
            f.write(line)
    t0 = time.perf_counter()
    res = run("op", "gemm", "--hw-file", str(big))
    assert time.perf_counter() - t0 < 2.0
    assert res.exit_code == 2
    from roofcalc.specfile import MAX_SPEC_BYTES

    assert f"{big}: file is 52428800 bytes, over the {MAX_SPEC_BYTES}-byte limit for a spec file" in res.output
