"""Two small Triton kernels compiled into $TRITON_CACHE_DIR, and Triton's own view of them.

Prints JSON: for each kernel its name, num_warps, the dynamic shared memory the launcher
passes (metadata "shared"), and the registers and spills the driver reports once loaded
(CompiledKernel.n_regs / n_spills), with the cache folder of each. Part of make_data.sh.
"""

import json
import os

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak)
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))


def view(compiled, label):
    meta = getattr(compiled, "metadata", None)
    get = (lambda k: getattr(meta, k, None) if not isinstance(meta, dict) else meta.get(k)) if meta else (lambda k: None)
    out = {"label": label, "name": getattr(compiled, "name", None) or get("name"),
           "num_warps": get("num_warps"), "shared": get("shared"), "num_stages": get("num_stages"),
           "n_regs": getattr(compiled, "n_regs", None), "n_spills": getattr(compiled, "n_spills", None),
           "hash": getattr(compiled, "hash", None) or get("hash")}
    target = get("target")
    out["target"] = {"backend": getattr(target, "backend", None), "arch": getattr(target, "arch", None)} \
        if target is not None and not isinstance(target, dict) else target
    return out


def main():
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    k1 = add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4)
    m = 1024
    a = torch.randn(m, m, device="cuda", dtype=torch.float16)
    b = torch.randn(m, m, device="cuda", dtype=torch.float16)
    c = torch.empty(m, m, device="cuda", dtype=torch.float16)
    k2 = matmul_kernel[(m // 128, m // 128)](a, b, c, m, m, m, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                             c.stride(0), c.stride(1), BM=128, BN=128, BK=64, num_warps=8,
                                             num_stages=3)
    torch.cuda.synchronize()
    assert torch.allclose(out, x + y)
    print(json.dumps({"triton": triton.__version__, "torch": torch.__version__,
                      "device": torch.cuda.get_device_name(), "cache": os.environ.get("TRITON_CACHE_DIR"),
                      "kernels": [view(k1, "add_kernel"), view(k2, "matmul_kernel")]}, indent=1, default=str))


if __name__ == "__main__":
    main()
