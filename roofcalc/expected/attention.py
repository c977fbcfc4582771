"""FlashAttention-2 forward (PyTorch's flash backend): query blocks over the SMs, causal block
work and the busiest SM, split-KV for decode and its combine kernel. Reads the mma.sync rate,
the special-function and FP32 rates per clock, the SM clocks, per-SM bandwidth, DRAM and L2
latency and L2 bandwidth, and the blocks per SM the occupancy solver finds."""

from __future__ import annotations

import heapq
import math
from typing import Literal

from ..hardware import Hardware
from .card import DEPENDENT_ISSUE_CLK, Card, mma_rate, tensor_rate
from .records import Kernel, KernelEstimate
from .stream import _occupancy

# FlashAttention-2's softmax, per score (flash_fwd_kernel, softmax.h): one exp2 on the
# special-function unit, and on the FP32 pipes three operations (scale-and-subtract FFMA, the
# row max, the row sum) and half a conversion to 16 bits (two scores per pack). Nsight Compute
# puts the SFU (xu) pipe at 26-33% busy at head_dim 64 and 16-20% at 128
# (validation/expected/h100/kernels/flash-pipes-ncu.csv), what one SFU operation per score
# gives at the kernel's 0.204 and 0.344 clocks per score; the conversion is not an SFU one.
FLASH_SFU_PER_SCORE = 1.0
FLASH_FP32_PER_SCORE = 3.5
# Each of a block's 4 warps reads the whole K and V tile from shared memory (ldmatrix) for its
# own query rows: 4 x 2 x head_dim x 2 bytes per 128 scores, head_dim / 8 bytes per score, at
# 32 banks x 4 bytes per clock per SM (CUDA C++ Programming Guide, shared memory). The split-KV
# kernel's 64-row blocks are charged the same: twice as much per score moved its committed
# decode sweep (validation/expected/*/kernels/decode-split.json) from 0.99-1.11 of the model
# to 0.80-1.06 on the H200, so its reads are not what bounds it.
FLASH_SMEM_BYTES_PER_SCORE_PER_DIM = 1 / 8
SMEM_BYTES_PER_CLK = 128
FLASH_BLOCK_Q = 128  # query rows per block (forward kernel, head_dim <= 128)
FLASH_DECODE_BLOCK_M = 64
# Warp instructions of an FA-2 block outside its K/V tiles (prologue: indices, the Q tile;
# epilogue: the output and log-sum-exp stores), per (kernel, head_dim): Nsight Compute's
# instructions per warp less the part that grows with the tiles, from blocks of 1 to 64 tiles
# (validation/expected/h100/kernels/flash-ncu.csv; per tile 1,135 (split kernel, head_dim 128),
# 1,192 and 1,671 (forward kernel, 128 and 64)). The split kernel at head_dim 64 was measured
# with one tile per block only (2,860 in all), so it takes head_dim 128's figure.
FLASH_WARP_FIXED_INSTRUCTIONS = {("fwd", 64): 1044, ("fwd", 128): 1234, ("split", 64): 835, ("split", 128): 835}
# FA-2's combine kernel, per warp: a fixed part (log-sum-exp reduction, scales, output store)
# and a part per split; the same at head_dim 64 and 128 (619 to 971 instructions for 4 to 32
# splits, validation/expected/h100/kernels/flash-ncu.csv and decode-ncu.csv)
FLASH_COMBINE_INSTRUCTIONS = (570, 12.2)
COMBINE_WARPS = 4  # flash_fwd_splitkv_combine_kernel's 128 threads a block


def _flash_splits(blocks: int, slots: int, n_blocks: int, max_splits: int = 128) -> int:
    """FlashAttention-2's num_splits_heuristic (flash_api.cpp), with PyTorch's slots = 2 x SMs."""
    if blocks >= 0.8 * slots:
        return 1
    max_splits = min(max_splits, slots, n_blocks)
    eff: list[float] = []
    best = 0.0

    def eligible(s: int) -> bool:
        return s == 1 or math.ceil(n_blocks / s) != math.ceil(n_blocks / (s - 1))

    for s in range(1, max_splits + 1):
        if not eligible(s):
            eff.append(0.0)
            continue
        w = blocks * s / slots
        e = w / math.ceil(w)
        best = max(best, e)
        eff.append(e)
    for s in range(1, max_splits + 1):
        if eligible(s) and eff[s - 1] >= 0.85 * best:
            return s
    return 1


