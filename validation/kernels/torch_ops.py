"""A small PyTorch program for Nsight Compute: bf16 matmul 4096^3, softmax, layer_norm.

Run under `ncu --profile-from-start off`: only the three measured iterations (between
cudaProfilerStart and cudaProfilerStop) are profiled, after one warm-up iteration. Prints
JSON with each op's shapes and its compulsory FLOPs and bytes, to compare with what ncu
measured. Part of make_data.sh.
"""

import json

import torch
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    dev = "cuda"
    m = n = k = 4096
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    rows, cols = 8192, 8192
    x = torch.randn(rows, cols, device=dev, dtype=torch.float32)
    ln_rows, ln_cols = 8192, 4096
    x2 = torch.randn(ln_rows, ln_cols, device=dev, dtype=torch.bfloat16)
    w = torch.ones(ln_cols, device=dev, dtype=torch.bfloat16)
    bias = torch.zeros(ln_cols, device=dev, dtype=torch.bfloat16)

    def step():
        c = a @ b
        s = torch.softmax(x, dim=-1)
        y = F.layer_norm(x2, (ln_cols,), w, bias)
        return c, s, y

    step()
    torch.cuda.synchronize()
    iters = 3
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(json.dumps({
        "torch": torch.__version__, "device": torch.cuda.get_device_name(), "iterations": iters,
        "ops": [
            {"op": "matmul", "dtype": "bf16", "m": m, "n": n, "k": k, "flops": 2 * m * n * k,
             "bytes": 2 * (m * k + k * n + m * n)},
            {"op": "softmax", "dtype": "fp32", "rows": rows, "cols": cols, "bytes": 2 * 4 * rows * cols},
            {"op": "layer_norm", "dtype": "bf16", "rows": ln_rows, "cols": ln_cols,
             "bytes": 2 * 2 * ln_rows * ln_cols + 2 * 2 * ln_cols},
        ]}, indent=1))


if __name__ == "__main__":
    main()
