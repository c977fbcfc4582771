"""The expected-time engine: how long the usual implementation of an op really takes.

Beside the speed-of-light bound (roofline.py), an op declares the kernels its usual
implementation launches (``kernels:`` in its op file). Each kernel's time is modelled
from mechanisms, every constant a hardware-file figure or a probe measurement:

* floors: a single op timed as a benchmark times it (events right after an L2 flush) pays
  the flushed-op floor once, each further kernel at least a small kernel queued on a busy
  stream, and the write-back of the dirty lines the flush left; kernels of a CUDA graph pay
  the graph floor each and no less than a small PyTorch kernel's node; an eager step takes
  the longer of the GPU's work and the host's issue of its ops;
* power: GEMMs in steps timed back to back run at the board's power-limited tensor rate;
* parallelism: the grid over the SMs (blocks per SM from the occupancy solver); with few
  blocks in flight, memory time is set by per-SM bandwidth, not the card's;
* GEMM: the tile shape a library would choose (tile and wave quantization), split-K for
  few tiles and a long k, a library kernel's fixed cost, the element-at-a-time path for
  leading dimensions that are not a multiple of 16 bytes, FP32 on CUDA cores;
* implementation traffic: the bytes the kernels really move, re-reads served by L2 when
  the data in flight fits there;
* achievable fractions of the peaks (measured by the probe).

One module per mechanism: records (the Kernel input and the result records), card (the
hardware figures the model reads), stream (memory-bound kernels), gemm (library GEMMs),
attention (FlashAttention-2), collective (NCCL all-reduce and all-gather) and compose (kernels
into an op: launch floors and the host's issue). This package re-exports their names.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from .attention import FLASH_BLOCK_Q as FLASH_BLOCK_Q
from .attention import FLASH_COMBINE_INSTRUCTIONS as FLASH_COMBINE_INSTRUCTIONS
from .attention import FLASH_DECODE_BLOCK_M as FLASH_DECODE_BLOCK_M
from .attention import FLASH_FP32_PER_SCORE as FLASH_FP32_PER_SCORE
from .attention import FLASH_SFU_PER_SCORE as FLASH_SFU_PER_SCORE
from .attention import FLASH_SMEM_BYTES_PER_SCORE_PER_DIM as FLASH_SMEM_BYTES_PER_SCORE_PER_DIM
from .attention import FLASH_WARP_FIXED_INSTRUCTIONS as FLASH_WARP_FIXED_INSTRUCTIONS
from .attention import SMEM_BYTES_PER_CLK as SMEM_BYTES_PER_CLK
from .attention import _busiest_sm as _busiest_sm
from .attention import _causal_block_scores as _causal_block_scores
from .attention import _flash as _flash
from .attention import _flash_block_n as _flash_block_n
from .attention import _flash_splits as _flash_splits
from .card import COMPILED_ENTRY_OPS as COMPILED_ENTRY_OPS
from .card import COMPILED_KERNEL_OPS as COMPILED_KERNEL_OPS
from .card import DEPENDENT_ISSUE_CLK as DEPENDENT_ISSUE_CLK
from .card import Card as Card
from .card import _card as _card
from .card import _cuda_rate as _cuda_rate
from .card import _power_ratio as _power_ratio
from .card import _unpaired as _unpaired
from .card import card as card
from .card import mma_rate as mma_rate
from .card import tensor_rate as tensor_rate
from .collective import COLLECTIVES as COLLECTIVES
from .collective import _collective as _collective
from .compose import _KERNEL_MEMO as _KERNEL_MEMO
from .compose import _KERNEL_MEMO_SIZE as _KERNEL_MEMO_SIZE
from .compose import COLLECTIVE_STEP_HOST_OPS as COLLECTIVE_STEP_HOST_OPS
from .compose import COMPILED_STEP_HOST_FACTOR as COMPILED_STEP_HOST_FACTOR
from .compose import EAGER_STEP_HOST_FACTOR as EAGER_STEP_HOST_FACTOR
from .compose import HOST_PACED_COMPILED_NOTE as HOST_PACED_COMPILED_NOTE
from .compose import HOST_PACED_NOTE as HOST_PACED_NOTE
from .compose import HOST_PACED_TP_NOTE as HOST_PACED_TP_NOTE
from .compose import _dirty_writeback as _dirty_writeback
from .compose import _kernel_time as _kernel_time
from .compose import _traffic as _traffic
from .compose import compose as compose
from .compose import kernel_time as kernel_time
from .gemm import GEMM_PIPELINE as GEMM_PIPELINE
from .gemm import GEMM_SN_K_LIMIT as GEMM_SN_K_LIMIT
from .gemm import GEMM_SN_WIDTHS as GEMM_SN_WIDTHS
from .gemm import GEMM_TILES as GEMM_TILES
from .gemm import LINEAR_MAX_CTAS as LINEAR_MAX_CTAS
from .gemm import LINEAR_ROWS as LINEAR_ROWS
from .gemm import LINEAR_SPLIT_K as LINEAR_SPLIT_K
from .gemm import LINEAR_TILE_M as LINEAR_TILE_M
from .gemm import LINEAR_TILE_N as LINEAR_TILE_N
from .gemm import LINEAR_X_ROWS as LINEAR_X_ROWS
from .gemm import MIN_K_PER_SPLIT as MIN_K_PER_SPLIT
from .gemm import SERIAL_SPLIT_K_MIN as SERIAL_SPLIT_K_MIN
from .gemm import SERIAL_SPLIT_MAX_WORK as SERIAL_SPLIT_MAX_WORK
from .gemm import SERIAL_SPLIT_VARIANTS as SERIAL_SPLIT_VARIANTS
from .gemm import SKINNY_ROWS as SKINNY_ROWS
from .gemm import SN_BLOCK_COLS as SN_BLOCK_COLS
from .gemm import SN_BLOCK_ROWS as SN_BLOCK_ROWS
from .gemm import _alignment as _alignment
from .gemm import _fixed_cost as _fixed_cost
from .gemm import _gemm as _gemm
from .gemm import _gemm_serial_split as _gemm_serial_split
from .gemm import _gemm_sn as _gemm_sn
from .gemm import _kernel_floor as _kernel_floor
from .gemm import _serial_split_variant as _serial_split_variant
from .gemm import cublas_runs_gemm_sn as cublas_runs_gemm_sn
from .gemm import cublas_runs_serial_split as cublas_runs_serial_split
from .gemm import gemm_aligned as gemm_aligned
from .gemm import gemm_floor_residue as gemm_floor_residue
from .gemm import gemm_path as gemm_path
from .gemm import gemv_unaligned as gemv_unaligned
from .gemm import ld_alignment as ld_alignment
from .records import Expected as Expected
from .records import Kernel as Kernel
from .records import KernelEstimate as KernelEstimate
from .records import Launch as Launch
from .records import Term as Term
from .stream import _occupancy as _occupancy
from .stream import _prior_read as _prior_read
from .stream import _prior_time as _prior_time
from .stream import _stream as _stream
from .stream import mixed_bandwidth as mixed_bandwidth
from .stream import reread_miss as reread_miss

__all__ = ["Card", "Expected", "Kernel", "KernelEstimate", "Term", "card", "compose", "gemm_aligned", "kernel_time"]
