"""All-reduce through NCCL between the GPUs of one node, one process per GPU.

Launched by the probe runner as::

    python -m torch.distributed.run --standalone --nproc-per-node N nccl_bench.py --out FILE [--quick]

Imports only PyTorch and the standard library (the runner's dependencies need not be installed
in the child processes). Every rank runs the same sequence; rank 0 writes one JSON object to
FILE after every message size, so that a run cut short still leaves what it measured.

Per dtype (bf16, fp32) and message size (8 KiB to 1 GiB, powers of 4, and 1 GiB):

- check: every rank fills the buffer with rank + 1; one all-reduce (sum) must leave
  world * (world + 1) / 2 in every element, on every rank;
- eager: after a barrier, batches of back-to-back ``dist.all_reduce`` calls between two CUDA
  events; a sample is (batch time) / (calls in the batch), the figure is the median;
- graph (messages up to 32 MiB): 20 all-reduces captured in one CUDA graph, checked once
  (replayed on rank + 1), then replayed between two events; a sample is (replay time) / 20.

Timed buffers hold zeros (the sum's speed does not depend on the values, and repeated in-place
sums of anything else overflow). The environment is read, never changed: the NVLink multicast
switches (NCCL_NVLS_ENABLE, TORCH_SYMM_MEM_DISABLE_MULTICAST, NVSHMEM_DISABLE_NVLS) are recorded
as found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

ENV_VARS = (
    "NCCL_NVLS_ENABLE",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS",
    "NCCL_P2P_DISABLE",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "CUDA_VISIBLE_DEVICES",
)
GRAPH_MAX_BYTES = 32 << 20
GRAPH_CALLS = 20


def message_sizes(quick: bool) -> list[int]:
    if quick:
        return [8 << 10, 1 << 20, 64 << 20]
    sizes, s = [], 8 << 10
    while s < (1 << 30):
        sizes.append(s)
        s *= 4
    return [*sizes, 1 << 30]


def _write(path: str, doc: dict[str, Any]) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    os.replace(tmp, path)


def _events(torch: Any) -> tuple[Any, Any]:
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def _one_size(
    torch: Any, dist: Any, dev: Any, dt: Any, nbytes: int, esize: int, rank: int, world: int, quick: bool
) -> dict[str, Any]:
    n = nbytes // esize
    x = torch.empty(n, device=dev, dtype=dt)
    want = world * (world + 1) / 2
    x.fill_(rank + 1)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    ok = bool((x == want).all().item())
    x.zero_()
    per = 20 if nbytes <= (8 << 20) else max(2, (256 << 20) // nbytes)
    rounds = 5 if quick else (9 if nbytes <= (8 << 20) else 5)
    for _ in range(3):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    dist.barrier()
    eager = []
    for _ in range(rounds):
        a, b = _events(torch)
        a.record()
        for _ in range(per):
            dist.all_reduce(x)
        b.record()
        b.synchronize()
        eager.append(a.elapsed_time(b) * 1e-3 / per)
    row: dict[str, Any] = {
        "bytes": nbytes,
        "elements": n,
        "verified": ok,
        "eager_samples_s": eager,
        "eager_calls_per_sample": per,
    }
    if nbytes <= GRAPH_MAX_BYTES:
        try:
            row.update(_graph(torch, dist, x, rank, world, rounds))
        except Exception as e:  # recorded; the eager figures stand
            row["graph_error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    del x
    torch.cuda.empty_cache()
    return row


def _graph(torch: Any, dist: Any, x: Any, rank: int, world: int, rounds: int) -> dict[str, Any]:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            dist.all_reduce(x)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    # thread-local capture: PyTorch's NCCL watchdog thread keeps querying events meanwhile
    with torch.cuda.graph(g, capture_error_mode="thread_local"):
        for _ in range(GRAPH_CALLS):
            dist.all_reduce(x)
    # check: from rank + 1, GRAPH_CALLS in-place sums give S * world ** (GRAPH_CALLS - 1), S = world (world + 1) / 2
    x.fill_(rank + 1)
    g.replay()
    torch.cuda.synchronize()
    want = world * (world + 1) / 2 * float(world) ** (GRAPH_CALLS - 1)
    got = x.double()
    ok = bool(((got - want).abs() <= 5e-2 * want).all().item())
    x.zero_()
    g.replay()
    torch.cuda.synchronize()
    dist.barrier()
    samples = []
    for _ in range(rounds):
        a, b = _events(torch)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b) * 1e-3 / GRAPH_CALLS)
    del g
    return {"graph_samples_s": samples, "graph_calls_per_sample": GRAPH_CALLS, "graph_verified": ok}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)

    import torch  # type: ignore[import-not-found]
    import torch.distributed as dist  # type: ignore[import-not-found]

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    try:
        dist.init_process_group("nccl", device_id=dev)
    except TypeError:  # a PyTorch without device_id
        dist.init_process_group("nccl")
    nccl = getattr(torch.cuda, "nccl", None)
    try:
        nccl_version = ".".join(str(v) for v in nccl.version()) if nccl is not None else None
    except Exception:
        nccl_version = None
    doc: dict[str, Any] = {
        "world": world,
        "torch": torch.__version__,
        "nccl": nccl_version,
        "device": torch.cuda.get_device_name(dev),
        "env": {k: os.environ.get(k) for k in ENV_VARS},
        "rows": [],
        "complete": False,
        "started": time.time(),
    }
    for name, dt, esize in (("bf16", torch.bfloat16, 2), ("fp32", torch.float32, 4)):
        if args.quick and name == "fp32":
            continue
        for nbytes in message_sizes(args.quick):
            row = _one_size(torch, dist, dev, dt, nbytes, esize, rank, world, args.quick)
            row["dtype"] = name
            doc["rows"].append(row)
            if rank == 0:
                _write(args.out, doc)
    dist.barrier()
    doc["complete"] = True
    doc["wall_s"] = time.time() - doc.pop("started")
    if rank == 0:
        _write(args.out, doc)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
