"""PyTorch's layer_norm when the row is not a multiple of 4 elements: its two kernels
(RowwiseMomentsCUDAKernel, 512 threads a row; LayerNormForwardCUDAKernel, 256 threads a row)
instead of vectorized_layer_norm_kernel. Run under Nsight Compute for their instructions:

    ncu --csv --page raw --nvtx --nvtx-include "case/" --clock-control none \
        --metrics smsp__inst_executed.sum,gpu__time_duration.sum python3 ln_fallback.py > ln.csv

Each case runs once inside an NVTX range "case", in the order of CASES; a multiple of 4 is
among them, to show the vectorized kernel is taken there.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

CASES = [(2048, c, dt) for dt in (torch.float16, torch.float32) for c in (97, 699, 2171, 2172)]


def main() -> None:
    for rows, cols, dt in CASES:
        x = torch.randn(rows, cols, device="cuda", dtype=dt)
        w = torch.randn(cols, device="cuda", dtype=dt)
        b = torch.randn(cols, device="cuda", dtype=dt)
        F.layer_norm(x, (cols,), w, b)  # warm: outside the ranges
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("case")  # the cases run in CASES order
        F.layer_norm(x, (cols,), w, b)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
