"""Write the small synthetic PyTorch-profiler traces beside this file (tests/test_trace.py reads them).

    python tests/data/traces/make_fixtures.py

Each trace is laid out as torch 2.x writes one (torch.profiler.profile(activities=[CPU, CUDA],
record_shapes=True), then prof.export_chrome_trace): the top-level keys Kineto writes, cpu_op
events with "Input Dims", "Input type", "Input Strides" and "Concrete Inputs", python_function
and user_annotation ranges, cuda_runtime/cuda_driver launches with their correlation ids, GPU
kernels with grid, block, registers and shared memory, memcpy and memset activities, ac2g flow
events, and process/thread metadata. The shapes and durations are invented (plausible for an
H100); the tests derive every expected FLOP and byte count from the shapes written here.

The output is deterministic (fixed times, gzip without a timestamp), so running this again
rewrites the same bytes.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PID = 2871
TID = 2871
BF16 = "c10::BFloat16"
LONG = "long int"


def strides(shape: list[int]) -> list[int]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return list(reversed(out))


@dataclass
class K:
    """A GPU activity a launch starts."""

    name: str
    dur: float
    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (128, 1, 1)
    regs: int = 32
    smem: int = 0
    cat: str = "kernel"
    stream: int = 7
    bytes: int | None = None
    launcher: str = "cudaLaunchKernel"
    extra: dict[str, Any] = field(default_factory=dict)


class Trace:
    def __init__(self, name: str, device: str = "NVIDIA H100 80GB HBM3", rank: int | None = None) -> None:
        self.name = name
        self.device = device
        self.rank = rank
        self.events: list[dict[str, Any]] = []
        self.t = 100.0  # host clock, us
        self.gpu: dict[int, float] = {}  # per stream: when it is free
        self.corr = 1000
        self.ext = 0
        self.rf = 0
        self.launch_gap = 5.0  # launch to kernel start, at the least

    # -- low level
    def _next_ext(self) -> int:
        self.ext += 1
        return self.ext

    def cpu_op(
        self,
        name: str,
        ts: float,
        dur: float,
        ext: int,
        dims: list[Any] | None,
        types: list[str] | None,
        concrete: list[str] | None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.rf += 1
        args: dict[str, Any] = {"External id": ext, "Record function id": self.rf, "Ev Idx": len(self.events)}
        if dims is not None:
            args["Input Dims"] = dims
            args["Input type"] = types
            args["Input Strides"] = [strides(d) if d and isinstance(d[0], int) else [] for d in dims]
            args["Concrete Inputs"] = concrete if concrete is not None else [""] * len(dims)
        args.update(extra or {})
        self.events.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": name,
                "pid": PID,
                "tid": TID,
                "ts": round(ts, 3),
                "dur": round(dur, 3),
                "args": args,
            }
        )

    def launch(self, k: K, ext: int) -> None:
        self.corr += 1
        corr = self.corr
        ts = self.t
        runtime = {
            "ph": "X",
            "cat": "cuda_driver"
            if k.launcher.startswith("cu") and not k.launcher.startswith("cuda")
            else "cuda_runtime",
            "name": k.launcher,
            "pid": PID,
            "tid": TID,
            "ts": round(ts, 3),
            "dur": 4.2,
            "args": {"External id": ext, "cbid": 211, "correlation": corr},
        }
        self.events.append(runtime)
        self.t += 5.0
        self.kernel(k, corr, ext, ts)

    def kernel(self, k: K, corr: int, ext: int, launch_ts: float) -> None:
        start = max(self.gpu.get(k.stream, 0.0), launch_ts + self.launch_gap)
        self.gpu[k.stream] = start + k.dur
        args: dict[str, Any] = {
            "External id": ext,
            "queued": 0,
            "device": 0,
            "context": 1,
            "stream": k.stream,
            "correlation": corr,
        }
        if k.cat == "kernel":
            threads = k.block[0] * k.block[1] * k.block[2]
            blocks = k.grid[0] * k.grid[1] * k.grid[2]
            args.update(
                {
                    "registers per thread": k.regs,
                    "shared memory": k.smem,
                    "blocks per SM": round(blocks / 132, 6),
                    "warps per SM": round(blocks * threads / 32 / 132, 6),
                    "grid": list(k.grid),
                    "block": list(k.block),
                    "est. achieved occupancy %": 25,
                }
            )
        elif k.cat == "gpu_memcpy":
            args.update({"bytes": k.bytes, "memory bandwidth (GB/s)": round(k.bytes / (k.dur * 1e3), 3)})
        else:
            args.update({"bytes": k.bytes})
        args.update(k.extra)
        self.events.append(
            {
                "ph": "X",
                "cat": k.cat,
                "name": k.name,
                "pid": 0,
                "tid": k.stream,
                "ts": round(start, 3),
                "dur": round(k.dur, 3),
                "args": args,
            }
        )
        self.events.append(
            {"ph": "s", "id": corr, "pid": PID, "tid": TID, "ts": round(launch_ts, 3), "cat": "ac2g", "name": "ac2g"}
        )
        self.events.append(
            {
                "ph": "f",
                "id": corr,
                "pid": 0,
                "tid": k.stream,
                "ts": round(start, 3),
                "cat": "ac2g",
                "name": "ac2g",
                "bp": "e",
            }
        )

    # -- ops
    def leaf(
        self,
        name: str,
        dims: list[Any] | None = None,
        types: list[str] | None = None,
        concrete: list[str] | None = None,
        kernels: tuple[K, ...] = (),
        cpu: float = 3.0,
        extra: dict[str, Any] | None = None,
    ) -> None:
        start = self.t
        ext = self._next_ext()
        self.t += cpu
        for k in kernels:
            self.launch(k, ext)
        self.t += 1.0
        self.cpu_op(name, start, self.t - start, ext, dims, types, concrete, extra)
        self.t += 0.5

    @contextmanager
    def scope(
        self,
        name: str,
        dims: list[Any] | None = None,
        types: list[str] | None = None,
        concrete: list[str] | None = None,
        cat: str = "cpu_op",
        extra: dict[str, Any] | None = None,
    ) -> Iterator[None]:
        start = self.t
        ext = self._next_ext()
        self.t += 2.0
        yield
        self.t += 1.5
        if cat == "cpu_op":
            self.cpu_op(name, start, self.t - start, ext, dims, types, concrete, extra)
        else:
            self.events.append(
                {
                    "ph": "X",
                    "cat": cat,
                    "name": name,
                    "pid": PID,
                    "tid": TID,
                    "ts": round(start, 3),
                    "dur": round(self.t - start, 3),
                    "args": extra or {},
                }
            )
        self.t += 0.5

    def graph_launch(self, kernels: list[K]) -> None:
        """cudaGraphLaunch: its kernels carry its correlation id and no op launched them."""
        self.corr += 1
        corr = self.corr
        ts = self.t
        self.events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaGraphLaunch",
                "pid": PID,
                "tid": TID,
                "ts": round(ts, 3),
                "dur": 9.1,
                "args": {"cbid": 311, "correlation": corr},
            }
        )
        self.t += 10.0
        for k in kernels:
            self.launch_gap = 3.0
            self.kernel(k, corr, 0, ts)

    # -- the document
    def write(self, path: Path, gz: bool = False) -> None:
        meta = [
            {"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"name": "python"}},
            {
                "name": "thread_name",
                "ph": "M",
                "ts": 0,
                "pid": PID,
                "tid": TID,
                "args": {"name": "thread 2871 (python)"},
            },
            {"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
            {
                "name": "Iteration Start: PyTorch Profiler",
                "ph": "i",
                "s": "g",
                "pid": "Traces",
                "tid": "Trace PyTorch Profiler",
                "ts": 100.0,
            },
        ]
        doc: dict[str, Any] = {
            "schemaVersion": 1,
            "deviceProperties": [
                {
                    "id": 0,
                    "name": self.device,
                    "totalGlobalMem": 85045231616,
                    "computeMajor": 9,
                    "computeMinor": 0,
                    "maxThreadsPerBlock": 1024,
                    "maxThreadsPerMultiprocessor": 2048,
                    "regsPerBlock": 65536,
                    "warpSize": 32,
                    "sharedMemPerBlock": 49152,
                    "numSms": 132,
                    "regsPerMultiprocessor": 65536,
                    "sharedMemPerBlockOptin": 232448,
                }
            ],
        }
        if self.rank is not None:
            doc["distributedInfo"] = {
                "backend": "nccl",
                "rank": self.rank,
                "world_size": 2,
                "pg_count": 1,
                "pg_config": [
                    {
                        "pg_name": "0",
                        "pg_desc": "default_pg",
                        "backend_config": "cuda:nccl",
                        "pg_size": 2,
                        "ranks": [0, 1],
                    }
                ],
                "nccl_version": "2.21.5",
            }
        doc.update(
            {
                "cupti_version": 24,
                "cuda_runtime_version": 12040,
                "cuda_driver_version": 12040,
                "trace_id": "9C3A7E0F1B2D4C5E",
                "displayTimeUnit": "ms",
                "baseTimeNanoseconds": 1730000000000000000,
            }
        )
        lines = ["{"]
        for key, value in doc.items():
            lines.append(f'  "{key}": {json.dumps(value, separators=(",", ":"))},')
        lines.append('  "traceEvents": [')
        events = meta + self.events
        lines.extend(
            "  " + json.dumps(e, separators=(",", ":")) + ("," if i < len(events) - 1 else "")
            for i, e in enumerate(events)
        )
        lines.append("  ],")
        lines.append(f'  "traceName": "/tmp/traces/{self.name}"')
        lines.append("}")
        text = "\n".join(lines) + "\n"
        if gz:
            path.write_bytes(gzip.compress(text.encode(), mtime=0))
        else:
            path.write_text(text)


GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
EW = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)"


def decode() -> Trace:
    """One decode step of a GPT-style layer, eager: batch 4, hidden 2048, 16 heads of 128, 512 cached tokens."""
    t = Trace("decode-eager")
    b, h, nh, hd, ctx, ffn, vocab = 4, 2048, 16, 128, 512, 8192, 50304
    with t.scope("ProfilerStep#7", cat="user_annotation"):  # noqa: SIM117 (nested as the ops nest in the trace)
        with t.scope("nn.Module: GPT2Model_0", cat="python_function"):
            # the token ids come from the host
            with (
                t.scope(
                    "aten::to", [[b, 1], [], [], [], []], [LONG, "Scalar", "", "", ""], ["", "4", "False", "False", ""]
                ),
                t.scope("aten::_to_copy", [[b, 1], [], [], [], [], [], []], [LONG] + [""] * 6),
            ):
                t.leaf(
                    "aten::empty_strided",
                    [[], [], [], [], [], []],
                    ["ScalarList", "ScalarList", "Scalar", "", "", ""],
                )
                t.leaf(
                    "aten::copy_",
                    [[b, 1], [b, 1], []],
                    [LONG, LONG, "Scalar"],
                    ["", "", "False"],
                    kernels=(
                        K(
                            "Memcpy HtoD (Pageable -> Device)",
                            1.216,
                            cat="gpu_memcpy",
                            bytes=32,
                            launcher="cudaMemcpyAsync",
                        ),
                    ),
                )
            with t.scope(
                "aten::embedding",
                [[vocab, h], [b, 1], [], [], []],
                [BF16, LONG, "Scalar", "Scalar", "Scalar"],
                ["", "", "-1", "False", "False"],
            ):
                t.leaf("aten::reshape", [[b, 1], []], [LONG, "ScalarList"], ["", "[-1]"])
                t.leaf(
                    "aten::index_select",
                    [[vocab, h], [], [b]],
                    [BF16, "Scalar", LONG],
                    ["", "0", ""],
                    kernels=(
                        K(
                            "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, -2>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, long)",
                            2.944,
                            (2, 1, 1),
                            (128, 1, 1),
                            26,
                        ),
                    ),
                )
            with t.scope(
                "aten::layer_norm",
                [[b, 1, h], [], [h], [h], [], []],
                [BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"],
                ["", "[2048]", "", "", "1e-05", "True"],
            ):
                t.leaf(
                    "aten::native_layer_norm",
                    [[b, 1, h], [], [h], [h], []],
                    [BF16, "ScalarList", BF16, BF16, "Scalar"],
                    ["", "[2048]", "", "", "1e-05"],
                    kernels=(
                        K(
                            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
                            2.752,
                            (4, 1, 1),
                            (128, 1, 1),
                            32,
                        ),
                    ),
                )
            with t.scope("aten::linear", [[b, 1, h], [3 * h, h], [3 * h]], [BF16, BF16, BF16]):
                t.leaf("aten::t", [[3 * h, h]], [BF16])
                t.leaf(
                    "aten::addmm",
                    [[3 * h], [b, h], [h, 3 * h], [], []],
                    [BF16, BF16, BF16, "Scalar", "Scalar"],
                    ["", "", "", "1", "1"],
                    kernels=(K(GEMM, 11.904, (96, 1, 1), (128, 1, 1), 90, 98304),),
                )
            # attention over the cache, unfused: scores, softmax, weighted values
            t.leaf(
                "aten::cat",
                [[[b, nh, ctx, hd], [b, nh, 1, hd]], []],
                ["TensorList", "Scalar"],
                ["", "2"],
                kernels=(
                    K(
                        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
                        5.12,
                        (264, 2, 1),
                        (512, 1, 1),
                        30,
                    ),
                ),
            )
            with t.scope("aten::matmul", [[b, nh, 1, hd], [b, nh, hd, ctx + 1]], [BF16, BF16]):
                t.leaf(
                    "aten::bmm",
                    [[b * nh, 1, hd], [b * nh, hd, ctx + 1]],
                    [BF16, BF16],
                    kernels=(
                        K(
                            "ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_stages_64x6_nn",
                            4.96,
                            (9, 1, 64),
                            (128, 1, 1),
                            112,
                            73728,
                        ),
                    ),
                )
            with t.scope("aten::softmax", [[b, nh, 1, ctx + 1], [], []], [BF16, "Scalar", ""], ["", "-1", ""]):
                t.leaf(
                    "aten::_softmax",
                    [[b, nh, 1, ctx + 1], [], []],
                    [BF16, "Scalar", "Scalar"],
                    ["", "-1", "False"],
                    kernels=(
                        K(
                            "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
                            2.4,
                            (16, 1, 1),
                            (128, 1, 1),
                            48,
                        ),
                    ),
                )
            with t.scope("aten::matmul", [[b, nh, 1, ctx + 1], [b, nh, ctx + 1, hd]], [BF16, BF16]):
                t.leaf(
                    "aten::bmm",
                    [[b * nh, 1, ctx + 1], [b * nh, ctx + 1, hd]],
                    [BF16, BF16],
                    kernels=(
                        K(
                            "ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_stages_64x6_nn",
                            4.384,
                            (2, 1, 64),
                            (128, 1, 1),
                            112,
                            73728,
                        ),
                    ),
                )
            with t.scope("aten::linear", [[b, 1, h], [h, h], []], [BF16, BF16, ""]):
                t.leaf("aten::t", [[h, h]], [BF16])
                with t.scope("aten::matmul", [[b, 1, h], [h, h]], [BF16, BF16]):
                    t.leaf("aten::_unsafe_view", [[b, 1, h], []], [BF16, "ScalarList"])
                    t.leaf(
                        "aten::mm",
                        [[b, h], [h, h]],
                        [BF16, BF16],
                        kernels=(
                            K("Memset (Device)", 0.992, cat="gpu_memset", bytes=4096, launcher="cudaMemsetAsync"),
                            K(
                                GEMM.replace("execute_segment_k_off", "execute_segment_k_on"),
                                6.112,
                                (32, 1, 4),
                                (128, 1, 1),
                                90,
                                98304,
                            ),
                        ),
                    )
            t.leaf(
                "aten::add",
                [[b, 1, h], [b, 1, h], []],
                [BF16, BF16, "Scalar"],
                ["", "", "1"],
                kernels=(K(EW, 1.888, (8, 1, 1), (128, 1, 1), 20),),
            )
            # MLP: RMS-style scaling written out (pow, mean, add, rsqrt, mul), then fc1, gelu, fc2
            t.leaf(
                "aten::pow",
                [[b, 1, h], []],
                [BF16, "Scalar"],
                ["", "2"],
                kernels=(
                    K(EW.replace("CUDAFunctor_add", "pow_tensor_scalar_kernel"), 1.6, (8, 1, 1), (128, 1, 1), 18),
                ),
            )
            t.leaf(
                "aten::mean",
                [[b, 1, h], [], [], []],
                [BF16, "ScalarList", "Scalar", ""],
                ["", "[-1]", "True", ""],
                kernels=(
                    K(
                        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<float, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<float, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4>)",
                        2.88,
                        (4, 1, 1),
                        (32, 16, 1),
                        32,
                        16,
                    ),
                ),
            )
            t.leaf(
                "aten::add",
                [[b, 1, 1], [], []],
                [BF16, "Scalar", "Scalar"],
                ["", "1e-06", "1"],
                kernels=(K(EW, 1.44, (1, 1, 1), (128, 1, 1), 20),),
            )
            t.leaf(
                "aten::rsqrt",
                [[b, 1, 1]],
                [BF16],
                kernels=(K(EW.replace("CUDAFunctor_add", "rsqrt_kernel_cuda"), 1.408, (1, 1, 1), (128, 1, 1), 16),),
            )
            t.leaf(
                "aten::mul",
                [[b, 1, h], [b, 1, 1]],
                [BF16, BF16],
                kernels=(
                    K(
                        EW.replace(
                            "CUDAFunctor_add",
                            "BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >",
                        ),
                        1.728,
                        (8, 1, 1),
                        (128, 1, 1),
                        22,
                    ),
                ),
            )
            with t.scope("aten::linear", [[b, 1, h], [ffn, h], [ffn]], [BF16, BF16, BF16]):
                t.leaf("aten::t", [[ffn, h]], [BF16])
                t.leaf(
                    "aten::addmm",
                    [[ffn], [b, h], [h, ffn], [], []],
                    [BF16, BF16, BF16, "Scalar", "Scalar"],
                    ["", "", "", "1", "1"],
                    kernels=(K(GEMM, 16.64, (128, 1, 1), (128, 1, 1), 90, 98304),),
                )
            t.leaf(
                "aten::gelu",
                [[b, 1, ffn], []],
                [BF16, ""],
                ["", "none"],
                kernels=(K(EW.replace("CUDAFunctor_add", "GeluCUDAKernelImpl"), 1.952, (32, 1, 1), (128, 1, 1), 24),),
            )
            with t.scope("aten::linear", [[b, 1, ffn], [h, ffn], [h]], [BF16, BF16, BF16]):
                t.leaf("aten::t", [[h, ffn]], [BF16])
                t.leaf(
                    "aten::addmm",
                    [[h], [b, ffn], [ffn, h], [], []],
                    [BF16, BF16, BF16, "Scalar", "Scalar"],
                    ["", "", "", "1", "1"],
                    kernels=(
                        K(
                            GEMM.replace("execute_segment_k_off", "execute_segment_k_on"),
                            17.216,
                            (32, 1, 4),
                            (128, 1, 1),
                            90,
                            98304,
                        ),
                    ),
                )
            t.leaf(
                "aten::add_",
                [[b, 1, h], [b, 1, h], []],
                [BF16, BF16, "Scalar"],
                ["", "", "1"],
                kernels=(K(EW, 1.856, (8, 1, 1), (128, 1, 1), 20),),
            )
            # the next token: top-k sampling, an op roofcalc has no model for (two kernels)
            t.leaf(
                "aten::topk",
                [[b, vocab], [], [], [], []],
                [BF16, "Scalar", "Scalar", "Scalar", "Scalar"],
                ["", "50", "-1", "True", "True"],
                kernels=(
                    K(
                        "void at::native::sbtopk::gatherTopK<c10::BFloat16, unsigned int, 2, false>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, unsigned int*)",
                        9.6,
                        (4, 1, 1),
                        (1024, 1, 1),
                        40,
                        0,
                    ),
                    K(
                        "void at::native::bitonicSortKVInPlace<2, -1, 16, 16, c10::BFloat16, long, at::native::GTOp<c10::BFloat16, true>, unsigned int>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, unsigned int, unsigned int, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, at::native::GTOp<c10::BFloat16, true>)",
                        3.2,
                        (1, 1, 1),
                        (16, 16, 1),
                        30,
                        1536,
                    ),
                ),
            )
    return t


def prefill() -> Trace:
    """Prefill of 2048 tokens: a QKV projection and three SDPA calls (flash causal, efficient GQA, cuDNN causal)."""
    t = Trace("prefill-sdpa")
    s, h, nh, kvh, hd = 2048, 4096, 32, 8, 128
    with t.scope("ProfilerStep#2", cat="user_annotation"):
        with t.scope("aten::linear", [[1, s, h], [3 * h, h], [3 * h]], [BF16, BF16, BF16]):
            t.leaf("aten::t", [[3 * h, h]], [BF16])
            t.leaf(
                "aten::addmm",
                [[3 * h], [s, h], [h, 3 * h], [], []],
                [BF16, BF16, BF16, "Scalar", "Scalar"],
                ["", "", "", "1", "1"],
                kernels=(
                    K(
                        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
                        262.4,
                        (48, 16, 1),
                        (384, 1, 1),
                        168,
                        213248,
                    ),
                ),
            )
        q = [1, nh, s, hd]
        with t.scope(  # noqa: SIM117 (nested as the ops nest in the trace)
            "aten::scaled_dot_product_attention",
            [q, q, q, [], [], [], [], []],
            [BF16, BF16, BF16, "", "Scalar", "Scalar", "", "Scalar"],
            ["", "", "", "", "0.", "True", "", "False"],
        ):
            with t.scope(
                "aten::_scaled_dot_product_flash_attention",
                [q, q, q, [], [], [], []],
                [BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", ""],
                ["", "", "", "0.", "True", "False", ""],
            ):
                t.leaf("aten::transpose", [q, [], []], [BF16, "Scalar", "Scalar"], ["", "1", "2"])
                bshd = [1, s, nh, hd]
                t.leaf(
                    "aten::_flash_attention_forward",
                    [bshd, bshd, bshd, [], [], [], [], [], [], [], [], [], [], [], []],
                    [BF16, BF16, BF16, "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "", "", ""],
                    ["", "", "", "", "", "2048", "2048", "0.", "True", "False", "", "", "", "", ""],
                    kernels=(
                        K(
                            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
                            71.68,
                            (16, 1, 32),
                            (128, 1, 1),
                            255,
                            49152,
                        ),
                    ),
                )
        kv = [1, kvh, s, hd]
        with t.scope(  # noqa: SIM117 (nested as the ops nest in the trace)
            "aten::scaled_dot_product_attention",
            [q, kv, kv, [], [], [], [], []],
            [BF16, BF16, BF16, "", "Scalar", "Scalar", "", "Scalar"],
            ["", "", "", "", "0.", "False", "", "True"],
        ):
            with t.scope(
                "aten::_scaled_dot_product_efficient_attention",
                [q, kv, kv, [], [], [], [], []],
                [BF16, BF16, BF16, "", "Scalar", "Scalar", "Scalar", ""],
                ["", "", "", "", "False", "0.", "False", ""],
            ):
                bshd_q, bshd_kv = [1, s, nh, hd], [1, s, kvh, hd]
                t.leaf(
                    "aten::_efficient_attention_forward",
                    [bshd_q, bshd_kv, bshd_kv, [], [], [], [], [], [], [], [], [], [], []],
                    [BF16, BF16, BF16, "", "", "", "", "", "Scalar", "Scalar", "Scalar", "", "", ""],
                    ["", "", "", "", "", "", "", "", "0.", "0", "False", "", "", ""],
                    kernels=(
                        K(
                            "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
                            205.4,
                            (32, 32, 1),
                            (32, 4, 1),
                            168,
                            42112,
                        ),
                    ),
                )
        with t.scope(
            "aten::scaled_dot_product_attention",
            [q, q, q, [], [], [], [], []],
            [BF16, BF16, BF16, "", "Scalar", "Scalar", "", "Scalar"],
            ["", "", "", "", "0.", "True", "", "False"],
        ):
            t.leaf(
                "aten::_scaled_dot_product_cudnn_attention",
                [q, q, q, [], [], [], [], [], []],
                [BF16, BF16, BF16, "", "Scalar", "Scalar", "Scalar", "Scalar", ""],
                ["", "", "", "", "False", "0.", "True", "False", ""],
                kernels=(
                    K(
                        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x128x128_4x1x1_kernel0_0",
                        58.9,
                        (16, 32, 1),
                        (384, 1, 1),
                        168,
                        135168,
                    ),
                ),
            )
    return t


def graph_replay() -> Trace:
    """A decode step replayed from a CUDA graph: one cudaGraphLaunch, its kernels, no ops; and one eager op."""
    t = Trace("cuda-graph-replay")
    with t.scope("ProfilerStep#12", cat="user_annotation"):
        t.leaf(
            "aten::copy_",
            [[8, 1], [8, 1], []],
            [LONG, LONG, "Scalar"],
            ["", "", "True"],
            kernels=(
                K("Memcpy HtoD (Pinned -> Device)", 1.12, cat="gpu_memcpy", bytes=64, launcher="cudaMemcpyAsync"),
            ),
        )
        with t.scope("## Call CompiledFxGraph fwd ##", cat="user_annotation"):
            t.graph_launch(
                [
                    K("triton_red_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0", 3.1, (8, 1, 1), (512, 1, 1), 28),
                    K("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 11.2, (132, 1, 1), (128, 1, 1), 168, 196608),
                    K(
                        "void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, true, false, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
                        7.8,
                        (1, 8, 32),
                        (128, 1, 1),
                        255,
                        49152,
                    ),
                    K("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 6.4, (132, 1, 1), (128, 1, 1), 168, 196608),
                    K("triton_red_fused_add_mean_mul_pow_rsqrt_1", 2.9, (8, 1, 1), (512, 1, 1), 28),
                    K("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 19.7, (132, 1, 1), (128, 1, 1), 168, 196608),
                    K("triton_poi_fused_mul_silu_2", 2.2, (56, 1, 1), (256, 1, 1), 20),
                    K("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 13.1, (132, 1, 1), (128, 1, 1), 168, 196608),
                ]
            )
    return t


def tp2() -> Trace:
    """Rank 0 of a tensor-parallel pair: a row-parallel projection, its all-reduce over NCCL, a residual add."""
    t = Trace("tp2-allreduce", rank=0)
    b, h = 8, 4096
    with t.scope("ProfilerStep#3", cat="user_annotation"):
        with t.scope("aten::linear", [[b, 1, h // 2], [h, h // 2], []], [BF16, BF16, ""]):
            t.leaf("aten::t", [[h, h // 2]], [BF16])
            with t.scope("aten::matmul", [[b, 1, h // 2], [h // 2, h]], [BF16, BF16]):
                t.leaf(
                    "aten::mm",
                    [[b, h // 2], [h // 2, h]],
                    [BF16, BF16],
                    kernels=(K(GEMM, 6.7, (64, 1, 1), (128, 1, 1), 90, 98304),),
                )
        comm = {
            "Collective name": "allreduce",
            "dtype": "BFloat16",
            "In msg nelems": b * h,
            "Out msg nelems": b * h,
            "Group size": 2,
            "In split size": "[]",
            "Out split size": "[]",
            "Process Group Name": "0",
            "Process Group Description": "default_pg",
            "Process Group Ranks": "[0, 1]",
            "Rank": 0,
            "Global rank start": 0,
            "Global rank stride": 1,
        }
        with (
            t.scope(
                "c10d::allreduce_",
                [[[b, 1, h]], [], [], [], []],
                ["TensorList", "", "", "Scalar", "Scalar"],
                ["", "", "", "False", "-1"],
            ),
            t.scope("record_param_comms", [[[b, 1, h]]], ["TensorList"], [""], extra=comm),
        ):
            t.leaf(
                "nccl:all_reduce",
                [[[b, 1, h]]],
                ["TensorList"],
                [""],
                kernels=(
                    K(
                        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                        18.3,
                        (2, 1, 1),
                        (512, 1, 1),
                        96,
                        0,
                        stream=20,
                        launcher="cudaLaunchKernelExC",
                    ),
                ),
            )
        t.gpu[7] = t.gpu[20]  # the compute stream waits for the all-reduce (a cudaStreamWaitEvent)
        t.leaf(
            "aten::add_",
            [[b, 1, h], [b, 1, h], []],
            [BF16, BF16, "Scalar"],
            ["", "", "1"],
            kernels=(K(EW, 2.1, (16, 1, 1), (128, 1, 1), 20),),
        )
    return t


def triton() -> Trace:
    """torch.compile'd code: a Triton kernel launched with no op around it, one inside a custom op, and an mm."""
    t = Trace("triton-unknown")
    with t.scope("ProfilerStep#1", cat="user_annotation"):
        t.leaf(
            "aten::mm",
            [[128, 1024], [1024, 1024]],
            [BF16, BF16],
            kernels=(K(GEMM, 5.6, (16, 2, 1), (128, 1, 1), 90, 98304),),
        )
        with t.scope("triton_poi_fused_add_mul_0", cat="python_function"):
            t.t += 1.0
            t.launch(K("triton_poi_fused_add_mul_0", 3.3, (512, 1, 1), (256, 1, 1), 24, launcher="cuLaunchKernel"), 0)
        t.leaf(
            "mylib::fused_rope",
            [[1, 128, 32, 128], [128, 64], [128, 64]],
            [BF16, "float", "float"],
            kernels=(K("_rope_fwd_kernel", 4.7, (128, 32, 1), (128, 1, 1), 40, 2048, launcher="cuLaunchKernel"),),
        )
    return t


def main() -> None:
    decode().write(HERE / "decode-eager.json")
    prefill().write(HERE / "prefill-sdpa.json")
    graph_replay().write(HERE / "cuda-graph-replay.json")
    tp2().write(HERE / "tp2-allreduce.json")
    triton().write(HERE / "triton-unknown.json.gz", gz=True)
    for p in sorted(HERE.glob("*.json*")):
        print(f"{p.name}: {p.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
