"""`roofcalc kernels FILE`: kernel files in, occupancy and the measured roofline out.

Where the expected values come from:

* tests/data/kernels/h200/: real output of validation/kernels/make_data.sh on an H200 (see the
  README there). ``runtime.json`` is the CUDA runtime's own answer (cudaFuncGetAttributes,
  cudaOccupancyMaxActiveBlocksPerMultiprocessor for 88 launch configurations per kernel): every
  reader must give the runtime's registers, static shared memory and blocks per SM.
* kernels compiled here with nvcc (validation/kernels/kernels.cu, -DKERNELS_LIGHT, sm_90):
  the cubin reader against the ptxas log of the same compile, and the occupancy against
  NVIDIA's cuda_occupancy.h compiled with g++ (tests/occ_harness.cpp) fed the ptxas figures.
* tests/data/kernels/samples/: small files written by hand in the formats of real output; the
  expected numbers are stated next to each test, worked out from the source they model.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from roofcalc.hardware import Hardware, load_hardware
from roofcalc.kernelfiles import KernelInfo, Options, analyze_file, load_kernel_file
from roofcalc.kernelfiles.analysis import analyze_kernel, runs_on, solver_input
from roofcalc.kernelfiles.cubin import FATBIN_MAGIC
from roofcalc.kernelfiles.ncu import _bytes, unit_scale
from roofcalc.kernels_command import kernels
from roofcalc.occupancy_solver import blocks_per_sm

from .conftest import nvcc_cached
from .test_occupancy_header import _oracle

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "tests" / "data" / "kernels" / "h200"
SAMPLES = ROOT / "tests" / "data" / "kernels" / "samples"
SOURCE = ROOT / "validation" / "kernels" / "kernels.cu"
REQUIRED = {
    "version",
    "kernel",
    "registers",
    "static_smem_bytes",
    "threads",
    "dynamic_smem_bytes",
    "blocks_per_sm",
    "limiters",
}


def _cli() -> Any:
    from roofcalc.cli import RoofcalcGroup, cli

    return cli if "kernels" in cli.commands else RoofcalcGroup(commands=[kernels])


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(_cli(), ["kernels", *map(str, args)], catch_exceptions=False)


def run_json(*args: str | Path) -> Any:
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def h200() -> Hardware:
    return load_hardware("h200")


@pytest.fixture(scope="module")
def runtime() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((H200 / "runtime.json").read_text())
    return data


@pytest.fixture(scope="module")
def real_cubin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cubin") / "kernels.sm_90.cubin"
    out.write_bytes(gzip.decompress((H200 / "kernels.sm_90.cubin.gz").read_bytes()))
    return out


def _label(name: str) -> str:
    """ncu's demangled names ('void k_tmpl<4096>(float *, int)') -> the runtime's labels."""
    return re.sub(r"^void ", "", name).split("(")[0]


def _by_runtime_name(path: Path, runtime: dict[str, Any]) -> dict[str, KernelInfo]:
    """The file's sm_90 kernels keyed by the runtime's mangled name."""
    labels = {r["label"]: r["name"] for r in runtime["kernels"]}
    out = {}
    for k in load_kernel_file(path).kernels:
        if k.arch in (90, None):
            out[labels.get(_label(k.display), k.name)] = k
    return out


# ------------------------------------------------------------------ the runtime's answers (H200)

REAL = [
    "ptxas-sm90.log",
    "cuobjdump-res-usage-program.txt",
    "cuobjdump-res-usage-sm90-cubin.txt",
    "cubin",
    "ncu-program.csv",
]


def _real(name: str, cubin: Path) -> Path:
    return cubin if name == "cubin" else H200 / name


def test_runtime_device_is_the_h200_file(runtime: dict[str, Any], h200: Hardware) -> None:
    # cudaGetDeviceProperties on the card that made the data, against the registry's figures
    v = h200.sm_value
    assert runtime["cc"] == h200.compute_capability
    assert (
        runtime["sm_count"],
        runtime["shared_mem_per_sm"],
        runtime["shared_mem_per_block_optin"],
        runtime["reserved_shared_mem_per_block"],
        runtime["regs_per_sm"],
        runtime["max_threads_per_sm"],
        runtime["max_blocks_per_sm"],
    ) == (
        v("sm_count"),
        v("shared_memory_per_sm_bytes"),
        v("shared_memory_per_block_optin_bytes"),
        v("reserved_shared_memory_per_block_bytes"),
        v("registers_per_sm"),
        v("max_threads_per_sm"),
        v("max_blocks_per_sm"),
    )


@pytest.mark.parametrize("name", REAL)
def test_resources_equal_cudaFuncGetAttributes(
    name: str, runtime: dict[str, Any], h200: Hardware, real_cubin: Path
) -> None:
    ks = _by_runtime_name(_real(name, real_cubin), runtime)
    assert len(ks) == len(runtime["kernels"]) == 12
    for r in runtime["kernels"]:
        k = ks[r["name"]]
        _, static, _ = solver_input(k, h200, Options(threads=256))
        # cuobjdump and the sm_90 cubin print 33,792 for 32 KiB: the reserve is taken out again
        assert static == r["sharedSizeBytes"], (name, r["label"])
        if name == "ncu-program.csv":  # ncu: registers as allocated (a multiple of 8, at least 16 on the H200)
            assert k.registers == max(16, -(-r["numRegs"] // 8) * 8), r["label"]
        else:
            assert k.registers == r["numRegs"], (name, r["label"])


@pytest.mark.parametrize("name", REAL[:4])
def test_occupancy_equals_the_runtime(name: str, runtime: dict[str, Any], h200: Hardware, real_cubin: Path) -> None:
    # 12 kernels x 88 (threads, dynamic shared memory) configurations the runtime answered
    ks = _by_runtime_name(_real(name, real_cubin), runtime)
    mismatches, expected, total = set(), set(), 0
    for r in runtime["kernels"]:
        k = ks[r["name"]]
        for o in r["occupancy"]:
            if "error" in o:  # static + dynamic over the opt-in limit: cudaFuncSetAttribute refused it
                continue
            inp, _, _ = solver_input(k, h200, Options(threads=o["threads"], dynamic_smem_bytes=o["dynamic_smem"]))
            assert inp is not None
            got, _ = blocks_per_sm(h200, inp.threads, inp.regs or 1, inp.smem, inp.static_smem, -1, inp.barriers)
            total += 1
            key = (r["label"], o["threads"], o["dynamic_smem"])
            if got != o["blocks_per_sm"]:
                mismatches.add(key)
            # cuobjdump lists no named barriers: k_bars3 (3 barriers) differs exactly where they bind
            three, _ = blocks_per_sm(h200, inp.threads, inp.regs or 1, inp.smem, inp.static_smem, -1, 3)
            if "cuobjdump" in name and r["label"] == "k_bars3" and three != got:
                expected.add(key)
    assert total == 1034
    assert mismatches == expected
    assert ("cuobjdump" in name) == bool(expected)


def test_pipeline_answers_the_runtime(runtime: dict[str, Any], h200: Hardware, real_cubin: Path) -> None:
    # the whole path (solver_input + the solver + the launch-bounds check) for a few configurations
    ks = _by_runtime_name(real_cubin, runtime)
    answers = {
        (r["label"], o["threads"], o["dynamic_smem"]): o.get("blocks_per_sm")
        for r in runtime["kernels"]
        for o in r["occupancy"]
    }
    names = {r["label"]: r["name"] for r in runtime["kernels"]}
    for label, threads, dyn in [
        ("k_static32k", 256, 0),
        ("k_bars3", 64, 0),
        ("k_regs_heavy", 256, 0),
        ("k_dyn_only", 256, 65536),
        ("k_lb256x2", 512, 0),
    ]:
        res = analyze_kernel(ks[names[label]], h200, Options(threads=threads, dynamic_smem_bytes=dyn))
        assert res.blocks_per_sm == answers[(label, threads, dyn)], label
    # __launch_bounds__(256, 2) and 512 threads: the occupancy API answers 1, the launch fails
    res = analyze_kernel(ks[names["k_lb256x2"]], h200, Options(threads=512))
    assert res.blocks_per_sm == 1 and res.launchable is False and "__launch_bounds__" in (res.reason or "")
    assert res.max_threads == 256


def test_ncu_program_export(h200: Hardware) -> None:
    report = analyze_file(load_kernel_file(H200 / "ncu-program.csv"), h200, Options())
    ks = {_label(k.kernel): k for k in report.kernels}
    assert len(ks) == 12 and all(k.launches == 2 for k in ks.values())
    # every kernel: ncu's limits (at the configuration the driver chose) and blocks equal the solver's
    assert all(k.ncu_agrees for k in ks.values()), [(k.kernel, k.ncu_disagreements) for k in ks.values()]
    plain = ks["k_plain"]
    assert plain.threads == 256 and plain.grid == 262144  # kernels.cu: n / 256 blocks of 256, n = 2^26
    assert plain.measured_s == pytest.approx((230592 + 230784) / 2 * 1e-9)  # median of the two launches, ns
    assert plain.dram_bytes == (787216896 + 787377920) / 2
    # a[i] = a[i] + b[i] over 2^26 floats: read a and b, write a, 3 x 256 MiB (the L2 keeps a little)
    assert 0.95 < plain.dram_bytes / (3 * 2**28) < 1.0
    assert plain.flops == 2**26 and plain.flops_dtype == "fp32"  # one fadd per element
    assert ks["k_bars3"].barriers == 3 and ks["k_bars3"].ncu_blocks_per_sm == ks["k_bars3"].blocks_per_sm == 21
    assert ks["k_regs_heavy"].ncu_blocks_per_sm == 1 and ks["k_static32k"].ncu_blocks_per_sm == 6
    r = plain.roofline
    assert r is not None and r.bandwidth_fraction == pytest.approx(plain.dram_bytes / plain.measured_s / h200.bandwidth)
    assert r.bound == "memory"


def test_ncu_torch_export(h200: Hardware) -> None:
    report = analyze_file(load_kernel_file(H200 / "ncu-torch.csv"), h200, Options())
    assert len(report.kernels) == 3 and all(k.launches == 3 and k.ncu_agrees for k in report.kernels)
    mm = next(k for k in report.kernels if k.flops_dtype == "bf16")
    # torch_ops.py: a bf16 4096^3 matmul is 2 x 4096^3 FLOPs; ncu's tensor counter says exactly that
    assert mm.flops == 2 * 4096**3 and mm.flops_counters == ["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]
    r = mm.roofline
    assert r is not None and r.peak_pipe == "tensor" and r.peak_flops_per_s == h200.peak("bf16")
    assert r.bound == "compute" and 0.5 < r.flops_fraction < 1.0  # type: ignore[operator]
    softmax = next(k for k in report.kernels if "SoftMax" in k.kernel)
    assert softmax.flops_dtype == "fp32" and softmax.roofline is not None and softmax.roofline.bound == "memory"
    assert softmax.roofline.peak_pipe == "CUDA cores"


def test_triton_cache(h200: Hardware) -> None:
    truth = {k["name"]: k for k in json.loads((H200 / "triton-truth.json").read_text())["kernels"]}
    for path in (H200 / "triton-cache", *sorted((H200 / "triton-cache").glob("*/[!_]*.json"))):
        kf = load_kernel_file(path)
        assert kf.format == "triton"
        for k in analyze_file(kf, h200, Options()).kernels:
            t = truth[k.kernel]
            # registers: the driver's n_regs (Triton's CompiledKernel); block: num_warps x 32
            assert (k.registers, k.threads, k.dynamic_smem_bytes, k.static_smem_bytes) == (
                t["n_regs"],
                32 * t["num_warps"],
                t["shared"],
                0,
            )
    report = analyze_file(load_kernel_file(H200 / "triton-cache"), h200, Options())
    mm = next(k for k in report.kernels if k.kernel == "matmul_kernel")
    # 107 regs x 256 threads and 98,304 + 1,024 B per block: 2 blocks by both (65,536 / 28,672; 233,472 / 99,328)
    assert mm.blocks_per_sm == 2 and mm.limiters == ["registers", "shared_memory"]


# ------------------------------------------------------------------ compiled here with nvcc


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> tuple[Path, Path]:
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("nvcc not found: the kernels cannot be compiled here")
    d = tmp_path_factory.mktemp("nvcc")
    cubin, log = d / "kernels.sm_90.cubin", d / "ptxas.log"
    # -DKERNELS_LIGHT and ptxas -O1: a faster compile with the same caps, spills and shared memory
    rc, text = nvcc_cached(
        pytestconfig, nvcc, ["-cubin", "-arch=sm_90", "-DKERNELS_LIGHT", "-Xptxas", "-v,-O1"], SOURCE, cubin
    )
    if rc != 0:
        pytest.skip(f"nvcc could not build sm_90 code: {text.strip()[-200:]}")
    log.write_text(text)
    return cubin, log


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    inc = next(
        (
            Path(r) / "include"
            for r in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")
            if r and (Path(r) / "include" / "cuda_occupancy.h").is_file()
        ),
        None,
    )
    gxx = shutil.which("g++")
    if inc is None or gxx is None:
        pytest.skip("cuda_occupancy.h or g++ not found: the check against NVIDIA's calculator is skipped")
    exe = tmp_path_factory.mktemp("occ") / "occ_harness"
    subprocess.run(
        [gxx, "-O2", "-std=c++14", f"-I{inc}", str(ROOT / "tests" / "occ_harness.cpp"), "-o", str(exe)],
        check=True,
        capture_output=True,
    )
    return exe


def test_cubin_reader_agrees_with_ptxas(light: tuple[Path, Path], h200: Hardware) -> None:
    cubin, log = light
    from_cubin = {k.name: k for k in load_kernel_file(cubin).kernels}
    from_log = {k.name: k for k in load_kernel_file(log).kernels}
    assert set(from_cubin) == set(from_log) and len(from_log) == 12
    for name, c in from_cubin.items():
        p = from_log[name]
        assert c.arch == p.arch == 90
        static = solver_input(c, h200, Options(threads=128))[1]
        assert (c.registers, static, c.barriers, c.stack_frame_bytes) == (
            p.registers,
            p.smem_reported_bytes,
            p.barriers,
            p.stack_frame_bytes,
        ), name
    # from kernels.cu: __launch_bounds__(256, 2) caps registers at 65,536 / (256 x 2) = 128,
    # __launch_bounds__(1024) at 64, __maxnreg__(40) at 40; static arrays of 32, 48, 16 and 8 KiB
    assert (from_cubin["k_lb256x2"].max_threads, from_cubin["k_lb256x2"].max_registers) == (256, 128)
    assert (from_cubin["k_lb1024"].max_threads, from_cubin["k_lb1024"].max_registers) == (1024, 64)
    assert from_cubin["k_spill"].max_registers == 40 and from_cubin["k_spill"].registers == 40
    assert (from_log["k_spill"].spill_store_bytes or 0) > 0 and (from_cubin["k_spill"].stack_frame_bytes or 0) > 0
    assert [
        from_log[n].smem_reported_bytes
        for n in ("k_static32k", "k_static48k", "_Z6k_tmplILi4096EEvPfi", "k_static8k_dyn", "k_dyn_only")
    ] == [32768, 49152, 16384, 8192, 0]
    assert from_cubin["k_static32k"].smem_reported_bytes == 32768 + 1024  # the reserve inside, as on the H200
    assert from_cubin["k_bars3"].barriers == 3


TINY = """
extern "C" __global__ void k_static32k(float* a) {
    __shared__ float s[8192];
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    a[threadIdx.x] = s[8191 - threadIdx.x];
}
extern "C" __global__ void k_plain(float* a) { a[threadIdx.x] += 1.f; }
"""


def test_fatbin_of_four_architectures(light: tuple[Path, Path], tmp_path: Path, pytestconfig: pytest.Config) -> None:
    # one nvcc call: an sm_80 + sm_90 + sm_100 + sm_120 fatbin and its ptxas log
    src = tmp_path / "tiny.cu"
    src.write_text(TINY)
    fat = tmp_path / "tiny.fatbin"
    gencode = [a for sm in (80, 90, 100, 120) for a in ("-gencode", f"arch=compute_{sm},code=sm_{sm}")]
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    rc, text = nvcc_cached(pytestconfig, nvcc, ["-fatbin", *gencode, "-Xptxas", "-v"], src, fat)
    if rc != 0:
        pytest.skip(f"nvcc cannot build all of sm_80, 90, 100, 120: {text.strip()[-200:]}")
    log = tmp_path / "tiny.log"
    log.write_text(text)
    cubins = {(k.arch, k.name): k for k in load_kernel_file(fat).kernels}
    ptxas = {(k.arch, k.name): k for k in load_kernel_file(log).kernels}
    assert set(cubins) == set(ptxas) and {a for a, _ in cubins} == {80, 90, 100, 120}  # e_flags, both ABI layouts
    for key, k in cubins.items():
        assert k.registers == ptxas[key].registers and k.barriers == ptxas[key].barriers, key
        # .nv.shared.<kernel>: the kernel's own bytes on sm_80; with the 1,024-byte reserve from sm_90 on,
        # where a kernel has the section (k_plain has none here, as Triton's add_kernel on the H200)
        reserve = 1024 if k.smem_reserve_included else 0
        assert k.smem_reported_bytes == ptxas[key].smem_reported_bytes + reserve, key
    assert [cubins[(sm, "k_static32k")].smem_reported_bytes for sm in (80, 90, 100, 120)] == [32768] + [33792] * 3


def test_cubin_occupancy_matches_cuda_occupancy_h(light: tuple[Path, Path], harness: Path) -> None:
    cubin, log = light
    hw = load_hardware("h100")
    from_log = {k.name: k for k in load_kernel_file(log).kernels}
    configs, mine = [], []
    for k in load_kernel_file(cubin).kernels:
        p = from_log[k.name]
        for threads in (32, 64, 128, 256, 384, 512, 1024):
            for dyn in (0, 1000, 16384, 102400):
                inp, _, _ = solver_input(k, hw, Options(threads=threads, dynamic_smem_bytes=dyn))
                assert inp is not None
                mine.append(
                    blocks_per_sm(hw, inp.threads, inp.regs or 1, inp.smem, inp.static_smem, -1, inp.barriers)[0]
                )
                # the oracle gets what cudaFuncGetAttributes reports: ptxas's figures (runtime.json shows they agree)
                configs.append((threads, p.registers, dyn, p.smem_reported_bytes, -1, max(1, p.barriers or 0)))
    oracle = [blocks for blocks, _limiters in _oracle(harness, hw, configs)]
    assert len(oracle) == len(mine) == 12 * 28
    assert [(c, m, o) for c, m, o in zip(configs, mine, oracle, strict=True) if m != o] == []


# ------------------------------------------------------------------ hand-written samples


def test_ptxas_older_line_forms(h200: Hardware) -> None:
    kf = load_kernel_file(SAMPLES / "ptxas-older.log")
    ks = {k.name: k for k in kf.kernels}
    assert set(ks) == {"_Z6searchPiS_", "_Z5tiledPf", "_Z3oldPf"}  # the device function _Z6helperf is no entry
    assert (ks["_Z6searchPiS_"].registers, ks["_Z6searchPiS_"].stack_frame_bytes, ks["_Z6searchPiS_"].arch) == (
        46,
        72,
        52,
    )
    assert (ks["_Z5tiledPf"].registers, ks["_Z5tiledPf"].smem_reported_bytes) == (6, 4096)
    assert (ks["_Z3oldPf"].smem_reported_bytes, ks["_Z3oldPf"].local_bytes) == (24, 4)  # "24+16 bytes smem"
    report = analyze_file(kf, h200, Options(threads=128))
    assert any("no kernel was built for h200" in n for n in report.notes)


def test_cuobjdump_sm52_and_device_functions() -> None:
    kf = load_kernel_file(SAMPLES / "cuobjdump-res-usage-sm52.txt")
    assert kf.format == "cuobjdump" and [k.name for k in kf.kernels] == ["_Z6searchPiS_"]
    assert any("1 device function(s) skipped" in n for n in kf.notes)
    k = kf.kernels[0]
    report = analyze_file(kf, load_hardware("a100"), Options(threads=128))
    # sm_52 < sm_90: SHARED holds the kernel's own 4,096 bytes
    assert k.smem_reserve_included is False and report.kernels[0].static_smem_bytes == 4096


def test_ncu_scaled_units_and_disagreement(h200: Hardware) -> None:
    report = analyze_file(load_kernel_file(SAMPLES / "ncu-scaled-units.csv"), h200, Options())
    ks = {k.kernel: k for k in report.kernels}
    a, b, alt = ks["k_static32k"], ks["void scale<[bold]x[/bold]>(float *)"], ks["k_static32k_altered"]
    # 32.77 Kbyte/block -> 32,768; 49.15 -> 49,152 (multiples of 128 within the printed precision)
    assert (a.static_smem_bytes, b.dynamic_smem_bytes, a.ncu_smem_config_bytes) == (32768, 49152, 233472)
    assert a.measured_s == pytest.approx(10.50e-6) and a.dram_bytes == pytest.approx(4.20e6)
    # by hand: 233,472 // (32,768 + 1,024) = 6 blocks; 233,472 // (49,152 + 1,024) = 4
    assert (a.blocks_per_sm, a.ncu_agrees, b.blocks_per_sm, b.ncu_agrees) == (6, True, 4, True)
    assert alt.ncu_agrees is False and "shared memory limit: ncu 7, roofcalc 6" in alt.ncu_disagreements
    assert any("scaled" in n for n in report.notes)


@pytest.mark.parametrize(
    ("unit", "scale"),
    [
        ("ns", 1e-9),
        ("nsecond", 1e-9),
        ("usecond", 1e-6),
        ("msecond", 1e-3),
        ("second", 1.0),
        ("byte", 1.0),
        ("Kbyte", 1e3),
        ("Mbyte", 1e6),
        ("Gbyte", 1e9),
        ("Kbyte/block", 1e3),
        ("byte/second", 1.0),
        ("Gbyte/second", 1e9),
        ("cycle/nsecond", 1e9),
        ("register/thread", 1.0),
        ("%", 1.0),
        ("", 1.0),
        ("inst", 1.0),
        ("Kinst", 1e3),
        ("hz", 1.0),
        ("block", 1.0),
    ],
)
def test_ncu_units(unit: str, scale: float) -> None:
    assert unit_scale(unit) == pytest.approx(scale)


@pytest.mark.parametrize(
    ("text", "unit", "want"),
    [
        ("32.77", "Kbyte/block", 32768),
        ("1.02", "Kbyte/block", 1024),
        ("49.15", "Kbyte/block", 49152),
        ("233.47", "Kbyte", 233472),
        ("0", "Kbyte/block", 0),
        ("32,768", "byte/block", 32768),
        ("4.10", "Kbyte", 4096),
        ("4.15", "Kbyte", 4150),
    ],
)  # 4,145 ... 4,155 holds no multiple of 128: the printed value
def test_ncu_scaled_bytes(text: str, unit: str, want: int) -> None:
    assert _bytes(text, unit) == want


@pytest.mark.parametrize(
    ("arch", "suffix", "cc", "runs"),
    [
        (80, "", (8, 6), True),
        (86, "", (8, 0), False),
        (90, "", (9, 0), True),
        (90, "a", (9, 0), True),
        (90, "", (10, 0), False),
        (100, "a", (10, 3), False),
        (100, "f", (10, 3), True),
        (None, "", (9, 0), True),
    ],
)
def test_sass_runs_on(arch: int | None, suffix: str, cc: tuple[int, int], runs: bool) -> None:
    hw = next(h for h in map(load_hardware, ("a100", "l40s", "h100", "b200")) if h.cc and h.cc[0] == cc[0])
    hw = hw.model_copy(update={"compute_capability": f"{cc[0]}.{cc[1]}"})
    assert runs_on(arch, suffix, hw) is runs


def test_fatbin_with_two_architectures(real_cubin: Path, tmp_path: Path) -> None:
    data = real_cubin.read_bytes()
    sm80 = bytearray(data)
    sm80[49] = 80  # e_flags bits 8-15 (CUDA ELF ABI 8): the SM version
    fat = tmp_path / "two.fatbin"
    fat.write_bytes(FATBIN_MAGIC + bytes(76) + data + bytes(8) + bytes(sm80))
    kf = load_kernel_file(fat)
    assert kf.format == "cubin" and sorted({k.arch for k in kf.kernels}) == [80, 90] and len(kf.kernels) == 24
    report = analyze_file(kf, load_hardware("h100"), Options(threads=256))
    assert len(report.kernels) == 12 and "12 kernel(s) built for sm_80" in report.skipped[0]
    report = analyze_file(kf, load_hardware("a100"), Options(threads=256))
    assert {k.arch for k in report.kernels} == {"sm_80"}


# ------------------------------------------------------------------ the command


def test_cli_json(h200: Hardware) -> None:
    rows = run_json(H200 / "ptxas-sm90.log", "--hw", "h200", "--threads", "256")
    assert len(rows) == 12 and all(set(r) >= REQUIRED for r in rows)
    by = {r["kernel"]: r for r in rows}
    assert by["k_static32k"]["blocks_per_sm"] == 6 and by["k_static32k"]["limiters"] == ["shared_memory"]
    assert by["k_spill"]["spill_store_bytes"] == 1336  # ptxas: "1336 bytes spill stores"
    measured = run_json(H200 / "ncu-program.csv", "--hw", "h200")
    assert all({"measured_s", "dram_bytes", "ncu_blocks_per_sm", "roofline", "ncu_agrees"} <= set(r) for r in measured)
    only = run_json(H200 / "ptxas-sm90.log", "--kernel", "^k_lb", "--threads", "256")
    assert [r["kernel"] for r in only] == ["k_lb1024", "k_lb256x2"]


def test_cli_table_prints_names_literally() -> None:
    res = run(SAMPLES / "ncu-scaled-units.csv", "--hw", "h200")
    assert res.exit_code == 0, res.output
    assert "[bold]x[/bold]" in res.stdout  # escaped, not taken as markup
    assert "ncu disagrees" in res.stdout and "shared memory limit: ncu 7, roofcalc 6" in res.stdout


def test_cli_notes_go_to_stderr_with_json() -> None:
    res = run(H200 / "ncu-program.csv", "--hw", "h200", "--threads", "128", "--json")
    assert res.exit_code == 0
    json.loads(res.stdout)
    assert "--threads ignored" in res.stderr


def test_cli_calibration_and_device_note() -> None:
    from roofcalc.hardware import load_calibration

    cal = load_calibration(ROOT / "validation" / "h200" / "calibration.yaml")
    rows = run_json(H200 / "ncu-torch.csv", "--calibration", ROOT / "validation" / "h200" / "calibration.yaml")
    mm = next(r for r in rows if r["flops_dtype"] == "bf16")
    assert mm["roofline"]["peak_flops_per_s"] == cal.peak("bf16")  # the measured roof, not the datasheet's
    res = run(H200 / "ncu-torch.csv", "--hw", "h100", "--json")
    assert "profiled on NVIDIA H200" in res.stderr  # the export names its device; --hw named another


def test_cli_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "roofline.png"
    res = run(H200 / "ncu-torch.csv", "--hw", "h200", "--plot", out)
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 1000


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


def _bad_files(tmp_path: Path, cubin: Path) -> list[tuple[Path, str]]:
    good = cubin.read_bytes()
    unknown = bytearray(good)
    unknown[49] = 0xEE
    x86 = bytearray(64)
    x86[:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HH", x86, 16, 2, 62)
    ncu = (H200 / "ncu-program.csv").read_text()
    ptxas = (H200 / "ptxas-sm90.log").read_text()
    cuobj = (H200 / "cuobjdump-res-usage-sm90-cubin.txt").read_text()
    meta = tmp_path / "t"
    meta.mkdir()
    return [
        (_write(tmp_path, "empty.log", ""), "empty file"),
        (_write(tmp_path, "blank.txt", "\n  \n"), "empty file"),
        (_write(tmp_path, "cut.cubin", good[:3000]), "truncated ELF file"),
        (_write(tmp_path, "sm238.cubin", bytes(unknown)), "unknown architecture"),
        (_write(tmp_path, "k32.cubin", b"\x7fELF\x01\x01\x01" + bytes(60)), "32-bit"),
        (_write(tmp_path, "pic.cubin", b"\x89PNG\r\n\x1a\n" + bytes(100)), "not ELF"),
        (_write(tmp_path, "host.o", bytes(x86)), "for x86-64 with no CUDA device code"),
        (_write(tmp_path, "packed.fatbin", FATBIN_MAGIC + bytes(12) + os.urandom(200)), "compressed"),
        (SAMPLES / "nsys-cuda-gpu-kern-sum.csv", "not a Nsight Compute raw-page export"),
        (SAMPLES / "ncu-details-page.csv", "details-page export"),
        (_write(tmp_path, "cut.csv", ncu[: ncu.rindex(",", 0, len(ncu) - 40)]), "truncated Nsight Compute export"),
        (_write(tmp_path, "header.csv", "\n".join(ncu.splitlines()[:12])), "no kernels"),
        (_write(tmp_path, "cut.log", ptxas[: ptxas.index("'k_plain'") + 30]), "truncated ptxas log"),
        (_write(tmp_path, "cut-res.txt", cuobj[: cuobj.index("k_plain:") + 9]), "truncated cuobjdump output"),
        (_write(tmp_path, "notes.txt", "these are my notes\nnothing to see\n"), "not a kernel file"),
        (_write(tmp_path, "other.json", '{"name": "x"}'), "not Triton kernel metadata"),
        (_write(meta, "k.json", '{"name": "k", "num_warps": 4, "shared": 0}'), "without its cubin"),
        (tmp_path / "missing.cubin", "no such file"),
        (tmp_path / ("x" * 300), "cannot open"),
    ]


def test_bad_files_one_line_exit_2(tmp_path: Path, real_cubin: Path) -> None:
    for path, message in _bad_files(tmp_path, real_cubin):
        res = run(path, "--threads", "128")
        lines = res.stderr.strip().splitlines()
        assert res.exit_code == 2, (path.name, res.output)
        assert len(lines) == 1 and message in lines[0], (path.name, lines)
        assert "Traceback" not in res.output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--kernel", "["], 2, "not a regular expression"),
        (["--kernel", "nothing-matches"], 2, "no kernel matches"),
        (["--threads", "0"], 2, "--threads must be"),
        (["--plot", "chart.txt"], 2, "unknown chart format"),
        (["--threads", "128", "--plot", "chart.png"], 1, "no kernel has both a FLOP count"),
    ],
)
def test_bad_invocations(args: list[str], code: int, message: str, tmp_path: Path) -> None:
    args = [str(tmp_path / a) if a.startswith("chart") else a for a in args]
    res = run(H200 / "ptxas-sm90.log", *args)
    assert res.exit_code == code, res.output
    assert message in res.stderr