def _flash(hw: Hardware, c: Card, k: Kernel, dtype_bytes: float) -> list[KernelEstimate]:
    """FlashAttention-2 forward (PyTorch's flash backend): mma.sync, 128-query blocks, one
    block per (batch, head, query block); the softmax of each score runs between the two
    GEMMs. With one query (decode) the query heads of a KV head are packed into one block
    and the keys are split over blocks to fill the SMs (split-KV, then a combine kernel); a
    prompt whose 64-row blocks would not fill the SMs is split the same way, causal or not (a
    causal one's units then hold the keys its rows see in each split)."""
    bps = _occupancy(hw, k)
    t_score, t_alone = _flash_score_time(c, k, mma_rate(hw, k.dtype) / c.sms)
    kv_heads = max(1, min(k.heads, k.kv_heads or k.heads))
    decode = k.seq == 1
    mblocks, blocks, split, block_m = _flash_grid(c, k, bps, kv_heads)
    units = blocks * split
    active = min(c.sms, units)
    slots = bps * c.sms
    block_n = _flash_block_n(k.head_dim, split > 1)
    _, longest, block_sum, offset = _flash_scores(k, kv_heads, mblocks, block_m, blocks, units, split, block_n)
    if k.causal and not decode and split > 1:
        per_unit = _causal_split_scores(k, mblocks, split)
        longest = float(max(per_unit))
        per_sm_scores = _busiest_sm(per_unit, units, longest, c.sms, bps, k.batch * k.heads)
        t_comp = max(per_sm_scores * t_score, longest * t_alone)
    elif k.causal and not decode:
        heads_all = k.batch * k.heads
        if mblocks * heads_all > 16 * c.sms * bps:  # many waves: the SMs even out (no per-block list)
            per_sm_scores = float(block_sum) * heads_all / c.sms + longest
        else:
            kv_tiles, off_tiles = _whole_tiles(k.kv_seq, block_n), _whole_tiles(offset, block_n)
            per_block = [FLASH_BLOCK_Q * min(kv_tiles, off_tiles + (i + 1) * FLASH_BLOCK_Q) for i in range(mblocks)]
            per_sm_scores = _busiest_sm(per_block, units, longest, c.sms, bps, heads_all)
        # however the blocks fall, the longest one's own walk is a floor
        t_comp = max(per_sm_scores * t_score, longest * t_alone)
    else:
        # equal blocks: the busiest SM runs ceil(units / SMs) of them, bps at a time sharing its
        # pipes, the ones left over in its last round fewer, or alone
        full, rest = divmod(math.ceil(units / c.sms), bps)
        t_comp = longest * (full * max(bps * t_score, t_alone) + (max(rest * t_score, t_alone) if rest else 0.0))
    # Each block's prologue and epilogue (index arithmetic, the Q tile, the output and
    # log-sum-exp stores) run with each of its 4 warps on its own scheduler and little else to
    # issue: one dependent instruction per DEPENDENT_ISSUE_CLK. Blocks resident together
    # overlap theirs; blocks doing few tiles each (decode, short prompts) are dominated by it.
    fixed_part = ""
    if c.boost_hz:
        fixed = FLASH_WARP_FIXED_INSTRUCTIONS[("split" if split > 1 else "fwd", 64 if k.head_dim <= 64 else 128)]
        blocks_sm = math.ceil(units / c.sms)
        resident = max(1, min(bps, blocks_sm))
        t_fixed = math.ceil(blocks_sm / resident) * fixed * DEPENDENT_ISSUE_CLK / c.boost_hz
        t_comp += t_fixed
        fixed_part = f"; {fixed:,} instructions per warp around the tiles, one dependent step at a time"
    bw = min(c.dram_bw, active * c.per_sm_bw)
    t_mem = k.dram_bytes / bw
    # a block issues the load of its next K/V tile before it computes on the current one
    # (cp.async, flash_fwd_kernel.h), so only its first load and its last tile's compute stay
    # exposed, and the SM's other resident blocks cover part of that: 1/(bps x tiles) of the
    # shorter part
    tiles = max(1, math.ceil(math.ceil(k.kv_seq / block_n) / split))
    t = max(t_comp, t_mem) + min(t_comp, t_mem) / (bps * tiles) + 2 * c.latency
    bound: Literal["memory", "compute", "latency"] = "compute" if t_comp >= t_mem else "memory"
    why = (
        f"{blocks:,} blocks" + (f" x {split} key splits" if split > 1 else "") + f", {bps}/SM on {active} SMs; "
        f"mma.sync at {mma_rate(hw, k.dtype) / 1e12:,.0f} TFLOP/s + softmax (exp on the SFU) per score" + fixed_part
    )
    out = [
        KernelEstimate(
            name=k.name,
            model="flash",
            seconds=t,
            grid=units,
            blocks_per_sm=bps,
            waves=units / slots,
            bound=bound,
            reason=why,
        )
    ]
    if split > 1:
        out.append(_flash_combine(c, k, split))
    return out


