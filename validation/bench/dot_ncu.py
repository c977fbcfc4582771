"""torch.dot over 134,217,728 elements in fp32 and in bf16, four calls each (three warm-up), for
Nsight Compute: how many global loads cuBLAS's dot_kernel issues per element in each dtype
(what sets its bytes in flight per thread).

    ncu --clock-control none -k regex:dot_kernel --metrics ... --csv python3 validation/bench/dot_ncu.py
"""

import torch

N = 134217728
for dt in (torch.float32, torch.bfloat16):
    x = torch.randn(N, device="cuda", dtype=dt)
    y = torch.randn(N, device="cuda", dtype=dt)
    for _ in range(4):
        torch.dot(x, y)
    torch.cuda.synchronize()
    del x, y
