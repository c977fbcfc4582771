"""The hardware figures the expected-time model reads, resolved once per hardware (or
calibration) file into a Card: bandwidths, latencies, launch and host floors, clocks, the
achievable fractions of the tensor-core, mma.sync and CUDA-core peaks (tensor_rate, mma_rate,
_cuda_rate), the power-limited tensor rate, and the stand-ins where a figure is missing (a
compiled function's host costs in proportion to the op floor; a launch floor taken as the
launch overhead). Also the issue latency of dependent warp instructions, common to the kernels."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DomainError
from ..hardware import Expected as Figures
from ..hardware import Hardware, bf16_tensor_fraction
from .choice import ChoiceMap

# Clocks between two dependent instructions of one warp: "most arithmetic instructions have a
# latency of 4 clock cycles" on compute capability 7.x and later (CUDA C++ Programming Guide,
# arithmetic instructions). A warp that works alone on its share cannot go faster than that.
DEPENDENT_ISSUE_CLK = 4

# A torch.compile'd function costs its host more per kernel than an eager op: Inductor's
# generated Python calls each Triton kernel's launcher or cuBLAS, after the function's entry
# (Dynamo's guards, the AOT and Inductor wrappers). In hot loops on fourteen machines
# (roofcalc/probe/torch_ops.py torch_compiled_floor via validation/bench/host_rate.py, in
# validation/expected/h100/host/run3-run8/ and h100x2/host/, host2/-host8/) a kernel cost
# 1.05-2.48x the same call's hot-loop op (a machine's records averaged) and an entry 5.5-10.4x;
# the medians over the machines, 1.79x and 6.81x, are the figures (fitted on those H100 hosts,
# transferred to the other cards), always as multiples of the host's op floor: a machine's own
# chains are not read (since the nineteenth session; before, --host-rate and the probe's
# calibration put a machine's chain fit in their place). The chains' cost did not follow that of
# compiled steps from one machine to the next, nor from one minute to the next: the two records
# host_rate.py took before and after one call's steps fitted 3.25x and 1.13x the op a kernel
# (h100/host/run7), 2.33x and 3.00x (h200/host3). Three H200 hold-outs (h200/host2, host3, host4),
# with the op of the machine that ran them (host_rate.py's; their -hostrate reports): compiled
# decode from Python had 4 of 8, 6 of 12 and 9 of 12 steps within [0.67, 1.5] (0.57-1.70) with that
# machine's chains (2.87x, 2.62x and 1.47x its op a kernel) and 7 of 8, 11 of 12 and 12 of 12 with
# these multiples of the same op (8 of 8, 11 of 12 and 12 of 12 with the hot loop timed around each
# step, -hostcase, which already read these multiples); compiled prefill went the other way, 28 to
# 25 of 36 within [0.8, 1.25] (host2's two 2 x 256 prompts back to 1.56 and 1.38): 47 to 55 of 68 in
# all. On the committed H100 sets the chains did a little better (126 compiled steps, mean
# |log(measured/expected)| 0.148 with the chains, 0.155 with the multiples; 91 and 88 within their
# band). COMPILED_STEP_HOST_FACTOR, fitted on run3 against its own chains, still centres the host-paced
# compiled steps with these multiples: pooled medians 1.02 with each step's loop (-hostcase) and 1.06
# with the card's figures (-registry), host3 and host4 apart. Where chains and steps were timed in one process
# (validation/traces/h200/compiled-dev1, validation/expected/compiled_anatomy_report.py), per-case
# medians read 0.81-1.22 with these multiples of each step's hot loop, 0.99-1.52 with the chains'
# cost in ops of that loop and 0.90-1.85 with the process's chains and loop in seconds: its loop,
# timed beside the models, read slower than host_rate.py's own in the same call, so that set does
# not tell the rules apart by itself.
COMPILED_KERNEL_OPS = 1.79
COMPILED_ENTRY_OPS = 6.81


@dataclass(frozen=True)
class Card:
    """The figures the model reads, resolved once from a hardware (or calibration) file."""

    sms: int
    dram_bw: float  # achievable streaming read bandwidth (B/s)
    copy_bw: float  # achievable when a kernel reads and writes as much (B/s)
    skinny_bw: float  # what a skinny GEMM streams its weights at (B/s)
    unaligned_gemv_bw: float  # what cuBLAS's gemv kernels stream a 16-bit matrix at (B/s; else skinny_bw)
    gemm_floor: float  # a library GEMM kernel's fixed cost over an empty kernel (s)
    gemm_floor_extra: tuple[tuple[str, float], ...]  # what a pre-Hopper kernel adds, per path (s)
    queued_floor: float  # a small PyTorch kernel queued on a busy stream (s)
    torch_node: float  # a small PyTorch kernel as a CUDA-graph node (s)
    l2_total: float  # the whole L2 (bytes)
    writeback: float  # cost of evicting a dirty L2 line, as a fraction of reading one
    l2_bw: float  # achievable L2 bandwidth for re-reads (B/s)
    l2_bytes: float
    per_sm_bw: float  # one SM's saturation bandwidth (B/s)
    latency: float  # DRAM load latency (s): dependent round trips
    loaded_latency: float  # Little's-law latency of streaming loads (s)
    l2_latency: float  # L2 hit latency (s)
    event_floor: float
    stream_floor: float
    graph_floor: float
    torch_floor: float
    # the host's op time is the pace of an implementation's own Python, from its host time per layer
    # (roofcalc.impl.host_layer), not a hot loop of one op
    torch_floor_from_layer: bool
    # the hot loop's op time (torch_op_floor_s), at which native host work is paid (a library's
    # plan: host_ops_native) whatever the implementation's Python pace
    native_floor: float
    compiled_kernel: float  # the host's cost per kernel launched from a compiled function (s)
    compiled_entry: float  # the host's cost per entry into a compiled function (s)
    clock_hz: float  # SM clock under load
    sfu_per_clk: float  # special-function results per clock per SM
    fp32_per_clk: float  # FP32 lanes per SM (FMA results per clock)
    issue_per_clk: float  # warp instructions an SM issues per clock (one per scheduler)
    sn_k_step: float  # cuBLAS gemmSN: seconds per step of k of each block (0: not modelled)
    serial_split_step: tuple[tuple[str, float], ...]  # cuBLAS serial split-K: seconds per slice, per tile
    # cuBLAS's measured kernel choices for FP32 products with few columns (None: not measured),
    # and per family and tile (simt_32x128, ...) its fixed cost (s) and padded FLOP/s an SM
    choice_map: ChoiceMap | None
    # whether its planes read by their measured times (the one-row and one-column GEMV kernels, and
    # the shallow products of large outputs) were measured on this card: their times hold the
    # measuring card's memory, so a transferred map's are not read
    timed_planes: bool
    choice_floor: tuple[tuple[str, float], ...]
    choice_rate: tuple[tuple[str, float], ...]
    # per split-K reduction (cublaslt, xmma): its fixed cost and time per slice (s)
    reduce_floor: tuple[tuple[str, float], ...]
    reduce_slice: tuple[tuple[str, float], ...]
    # cuBLAS's tiling of F.linear with few rows, as seen on a Hopper part (wgmma); applied where
    # one SM's streaming rate is measured, since its tiles can leave SMs idle
    linear_tiles: bool
    # cuBLAS's narrow-tile F.linear kernels: fixed cost and seconds per 64-deep step of a tile's
    # k-loop (0: not measured for the part; the tile search stands in)
    linear_floor: float
    linear_k_step: float
    boost_hz: float  # the SM clock of issue-bound (non-tensor) work
    # tensor rate of GEMMs in steps timed back to back (the board at its power limit) over
    # the short-loop rate tensor_fraction gives; 1 where the part has no figure
    power_ratio: float
    calibrated: bool
    missing: tuple[str, ...]
    # floors the part does not state, taken as its launch_overhead_s (the bound's figure)
    standins: tuple[str, ...] = ()
    # figures given without the one they go with (not used): "given without absent: effect"
    unpaired: tuple[str, ...] = ()
    launch_overhead: float = 0.0


_last_card: tuple[Hardware, Card] | None = None


def card(hw: Hardware) -> Card:
    """The figures of ``hw`` (a frozen model): the last one asked for is kept, since a report
    or a sweep asks for the same hardware's figures once per case."""
    global _last_card
    last = _last_card
    if last is not None and last[0] is hw:
        return last[1]
    c = _card(hw)
    _last_card = (hw, c)
    return c


