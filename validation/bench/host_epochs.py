"""Are the slow stretches of an eager decode the host's or the GPU's? (h200/host2: the reference
implementation's eager decode of mistral-7b at batch 15 over 14,720 tokens ran about 17 ms a step for
a while, then about 32 ms for a second or more, then 17 again.)

One step after another, each synchronized: the host's time to issue the step (perf_counter around
the Python call), the GPU's time from its first kernel to its last (CUDA events around it), and the
wall time to the end of the step; every 25 steps (--hot-every) the probe's hot loop of one op
(x.add_(1), 3 x 300) and a fixed piece of plain Python (py_loop: dicts, tuples and calls, no torch).
Beside it, every 0.2 s: the CPUs' time as /proc/stat counts it (user, system, idle, steal: a KVM
guest's vCPU that the hypervisor ran elsewhere), and the GPU's SM clock, memory clock, power and
throttle reasons as nvidia-smi reads them (queries only; nothing is set).

    python3 host_epochs.py --out host-epochs.json [--model mistral-7b --batch 15 --context 14720 --steps 1500
        --hot-every 25 --phase decode --engine eager]

--phase prefill takes --context as the prompt's length; --engine compiled runs llm_bench.py's
torch.compile of the same functions (its default backend, inductor), compiled before the steps.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import llm_bench as lb  # noqa: E402


def proc_stat() -> list[int]:
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def py_loop() -> float:
    """Seconds for a fixed piece of plain Python (the median of 3): 2,000 small dicts built, read
    and summed through a function call each, a footprint of a few hundred kB."""
    def f(d: dict) -> int:
        return d["a"] + d["b"][1]

    out = []
    for _ in range(3):
        t0 = time.perf_counter()
        rows = [{"a": i, "b": (i, i + 1), "c": str(i)} for i in range(2000)]
        total = sum(f(r) for r in rows)
        out.append(time.perf_counter() - t0)
        assert total > 0
    return sorted(out)[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", default="mistral-7b")
    ap.add_argument("--batch", type=int, default=15)
    ap.add_argument("--context", type=int, default=14720)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--hot-every", type=int, default=25)
    ap.add_argument("--phase", choices=("decode", "prefill"), default="decode")
    ap.add_argument("--engine", choices=("eager", "compiled"), default="eager")
    a = ap.parse_args()
    d = lb.Dist("cuda")
    cfg = lb.MODELS[a.model]
    model = lb.Model(a.model, cfg, d)
    if a.engine == "compiled":
        lb.configure_compile()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # the backend it records is the one the steps run
        step, info, _ = lb.make_step(model, a.phase, a.engine, a.batch, a.context, "inductor")
    samples: list[dict] = []
    stop = threading.Event()
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,"
         "clocks_throttle_reasons.active", "--format=csv,noheader,nounits", "-lms", "200"],
        stdout=subprocess.PIPE, text=True)
    smi_lines: list[tuple[float, str]] = []

    def read_smi() -> None:
        assert smi.stdout is not None
        for line in smi.stdout:
            smi_lines.append((time.time(), line.strip()))

    def sample_stat() -> None:
        while not stop.is_set():
            samples.append({"t": time.time(), "stat": proc_stat(), "load": os.getloadavg()[0]})
            stop.wait(0.2)

    threads = [threading.Thread(target=read_smi, daemon=True), threading.Thread(target=sample_stat, daemon=True)]
    for t in threads:
        t.start()
    steps = []
    hot = []
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch.no_grad():
        for _ in range(5):  # (a compiled step compiles in the first)
            step()
        d.sync()
        for i in range(a.steps):
            if i % a.hot_every == 0:
                hot.append({"t": time.time(), "i": i, "op_s": lb.host_op_s(3, 300), "py_s": py_loop()})
            ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            d.sync()
            w0 = time.time()
            t0 = time.perf_counter()
            ev0.record()
            step()
            t1 = time.perf_counter()
            ev1.record()
            d.sync()
            t2 = time.perf_counter()
            steps.append({"t": w0, "issue_s": t1 - t0, "wall_s": t2 - t0, "gpu_s": ev0.elapsed_time(ev1) / 1e3})
    stop.set()
    smi.terminate()
    time.sleep(0.3)
    doc = {"kind": "host-epochs", "date": lb.utc_now(), "command": "python3 host_epochs.py " + " ".join(sys.argv[1:]),
           "device": torch.cuda.get_device_name(), "driver": lb.driver_version(), "torch": torch.__version__,
           "cpus": os.cpu_count(), "model": a.model, "batch": a.batch, "context": a.context, "sdpa": "flash",
           "phase": a.phase, "engine": a.engine,
           "info": info, "steps": steps, "hot_loop": hot, "proc_stat": samples,
           "proc_stat_fields": ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"],
           "nvidia_smi": smi_lines}
    with open(a.out, "w") as f:
        json.dump(doc, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