# cuDNN's SM90 flash forward (cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_*, what
# PyTorch's SDPA runs by default for a 16-bit prompt on H100 and H200, and what transformers'
# prefill runs): a persistent kernel, one block of 384 threads per SM (a producer warpgroup
# loading K and V tiles, two consumer warpgroups of 64 query rows each, 227 KB of shared memory at
# head size 128; grid min(132, tiles): validation/expected/h100/kernels/cudnn1/dev.json). Each
# tile is 128 query rows of one (batch, head) against all the keys it sees, in tiles of 128; a
# block takes the next tile, in order, as it frees (list scheduling: a causal grid of many short
# heads balances, one of few long heads does not). Head sizes up to 64 run the 64 kernel, up to 128
# the 128 kernel (96 took what 128 took).
CUDNN_BLOCK = 128
# The two consumer warpgroups take turns on the tensor cores, so one's softmax runs under the
# other's GEMMs: a score costs the longer of its WGMMA work and its softmax. Read off the
# development grid's asymptotes (non-causal, a tile or more per SM): at head size 128 the tensor
# work binds, 95-99 ps per score per SM, 0.70 of the H100's 16-bit peak per SM, 0.905 of what a
# large library GEMM reaches on it (tensor_rate: the probe's tensor_fraction, which a calibration
# restates against its own peak); at 64 the softmax binds, 66-71 ps, 0.106 clocks at the
# sustained SM clock: one exp on the SFU (0.0625) and 5.5 FP32 operations on the 128 lanes
# (FA-2's source counts 3.5; cuDNN's mask and rescaling add the rest). Fitted on
# validation/expected/h100/kernels/cudnn1/dev.json.
CUDNN_GEMM_FRACTION = 0.905
CUDNN_FP32_PER_SCORE = 5.5
# What the kernel costs besides its scores: once per launch (3.0 us) and once per tile (0.5 us:
# loading Q, storing O and its log-sum-exp, the K/V pipeline's fill), fitted on the same grid's
# small shapes (88 of its 89 shapes then land within [0.8, 1.25], 73 within 10%).
CUDNN_FIXED_S = 3.0e-6
CUDNN_TILE_S = 0.5e-6
# beyond this many tiles the busiest block is the tiles' mean plus the longest (the list
# scheduling bound, within one tile of what simulating every tile gives)
CUDNN_SIMULATED_TILES = 8192