@dataclass
class _Reader:
    """Reads the figures of a file's ``expected`` section, keeping the names of those it lacks."""

    e: Figures
    launch: float  # the part's launch_overhead_s (0: none)
    missing: list[str] = field(default_factory=list)
    standins: list[str] = field(default_factory=list)

    def fig(self, name: str, needed: bool = True) -> float:
        """A figure of the file, 0 where it gives none (named in the notes where the model needs it)."""
        f = getattr(self.e, name)
        if f is None:
            if needed:
                self.missing.append(name)
            return 0.0
        return float(f.value)

    def floor(self, name: str) -> float:
        """A launch floor the part states, else the launch overhead its bound charges per
        launch: without it the expected time of a small op would fall below the bound."""
        f = getattr(self.e, name)
        if f is not None:
            return float(f.value)
        if self.launch:
            self.standins.append(name)
            return self.launch
        self.missing.append(name)
        return 0.0


def _choice_map(hw: Hardware) -> ChoiceMap | None:
    """The part's (or calibration's) measured cuBLAS choices. A calibration that borrows its part's
    map, and a card with other host figures, hold the same entries: one parsed map serves them all."""
    cmap = hw.expected.gemm_choice_map
    if cmap is None:
        return None
    found = _MAPS.get(cmap.value)
    if found is None:
        if len(_MAPS) >= 8:
            _MAPS.clear()
        # its value is check_block's (ChoiceMapFigure's validator): every entry well formed, so the
        # map reads only the dtypes a query asks for
        found = _MAPS[cmap.value] = ChoiceMap.from_entries(cmap.entries, checked=True)
    return found


