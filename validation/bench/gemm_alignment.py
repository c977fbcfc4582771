"""Which cuBLAS kernel a bf16 GEMM gets by the alignment of its leading dimensions, and its rate.

For each shape: the kernels of one torch.matmul under the profiler, then the median of 10 calls
between CUDA events (no flush; the operands stay where the previous call left them). Prints one
line per shape. Run on the GPU machine, from the repository root:

    python3 validation/bench/gemm_alignment.py > gemm-alignment.txt
"""

import torch
from torch.profiler import profile, ProfilerActivity
for (m,n,k) in [(8192,8192,8190),(8192,8190,8192),(8192,8192,8188),(8192,8192,8191),(2656,1602,2128),(3696,6792,1716)]:
    a=torch.randn(m,k,device='cuda',dtype=torch.bfloat16); b=torch.randn(k,n,device='cuda',dtype=torch.bfloat16)
    torch.matmul(a,b); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        torch.matmul(a,b); torch.cuda.synchronize()
    ks=[(e.name[:110], e.device_time) for e in p.events() if e.device_type.name=='CUDA']
    s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True)
    ts=[]
    for _ in range(10):
        s.record(); torch.matmul(a,b); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e)*1e-3)
    t=sorted(ts)[5]
    print(f"{m}x{n}x{k} {t*1e6:.1f}us {2*m*n*k/t/1e12:.0f} TFLOP/s", ks, flush=True)