def _cudnn_flash(hw: Hardware, c: Card, k: Kernel, dtype_bytes: float) -> list[KernelEstimate]:
    """SDPA's cuDNN flash forward on an SM90 card (see CUDNN_BLOCK). Elsewhere FlashAttention-2's
    model: on other cards (where SDPA runs FA-2), and standing in for what this model does not
    cover (one query row, 32-bit data, which SDPA gives its memory-efficient kernel, heads over
    128, a part without clock or SFU figures). Causal is SDPA's: top-left aligned, query row i
    sees keys 0..i whatever the key count."""
    if hw.cc != (9, 0) or k.seq <= 1 or dtype_bytes != 2 or k.head_dim > 128 or not c.clock_hz or not c.sfu_per_clk:
        return _flash(hw, c, k, dtype_bytes)
    padded = 64 if k.head_dim <= 64 else 128
    rate_sm = CUDNN_GEMM_FRACTION * tensor_rate(hw, k.dtype) / c.sms
    tensor = 4 * padded / rate_sm
    softmax = (1 / c.sfu_per_clk + CUDNN_FP32_PER_SCORE / c.fp32_per_clk) / c.clock_hz
    t_score = max(tensor, softmax)
    m_tiles = math.ceil(k.seq / CUDNN_BLOCK)
    kv_whole = _whole_tiles(k.kv_seq, CUDNN_BLOCK)
    tiles = k.batch * k.heads * m_tiles
    blocks = min(c.sms, tiles)
    if tiles <= CUDNN_SIMULATED_TILES:
        keys = [
            _whole_tiles(min(k.kv_seq, (i + 1) * CUDNN_BLOCK), CUDNN_BLOCK) if k.causal else kv_whole
            for i in range(m_tiles)
        ]
        per_tile = [CUDNN_TILE_S + CUDNN_BLOCK * n * t_score for n in keys]
        free = [0.0] * blocks
        for _ in range(k.batch * k.heads):
            for t in per_tile:
                heapq.heapreplace(free, free[0] + t)
        t_comp = max(free)
    else:
        # one head's scores in closed form (the sequence can be any length); CUDNN_BLOCK is
        # FLASH_BLOCK_Q's 128 rows, the blocks _causal_block_scores counts
        if k.causal:
            head, longest = _causal_block_scores(m_tiles, 0, kv_whole)
        else:
            head, longest = m_tiles * CUDNN_BLOCK * kv_whole, CUDNN_BLOCK * kv_whole
        t_comp = (
            (m_tiles * CUDNN_TILE_S + head * t_score) * k.batch * k.heads / blocks + CUDNN_TILE_S + longest * t_score
        )
    t_mem = k.dram_bytes / min(c.dram_bw, blocks * c.per_sm_bw)
    t = CUDNN_FIXED_S + max(t_comp, t_mem)
    binds = "WGMMA" if tensor >= softmax else "the softmax (exp on the SFU, FP32 on the lanes)"
    why = (
        f"cuDNN's SM90 flash forward: {tiles:,} tiles of {CUDNN_BLOCK} query rows taken in order by {blocks} "
        f"resident blocks (one per SM); per score the longer of WGMMA at "
        f"{rate_sm * c.sms / 1e12:,.0f} TFLOP/s and its softmax: {binds}"
    )
    return [
        KernelEstimate(
            name=k.name,
            model="cudnn_flash",
            seconds=t,
            grid=blocks,
            blocks_per_sm=1,
            waves=tiles / blocks,
            bound="compute" if t_comp >= t_mem else "memory",
            reason=why,
        )
    ]


def _flash_score_time(c: Card, k: Kernel, rate_sm: float) -> tuple[float, float]:
    """Seconds per score of a block sharing its SM with another (its phases overlapping the
    other's) and of a block alone on its SM (its phases one after another), at ``rate_sm``
    mma.sync FLOP/s per SM."""
    t_score = t_alone = 4 * k.head_dim / rate_sm
    if c.clock_hz and c.sfu_per_clk:
        # the tensor work, then the softmax or the shared-memory reads, whichever is longer:
        # the two warps of a scheduler overlap one's ldmatrix with the other's exponentials, not
        # with the mma.sync chain (Nsight Compute's 0.204 and 0.344 clocks per score at head_dim
        # 64 and 128 against 0.19 and 0.33 so modelled at its clock; summing all three gives
        # 0.25 and 0.42)
        soft = FLASH_SFU_PER_SCORE / c.sfu_per_clk + FLASH_FP32_PER_SCORE / c.fp32_per_clk
        smem = k.head_dim * FLASH_SMEM_BYTES_PER_SCORE_PER_DIM / SMEM_BYTES_PER_CLK
        t_score += max(soft, smem) / c.clock_hz
        # A block alone on its SM has one warp per scheduler and no other block's warps to
        # issue while its own wait: its tile runs its phases one after another (the sum, 0.25
        # and 0.42 clocks per score). The 128 lone blocks of a 1,024-token prefill took 0.65-0.68
        # of what two side by side took (validation/expected/h100/kernels/flash-rounds.json),
        # not the half that sharing the SM's pipes would give.
        t_alone += (soft + smem) / c.clock_hz
    return t_score, t_alone