_MAPS: dict[str, ChoiceMap] = {}  # parsed choice maps by their entries


def _card(hw: Hardware) -> Card:
    e = hw.expected
    launch = float(hw.launch_overhead_s.value) if hw.launch_overhead_s else 0.0
    read = _Reader(e, launch)
    fig, floor, missing, standins = read.fig, read.floor, read.missing, read.standins
    sms = hw.sm_value("sm_count")
    if not sms:
        raise DomainError(f"{hw.id}: no sm_count, which the expected-time model needs")
    pace = float(e.impl_host_op_s.value) if e.impl_host_op_s is not None else 0.0
    hot = fig("torch_op_floor_s", False)
    pace_ratio = pace / hot if pace and hot else 1.0
    read_frac = fig("dram_read_fraction") or 1.0
    dram_bw = hw.bandwidth * read_frac
    copy_bw = hw.bandwidth * (fig("dram_copy_fraction") or read_frac)
    l2 = float(hw.l2_bytes.value) if hw.l2_bytes else 0.0
    l2 /= float(e.l2_partitions.value) if e.l2_partitions else 1.0  # what re-reads can count on
    l2_bw = fig("l2_bandwidth_bytes_per_s") or 2.0 * dram_bw
    per_sm = fig("per_sm_bandwidth_bytes_per_s") or dram_bw / sms
    clock = fig("sustained_sm_clock_mhz") or (float(hw.clocks.boost_mhz.value) if hw.clocks.boost_mhz else 0.0)
    fp32 = hw.cuda_core_flops_per_s.get("fp32") or hw.peak_flops_per_s.get("fp32")
    boost = float(hw.clocks.boost_mhz.value) * 1e6 if hw.clocks.boost_mhz else 0.0
    skinny_bw = dram_bw * (fig("skinny_gemm_bandwidth_fraction") or 1.0)
    # optional: without it, such GEMVs stream like the other skinny products
    gemv_frac = float(e.unaligned_gemv_bandwidth_fraction.value) if e.unaligned_gemv_bandwidth_fraction else 0.0
    lanes = float(fp32.value) / (2 * sms * boost) if fp32 is not None and boost else 128.0
    power = _power_ratio(hw)
    if power is None and e.tensor_fraction:  # a part that states the GEMM rates should state this too
        missing.append("power_limited_tensor_fraction")
    return Card(
        sms=sms,
        dram_bw=dram_bw,
        copy_bw=copy_bw,
        skinny_bw=skinny_bw,
        unaligned_gemv_bw=dram_bw * gemv_frac if gemv_frac else skinny_bw,
        gemm_floor=fig("gemm_kernel_floor_s"),
        gemm_floor_extra=tuple((p, float(f.value)) for p, f in sorted(e.gemm_kernel_floor_extra_s.items())),
        queued_floor=fig("queued_kernel_floor_s"),
        torch_node=fig("torch_graph_node_s"),
        l2_total=float(hw.l2_bytes.value) if hw.l2_bytes else 0.0,
        writeback=fig("l2_dirty_writeback_fraction"),
        l2_bw=l2_bw,
        l2_bytes=l2,
        per_sm_bw=per_sm,
        latency=fig("dram_latency_s"),
        loaded_latency=fig("loaded_latency_s") or fig("dram_latency_s"),
        l2_latency=fig("l2_latency_s"),
        event_floor=(float(e.flushed_op_floor_s.value) if e.flushed_op_floor_s else 0.0) or floor("event_floor_s"),
        stream_floor=floor("stream_floor_s"),
        graph_floor=fig("graph_floor_s"),
        # the host's cost per op (no GPU figure stands in for it): an implementation's own pace
        # where given (--host-layer), else the hot loop's
        torch_floor=pace or fig("torch_op_floor_s"),
        torch_floor_from_layer=bool(pace),
        native_floor=fig("torch_op_floor_s", False),
        # a compiled function's launches and entry, scaled to an implementation's own pace where
        # given, else in proportion to the op floor (same host)
        compiled_kernel=fig("compiled_kernel_host_s", False) * pace_ratio or COMPILED_KERNEL_OPS * (pace or hot),
        compiled_entry=fig("compiled_entry_host_s", False) * pace_ratio or COMPILED_ENTRY_OPS * (pace or hot),
        clock_hz=clock * 1e6,
        sfu_per_clk=fig("sfu_ops_per_clk_per_sm"),
        fp32_per_clk=lanes,
        issue_per_clk=float(hw.sm_value("sub_partitions") or 4),
        sn_k_step=fig("gemm_sn_k_step_s", False),
        serial_split_step=tuple((t, float(f.value)) for t, f in sorted(e.gemm_serial_split_step_s.items())),
        choice_map=_choice_map(hw),
        timed_planes=hw.expected.gemm_choice_map is not None and hw.expected.gemm_choice_map.planes_readable,
        choice_floor=tuple((t, float(f.value)) for t, f in sorted(e.gemm_choice_floor_s.items())),
        choice_rate=tuple((t, float(f.value)) for t, f in sorted(e.gemm_choice_flops_per_sm.items())),
        reduce_floor=tuple((t, float(f.value)) for t, f in sorted(e.gemm_reduce_floor_s.items())),
        reduce_slice=tuple((t, float(f.value)) for t, f in sorted(e.gemm_reduce_slice_s.items())),
        linear_tiles=hw.cc is not None and hw.cc[0] == 9 and bool(fig("per_sm_bandwidth_bytes_per_s")),
        linear_floor=fig("linear_gemm_floor_s", False),
        linear_k_step=fig("linear_gemm_k_step_s", False),
        boost_hz=boost or clock * 1e6,
        power_ratio=power if power is not None else 1.0,
        calibrated=hw.calibration is not None,
        missing=tuple(dict.fromkeys(missing)),  # each figure named once
        standins=tuple(standins),
        unpaired=_unpaired(e),
        launch_overhead=launch,
    )


