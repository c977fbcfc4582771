"""Trim a Nsight Compute raw-page CSV export to the columns roofcalc reads, for test data.

    python3 validation/kernels/trim_ncu.py IN.csv OUT.csv [--head N] [--tail N]

Keeps the first N and last N lines before the header (the profiled program's output and
ncu's ==PROF== lines), the header, the units row and every kernel row, with the fixed columns
and the metrics roofcalc.kernelfiles.ncu reads (launch__*, gpu__time_duration.sum,
dram__bytes*.sum, the FLOP counters, occupancy percentages, the device name). Values are
copied unchanged.
"""

import argparse
import csv
import io
import re

KEEP = re.compile(r"^(ID|Process ID|Process Name|Host Name|Kernel Name|Context|Stream|Block Size|Grid Size|Device|CC"
                  r"|launch__.*|gpu__time_duration\.sum|dram__bytes(_read|_write)?\.sum|dram__bytes\.sum\.per_second"
                  r"|sm[sp]*__sass_thread_inst_executed_op_.*\.sum|sm__ops_path_tensor_.*\.sum"
                  r"|sm__maximum_warps_per_active_cycle_pct|sm__warps_active\.avg\.pct_of_peak_sustained_active"
                  r"|sm__throughput\.avg\.pct_of_peak_sustained_elapsed|device__attribute_display_name"
                  r"|device__attribute_multiprocessor_count)$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--head", type=int, default=4)
    ap.add_argument("--tail", type=int, default=4)
    a = ap.parse_args()
    with open(a.src, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID",'))
    pre = lines[:start]
    pre = pre if len(pre) <= a.head + a.tail else pre[:a.head] + pre[len(pre) - a.tail:]
    rows = list(csv.reader(lines[start:]))
    keep = [i for i, name in enumerate(rows[0]) if KEEP.match(name)]
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for r in rows:
        w.writerow([r[i] for i in keep])
    with open(a.dst, "w", encoding="utf-8") as f:
        f.write("\n".join(pre) + ("\n" if pre else "") + out.getvalue())


if __name__ == "__main__":
    main()