def _flash_grid(c: Card, k: Kernel, bps: int, kv_heads: int) -> tuple[int, int, int, int]:
    """The query blocks per (batch, head), the blocks, the key splits and the query rows per
    block of the forward (or, for decode, split-KV) kernel."""
    if k.seq == 1:
        group = k.heads // kv_heads
        split_blocks = k.batch * kv_heads * math.ceil(group / FLASH_DECODE_BLOCK_M)
        block_n = _flash_block_n(k.head_dim, split=True)
        split = _flash_splits(split_blocks, bps * c.sms, math.ceil(k.kv_seq / block_n))
        # unsplit, FA-2 runs its forward kernel, whose blocks hold 128 query rows
        # (flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>, kernel-shapes.json)
        block_m = FLASH_DECODE_BLOCK_M if split > 1 else FLASH_BLOCK_Q
        mblocks = math.ceil(group / block_m)
        return mblocks, k.batch * kv_heads * mblocks, split, block_m
    # FA-2's mha_fwd splits the keys for any query length when its 64-row blocks would not fill
    # the SMs (set_params_splitkv: num_m_blocks = ceil(seq / 64) in the heuristic), causal or not:
    # the heuristic does not look at the mask (flash_api.cpp)
    m_split = math.ceil(k.seq / FLASH_DECODE_BLOCK_M)
    n_blocks = math.ceil(k.kv_seq / _flash_block_n(k.head_dim, split=True))
    split = _flash_splits(k.batch * k.heads * m_split, bps * c.sms, n_blocks)
    if split > 1:
        return m_split, k.batch * k.heads * m_split, split, FLASH_DECODE_BLOCK_M
    mblocks = math.ceil(k.seq / FLASH_BLOCK_Q)
    return mblocks, k.batch * k.heads * mblocks, 1, FLASH_BLOCK_Q


def _whole_tiles(keys: int, block_n: int) -> int:
    """Keys rounded up to whole K/V tiles: a block's MMAs and softmax run on tiles of block_n keys
    whatever part of the last one is masked off (Flash_fwd_kernel_traits fix the tile shape)."""
    return math.ceil(keys / block_n) * block_n


def _flash_scores(
    k: Kernel, kv_heads: int, mblocks: int, block_m: int, blocks: int, units: int, split: int, block_n: int
) -> tuple[float, float, int, int]:
    """The scores all blocks compute and those of the longest block; for a causal prefill also
    the scores of one head's blocks and the keys before the first query (else 0 and 0). Every
    block computes whole tiles: its block_m rows (padded) by whole K/V tiles of block_n keys
    (a split's share of the tiles), as the kernel's fixed tile shapes do: a 2-token prompt at head
    size 64 computes 128 x 128 scores per block (validation/expected/h100/kernels/flash-dev)."""
    block_sum = offset = 0
    per_unit_keys = math.ceil(math.ceil(k.kv_seq / block_n) / split) * block_n
    if k.seq == 1:
        # the query heads of a KV head fill (and are padded to) the block's rows
        longest = float(block_m * per_unit_keys)
        scores = longest * units
    elif k.causal:
        offset = k.kv_seq - k.seq
        # causal blocks compute their diagonal tile in full; with whole tiles of keys, block i
        # walks up to min(kv_seq, offset + (i + 1) x 128) rounded up to block_n (which divides 128)
        block_sum, longest_block = _causal_block_scores(
            mblocks, _whole_tiles(offset, block_n), _whole_tiles(k.kv_seq, block_n)
        )
        scores = float(block_sum) * k.batch * k.heads
        longest = float(longest_block)
    else:
        longest = float(block_m * per_unit_keys)  # one block's rows over its share of the keys
        scores = longest * units
    return scores, longest, block_sum, offset


def _flash_combine(c: Card, k: Kernel, split: int) -> KernelEstimate:
    """FA-2's combine kernel (flash_fwd_splitkv_combine_kernel) after a split-KV decode: blocks
    of 4 query rows (head_dim 128; 8 for 64) load every split's log-sum-exp, reduce them, then
    walk the splits one after another: each split's partial output is loaded into the same
    registers and accumulated before the next load can issue, one L2 round trip per split (the
    split kernel has just written them). Its few blocks leave each warp alone on its scheduler:
    the instructions issue one dependent step at a time, beside the round trips (durations in
    validation/expected/h100/kernels/decode-split.json)."""
    part = k.batch * k.heads * k.seq * split * (k.head_dim + 1) * 4
    rows = 4 if k.head_dim % 128 == 0 else 8 if k.head_dim % 64 == 0 else 16
    blocks = math.ceil(k.batch * k.heads * k.seq / rows)
    l2_trip = c.l2_latency or c.latency
    t_chain = (split + 1) * l2_trip + c.latency
    if c.boost_hz:
        fixed, per_split = FLASH_COMBINE_INSTRUCTIONS
        per_warp = fixed + per_split * split
        # one warp's instructions one dependent step at a time; or, with many blocks (a split
        # prompt's rows: 2,048 blocks for 8,192 rows), all its warps' instructions at the SMs'
        # issue rate (4 warps a block): the combine kernels of kernels/flash-dev took 3.8 us for
        # 512 blocks to 11.1 us for 2,752
        t_issue = blocks * COMBINE_WARPS * per_warp / (c.sms * c.issue_per_clk)
        t_chain += max(per_warp * DEPENDENT_ISSUE_CLK, t_issue) / c.boost_hz
    return KernelEstimate(
        name=f"{k.name} combine",
        model="stream",
        seconds=max(t_chain, part / c.l2_bw + c.latency),
        grid=blocks,
        blocks_per_sm=None,
        waves=0.0,
        bound="latency",
        reason=f"combines the {split} partial outputs per head, one L2 round trip per split",
        issued=False,
    )


