"""Print the `expected:` section of a registry hardware file from a probe calibration.

A calibration states its fractions against its own (measured) peaks; a registry file states
them against the datasheet peaks it holds. This rescales each fraction to the registry's
peak, keeps absolute figures as they are, and names the calibration as the source, so the
registry's figures are exactly what the probe measured.

    python validation/probe/registry_figures.py validation/probe/h100/calibration.yaml h100 [x2-calibration]
"""

from __future__ import annotations

import sys

import yaml

from roofcalc.hardware import load_calibration, load_hardware

ABSOLUTE = (
    "event_floor_s",
    "stream_floor_s",
    "graph_floor_s",
    "torch_op_floor_s",
    "queued_kernel_floor_s",
    "flushed_op_floor_s",
    "torch_graph_node_s",
    "dram_latency_s",
    "loaded_latency_s",
    "l2_latency_s",
    "per_sm_bandwidth_bytes_per_s",
    "l2_bandwidth_bytes_per_s",
    "sustained_sm_clock_mhz",
    "sms_to_saturate_read",
    "skinny_gemm_bandwidth_fraction",
    "unaligned_gemv_bandwidth_fraction",
    "gemm_kernel_floor_s",
    "l2_dirty_writeback_fraction",
    "allreduce_latency_s",
    "allreduce_graph_latency_s",
    "allreduce_bus_bytes_per_s",
    "p2p_bytes_per_s",
)


def main() -> int:
    cal_path, base = sys.argv[1], sys.argv[2]
    extra = sys.argv[3:]  # calibrations of multi-GPU runs, for the interconnect figures only
    cal, reg = load_calibration(cal_path), load_hardware(base)
    e = cal.expected
    out: dict[str, object] = {}

    def fig(value: float, note: str) -> dict[str, object]:
        return {"value": float(f"{value:.4g}"), "source": "probe", "kind": "measured", "note": note}

    for name in ABSOLUTE:
        f = getattr(e, name)
        if f is not None and name not in (
            "allreduce_latency_s",
            "allreduce_graph_latency_s",
            "allreduce_bus_bytes_per_s",
            "p2p_bytes_per_s",
        ):
            out[name] = fig(float(f.value), f"{cal_path}")
    for c2 in extra:
        e2 = load_calibration(c2).expected
        for name in (
            "allreduce_latency_s",
            "allreduce_graph_latency_s",
            "allreduce_bus_bytes_per_s",
            "p2p_bytes_per_s",
        ):
            f = getattr(e2, name)
            if f is not None:
                out[name] = fig(float(f.value), f"{c2} (2 GPUs over NVLink)")
    for name in ("dram_read_fraction", "dram_copy_fraction"):
        f = getattr(e, name)
        if f is not None:
            out[name] = fig(
                float(f.value) * cal.bandwidth / reg.bandwidth,
                f"{cal_path}: rescaled to this file's bandwidth ({f.note})",
            )
    for table in ("tensor_fraction", "unaligned_tensor_fraction", "word_aligned_tensor_fraction", "mma_sync_fraction"):
        rows = {}
        for dt, f in getattr(e, table).items():
            if dt in reg.peak_flops_per_s and dt in cal.peak_flops_per_s:
                rows[dt] = fig(
                    float(f.value) * cal.peak(dt) / reg.peak(dt), f"{cal_path}: rescaled to this file's {dt} peak"
                )
        if rows:
            out[table] = rows
    if e.cuda_core_gemm_fraction is not None:
        out["cuda_core_gemm_fraction"] = fig(
            float(e.cuda_core_gemm_fraction.value) * cal.peak("fp32") / reg.peak("fp32"),
            f"{cal_path}: rescaled to this file's fp32 peak",
        )
    for name, src in (("sfu_ops_per_clk_per_sm", "cuda-guide"), ("l2_partitions", "hopper-wp")):
        f = getattr(e, name)
        if f is not None:  # documented figures, carried as they are
            out[name] = {"value": f.value, "source": src, "kind": "documented", "note": f.note}
    print(yaml.safe_dump({"expected": out}, sort_keys=False, width=200))
    return 0


if __name__ == "__main__":
    sys.exit(main())