def _unpaired(e: Figures) -> tuple[str, ...]:
    """The narrow-tile figures go together (a fixed cost without its k-step is no model of the
    kernel): one given without the other is named, and neither is used."""
    pair = ("linear_gemm_floor_s", "linear_gemm_k_step_s")
    given = [name for name in pair if getattr(e, name) is not None]
    if len(given) != 1:
        return ()
    absent = pair[1 - pair.index(given[0])]
    return (f"{given[0]} without {absent}: the two go together, so F.linear keeps the general tile search",)


def _power_ratio(hw: Hardware) -> float | None:
    """power_limited_tensor_fraction over tensor_fraction.bf16 (fp16 where bf16 is not given);
    None where the file lacks either (the model then keeps the short-run rate). A calibration
    file takes its part's ratio whenever it is loaded, by any route (hardware._completed)."""
    plf, tf = hw.expected.power_limited_tensor_fraction, bf16_tensor_fraction(hw)
    if plf is None or tf is None:
        return None
    return min(1.0, float(plf.value) / tf)


def tensor_rate(hw: Hardware, dtype: str, aligned: bool = True, word: bool = False) -> float:
    """What a library GEMM achieves on the tensor cores (FP32: CUDA cores), FLOP/s. ``word``:
    not aligned to 16 bytes, but to 4 (its figure, else the unaligned one)."""
    e = hw.expected
    if dtype in ("fp32", "fp64"):
        frac = float(e.cuda_core_gemm_fraction.value) if e.cuda_core_gemm_fraction else 1.0
        return hw.peak(dtype) * frac
    word = word and not aligned
    table = e.word_aligned_tensor_fraction if word else e.tensor_fraction if aligned else e.unaligned_tensor_fraction
    f = table.get(dtype) or table.get("bf16" if dtype == "fp16" else "fp16" if dtype == "bf16" else dtype)
    if f is None and not aligned:  # word-aligned falls back to unaligned, unaligned to aligned
        return tensor_rate(hw, dtype, not word)
    return hw.peak(dtype) * (float(f.value) if f is not None else 1.0)


def mma_rate(hw: Hardware, dtype: str) -> float:
    """Tensor rate through warp-level mma.sync (FlashAttention-2's instruction), FLOP/s."""
    f = hw.expected.mma_sync_fraction.get(dtype) or hw.expected.mma_sync_fraction.get("bf16")
    return hw.peak(dtype) * (float(f.value) if f is not None else 1.0)


def _cuda_rate(hw: Hardware, dtype: str) -> float:
    fig = hw.cuda_core_flops_per_s.get(dtype) or hw.cuda_core_flops_per_s.get("fp32")
    return float(fig.value) if fig is not None else hw.peak("fp32")
