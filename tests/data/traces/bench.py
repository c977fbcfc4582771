"""Benchmark (not a test): read a synthetic 200 MB PyTorch profiler trace; time and peak memory.

    python tests/data/traces/bench.py                  # 200 MB, plain JSON
    python tests/data/traces/bench.py --mb 200 --gzip  # the same, gzip-compressed
    python tests/data/traces/bench.py --keep /tmp/big.json

The trace repeats a realistic mix (per op: a python_function range, an aten op wrapping an inner
aten op with shapes, dtypes, strides and concrete inputs, a cudaLaunchKernel, the kernel with its
launch configuration, and the two ac2g flow events), with fresh correlation and External ids.
Reading and analysing run in a child process, whose peak resident memory is read with
resource.getrusage(RUSAGE_CHILDREN) (ru_maxrss, KiB on Linux).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

OPS = [
    (
        "aten::linear",
        "aten::addmm",
        [[6144], [8, 2048], [2048, 6144], [], []],
        ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"],
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        11.9,
    ),
    (
        "aten::matmul",
        "aten::bmm",
        [[128, 1, 128], [128, 128, 1025]],
        ["c10::BFloat16"] * 2,
        "ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_stages_64x6_nn",
        12.4,
    ),
    (
        "aten::softmax",
        "aten::_softmax",
        [[8, 16, 1, 1025], [], []],
        ["c10::BFloat16", "Scalar", "Scalar"],
        "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
        2.6,
    ),
    (
        "aten::layer_norm",
        "aten::native_layer_norm",
        [[8, 1, 2048], [], [2048], [2048], []],
        ["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar"],
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
        2.8,
    ),
    (
        "aten::add",
        "aten::add_",
        [[8, 1, 2048], [8, 1, 2048], []],
        ["c10::BFloat16", "c10::BFloat16", "Scalar"],
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
        1.9,
    ),
]


def strides(shape: list[int]) -> list[int]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return list(reversed(out))


def synthesise(path: Path, mb: float, compress: bool) -> int:
    """Write a trace of about ``mb`` MB of JSON; the number of events."""
    target = int(mb * 1e6)
    opener = (lambda p: gzip.open(p, "wt", compresslevel=1)) if compress else (lambda p: open(p, "w"))  # noqa: SIM115
    written = 0
    events = 0
    t, gpu, corr, ext = 1000.0, 1000.0, 1, 1
    dumps = json.JSONEncoder(separators=(", ", ": ")).encode
    with opener(path) as f:
        head = '{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],\n  "traceEvents": [\n'
        f.write(head)
        written += len(head)
        first = True
        i = 0
        while written < target:
            outer, inner, dims, types, kernel, kdur = OPS[i % len(OPS)]
            i += 1
            ev = []
            ev.append(
                {
                    "ph": "X",
                    "cat": "python_function",
                    "name": "nn.Module: Block_3",
                    "pid": 2871,
                    "tid": 2871,
                    "ts": round(t, 3),
                    "dur": 30.0,
                    "args": {"Python parent id": 7, "Python id": i, "Python module id": 3},
                }
            )
            ev.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": outer,
                    "pid": 2871,
                    "tid": 2871,
                    "ts": round(t + 1, 3),
                    "dur": 26.0,
                    "args": {
                        "External id": ext,
                        "Record function id": 0,
                        "Ev Idx": i,
                        "Input Dims": dims[:2],
                        "Input type": types[:2],
                        "Input Strides": [strides(d) for d in dims[:2]],
                        "Concrete Inputs": ["", ""],
                    },
                }
            )
            ev.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": inner,
                    "pid": 2871,
                    "tid": 2871,
                    "ts": round(t + 3, 3),
                    "dur": 20.0,
                    "args": {
                        "External id": ext + 1,
                        "Record function id": 0,
                        "Sequence number": i,
                        "Fwd thread id": 0,
                        "Ev Idx": i,
                        "Input Dims": dims,
                        "Input type": types,
                        "Input Strides": [strides(d) for d in dims],
                        "Concrete Inputs": [""] * len(dims),
                    },
                }
            )
            ev.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "pid": 2871,
                    "tid": 2871,
                    "ts": round(t + 10, 3),
                    "dur": 4.5,
                    "args": {"External id": ext + 1, "cbid": 211, "correlation": corr},
                }
            )
            gpu = max(gpu, t + 15)
            ev.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": kernel,
                    "pid": 0,
                    "tid": 7,
                    "ts": round(gpu, 3),
                    "dur": kdur,
                    "args": {
                        "External id": ext + 1,
                        "queued": 0,
                        "device": 0,
                        "context": 1,
                        "stream": 7,
                        "correlation": corr,
                        "registers per thread": 90,
                        "shared memory": 98304,
                        "blocks per SM": 0.727273,
                        "warps per SM": 2.909091,
                        "grid": [96, 1, 1],
                        "block": [128, 1, 1],
                        "est. achieved occupancy %": 6,
                    },
                }
            )
            ev.append(
                {"ph": "s", "id": corr, "pid": 2871, "tid": 2871, "ts": round(t + 10, 3), "cat": "ac2g", "name": "ac2g"}
            )
            ev.append(
                {
                    "ph": "f",
                    "id": corr,
                    "pid": 0,
                    "tid": 7,
                    "ts": round(gpu, 3),
                    "cat": "ac2g",
                    "name": "ac2g",
                    "bp": "e",
                }
            )
            gpu += kdur
            t += 32.0
            corr += 1
            ext += 2
            chunk = "".join(("" if first and j == 0 else ",\n") + "  " + dumps(e) for j, e in enumerate(ev))
            first = False
            f.write(chunk)
            written += len(chunk)
            events += len(ev)
        tail = '\n  ],\n  "traceName": "bench"\n}\n'
        f.write(tail)
    return events


CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from roofcalc.trace.reader import read_trace
from roofcalc.trace.analysis import analyze_trace
from roofcalc.hardware import load_hardware
t1 = time.perf_counter()
trace = read_trace(sys.argv[1])
t2 = time.perf_counter()
rss_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = analyze_trace(trace, load_hardware("h100"))
t3 = time.perf_counter()
print(json.dumps({"events": trace.events, "kernels": len(trace.kernels), "import_s": t1 - t0, "read_s": t2 - t1,
                  "analyse_s": t3 - t2, "rss_after_read_kib": rss_read,
                  "accounted_s": report.summary.accounted_s, "kernel_s": report.summary.kernel_s}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200.0, help="size of the JSON text (default 200)")
    ap.add_argument("--gzip", action="store_true", help="write it gzip-compressed")
    ap.add_argument("--keep", type=Path, default=None, help="write the trace here and keep it")
    args = ap.parse_args()
    tmp = None
    if args.keep is None:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / ("bench.json.gz" if args.gzip else "bench.json")
    else:
        path = args.keep
    t0 = time.perf_counter()
    n = synthesise(path, args.mb, args.gzip)
    print(
        f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB on disk, {n:,} events) in {time.perf_counter() - t0:.1f} s"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(out.stderr)
    r = json.loads(out.stdout)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"read {r['events']:,} events ({r['kernels']:,} kernels) in {r['read_s']:.2f} s, analysed in {r['analyse_s']:.2f} s; "
        f"child process {wall:.2f} s in all; peak RSS {peak:.0f} MiB (after reading: {r['rss_after_read_kib'] / 1024:.0f} MiB); "
        f"kernel time accounted {r['accounted_s']:.6f} s of {r['kernel_s']:.6f} s"
    )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
