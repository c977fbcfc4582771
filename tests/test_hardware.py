"""The registry: every file loads, every figure has a source, the traps are avoided."""

from __future__ import annotations

import pytest

from roofcalc.hardware import all_hardware, hardware_names, load_hardware

# Dense tensor-core peaks, FP32 accumulate (shared/reference/hardware-facts.md); the
# datasheets' headline figures are twice these (2:4 sparsity).
DENSE_BF16 = {
    "h100": 989.4e12,
    "h200": 989.4e12,
    "h100-pcie": 756e12,
    "a100": 312e12,
    "b200": 2.25e15,
    "l40s": 362.05e12,
}


def test_registry_has_the_parts() -> None:
    assert set(hardware_names()) >= {"h100", "h100-pcie", "h200", "a100", "b200", "m3-max"}


@pytest.mark.parametrize(("hw", "dense"), DENSE_BF16.items())
def test_dense_not_sparse(hw: str, dense: float) -> None:
    assert load_hardware(hw).peak("bf16") == dense


def test_every_figure_has_a_known_source() -> None:
    for hw in all_hardware():
        for path, fig in hw.figures():
            assert fig.source in hw.sources, (hw.id, path)
            assert fig.kind in ("datasheet", "measured", "fitted", "estimate", "derived", "transferred", "documented")


def test_traps() -> None:
    pcie = load_hardware("h100-pcie")
    assert pcie.sm_value("sm_count") == 114 and pcie.bandwidth == 2.0e12
    h200 = load_hardware("h200")
    assert h200.peak("bf16") == load_hardware("h100").peak("bf16")
    assert h200.l2_bytes is not None and h200.l2_bytes.value == 60 * 2**20
    assert "fp8" not in load_hardware("a100").peak_flops_per_s
    assert "fp4" in load_hardware("b200").peak_flops_per_s
    m3 = load_hardware("m3-max")
    assert m3.sm.registers_per_sm is None and "registers_per_sm" in m3.unknown


def test_sm_resources_cc90() -> None:
    h = load_hardware("h100")
    assert h.sm_value("shared_memory_per_sm_bytes") == 233472
    assert h.sm_value("shared_memory_per_block_optin_bytes") == 232448
    assert h.sm.shared_memory_configs_kib is not None
    assert h.sm.shared_memory_configs_kib.value[-1] == 228


def test_fitted_figures_name_their_fit_set_and_size() -> None:
    """Every fitted figure of the registry says what it was fitted to and on how many cases; a figure
    of another kind carries no fit set; a fitted one without one is refused."""
    from pydantic import ValidationError

    from roofcalc.hardware import Figure, all_hardware

    fitted = [(hw.id, path, fig) for hw in all_hardware() for path, fig in hw.figures() if fig.kind == "fitted"]
    # the narrow-tile F.linear fit (validation/bench/fit_linear_gemm.py: 119 kernels) and the gemmSN step
    assert {(h, p) for h, p, _ in fitted} >= {
        ("h100", "expected.linear_gemm_floor_s"),
        ("h100", "expected.linear_gemm_k_step_s"),
        ("h100", "expected.gemm_sn_k_step_s"),
    }
    assert all(f.fit_set and f.fit_cases and f.fit_cases > 0 for _, _, f in fitted)
    with pytest.raises(ValidationError, match="fit_set"):
        Figure(value=1.0, source="x", kind="fitted")
    with pytest.raises(ValidationError, match="belong to kind: fitted"):
        Figure(value=1.0, source="x", kind="measured", fit_set="s", fit_cases=3)