def _flash_block_n(head_dim: int, split: bool) -> int:
    """Keys per K/V tile (n in Flash_fwd_kernel_traits<d, m, n, 4>, PyTorch's sm90 choices, read
    off the kernel names in validation/expected/h100/kernels/flash-ncu.csv): the split-KV
    kernel's (m = 64) or the forward kernel's (m = 128)."""
    if split:
        return 256 if head_dim <= 64 else 128 if head_dim <= 128 else 64
    return 128 if head_dim <= 64 else 64


def _causal_block_scores(mblocks: int, offset: int, kv_seq: int) -> tuple[int, int]:
    """Sum and largest of the scores a causal query block computes, block i covering keys up to
    min(kv_seq, offset + (i + 1) * FLASH_BLOCK_Q), FLASH_BLOCK_Q rows each: closed form, so the
    cost does not grow with the sequence (the list of blocks was 1.7 GB at 2^32 tokens)."""
    b = FLASH_BLOCK_Q
    # blocks before the clip: offset + (i + 1) * b < kv_seq, i.e. i + 1 <= (kv_seq - offset - 1) // b
    n_free = max(0, min(mblocks, (kv_seq - offset - 1) // b)) if kv_seq > offset else 0
    ramp = b * (n_free * offset + b * n_free * (n_free + 1) // 2)
    clipped = (mblocks - n_free) * b * kv_seq
    longest = b * min(kv_seq, offset + mblocks * b) if mblocks else 0
    return ramp + clipped, longest


def _causal_split_scores(k: Kernel, mblocks: int, split: int) -> list[int]:
    """The scores of each (query block, key split) unit of one head of a causal split-KV
    forward: 64-row query block i sees the keys up to min(kv_seq, offset + (i + 1) * 64), whole
    tiles of the split kernel's block_n; split j walks its share of the key tiles (ceil(tiles /
    split) each, flash_fwd_kernel.h's n_block range) up to the block's last visible tile."""
    block_n = _flash_block_n(k.head_dim, split=True)
    offset = k.kv_seq - k.seq
    tiles = math.ceil(k.kv_seq / block_n)
    per_split = math.ceil(tiles / split)
    out = []
    for i in range(mblocks):
        visible = math.ceil(min(k.kv_seq, offset + (i + 1) * FLASH_DECODE_BLOCK_M) / block_n)
        for j in range(split):
            lo, hi = j * per_split, min((j + 1) * per_split, visible)
            out.append(FLASH_DECODE_BLOCK_M * block_n * max(0, hi - lo))
    return out


def _busiest_sm(per_mblock: list[int] | None, units: int, longest: float, sms: int, bps: int, heads: int) -> float:
    """The work (in scores) of the busiest SM. The block scheduler fills each SM's slots in
    launch order (block j to SM j mod SMs, bps deep), then gives each further block to the
    SM that frees first; the resident blocks of an SM share its pipes."""
    import heapq

    if per_mblock is None:
        # equal blocks: the ones left over after the first sms x bps go one each to the SMs
        # that free first, so no SM does more than ceil(units / sms) of them
        # (validation/expected/h100/kernels/flash-rounds.json: 320 blocks cost 1.55x what 256 do)
        return math.ceil(units / sms) * longest
    if len(per_mblock) * heads > 16 * sms * bps:
        # many waves: the dynamic fill evens the SMs out; the busiest is about the average
        # plus one longest block
        return sum(per_mblock) * heads / sms + max(per_mblock)
    # FlashAttention-2 launches the query blocks of each head longest first
    order = list(reversed(per_mblock)) * heads
    loads = [0.0] * sms
    first = min(len(order), sms * bps)
    for j in range(first):
        loads[j % sms] += order[j]
    heap = [(load, i) for i, load in enumerate(loads)]
    heapq.heapify(heap)
    for w in order[first:]:
        load, i = heap[0]
        heapq.heapreplace(heap, (load + w, i))
    return max(load for load, _ in heap)
