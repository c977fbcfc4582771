#!/usr/bin/env bash
# Recompute every accuracy report from the saved GPU timings with the current code (no GPU).
# Each report is `roofcalc validate FILE --json`, against the registry file of the card and
# against the probe's calibration of it; tests/test_validation.py checks that the committed
# reports are what the code computes.
set -euo pipefail
export LC_ALL=C  # the order of globbed host-rate records, which the reports name
cd "$(dirname "$0")"
report() {  # measurements, hardware name, calibration (or "" for none), output stem
  roofcalc validate "$1" --hw "$2" --json > "$4-registry.json"
  if [ -n "$3" ]; then roofcalc validate "$1" --calibration "$3" --json > "$4-calibrated.json"; fi
}
for card in h100 h200; do
  cal=../probe/$card/calibration.yaml
  for set in ops ops-rerun ops-rand1 ops-rand2 ops-rand3 ops-rand4 ops-rand5 ops-rand6 ops-rand7 ops-rand8 ops-rand9 ops-rand10 ops-rand11 ops-rand12 ops-rand13 ops-rand14 ops-rand15 ops-rand16 ops-softmax17 ops-rand18 ops-smln19 ops-rand20 ops-mix21 ops-rand22 ops-rand23 ops-rand24 ops-rand25 ops-rand26 ops-rand27 ops-rand28 ops-rand29 ops-rand30 ops-gemm31 ops-rand32 ops-rand33 ops-rand34 ops-rand35 ops-wide36 ops-wide37 ops-wide38 ops-wide39 ops-wide40 ops-wide41 ops-wide42 ops-wide43 ops-wide44 ops-wide45 ops-wide46 ops-wide47 ops-wide48 ops-wide49 ops-wide50 ops-wide51 ops-wide52 ops-wide53 ops-wide54 ops-wide55 ops-wide56 ops-wide57 ops-wide58 ops-wide59 ops-wide60 ops-wide61 ops-wide62 ops-wide63 ops-wide64 ops-wide65 ops-wide66 ops-wide67 ops-wide68 ops-wide69 ops-wide70 ops-wide71 ops-wide43-spin ops-wide43-flush ops-skinny1 ops-tall1 ops-tall-rand1 ops-tall-rand2 ops-small-rand1 ops-small-rand2 ops-small16-rand1 ops-small16-rand2 ops-small16-rand3 ops-wide72 ops-wide73 ops-wide74 ops-wide75 ops-small16-rand4 ops-small-rand3 ops-tall-rand3 ops-wide76 ops-wide77 ops-wide78 ops-wide79 ops-small16-rand5 ops-small-rand4 ops-wide80 ops-wide81 ops-wide82 ops-wide83 ops-ln-rand1 ops-wide84 ops-wide85 ops-wide86 ops-wide87 ops-small16-rand6 ops-small-rand5 ops-tall-rand4 ops-wide88 ops-wide89 ops-wide90 ops-wide91 ops-wide92 ops-wide93 ops-wide94 ops-wide95 ops-vec-rand1 ops-wide96 ops-wide97 ops-wide98 ops-wide99 ops-wide100 ops-wide101 ops-wide102 ops-wide103 ops-shallow-rand1 ops-wide104 ops-wide105 ops-wide106 ops-wide107 ops-mid-rand1 ops-wide108 ops-wide109 ops-wide110 ops-wide111 ops-tinyk-rand1 ops-wide112 ops-wide113 ops-wide114 ops-wide115 ops-row-rand2 ops-row-rand3 ops-wide116 ops-wide117 ops-wide118 ops-wide119 ops-row-rand1 ops-col-rand2 ops-wide120 ops-wide121 ops-wide122 ops-wide123 ops-col-rand1 ops-naive-short-rand2 ops-wide124 ops-wide125 ops-wide126 ops-wide127 ops-naive-short-rand1 ops-wide128 ops-wide129 ops-wide130 ops-wide131 ops-flat-rand2 ops-wide132 ops-wide133 ops-wide134 ops-wide135 ops-flat-rand1 ops-wide136 ops-wide137 ops-wide138 ops-wide139 ops-flat-rand3 ops-wide140 ops-wide141 ops-wide142 ops-wide143 ops-wide144 ops-wide145 ops-wide146 ops-wide147 ops-small16-rand7 ops-sdpa-rand1 ops-sdpa-rand2 ops-flash-dev ops-wide58-rerun ops-paths llm llm-extra llm-extra2 llm-holdout llm-holdout2 llm-holdout3 llm-holdout4 llm-holdout5 llm-holdout6 llm-holdout7 llm-holdout8 llm-holdout9 llm-holdout10 llm-holdout11 llm-holdout13 llm-holdout14 llm-bigbatch llm-newmodels llm-longctx llm-bigprefill llm-holdout15 llm-holdout16 llm-grid17a llm-grid17b llm-grid17c llm-holdout18 llm-holdout19 llm-longctx2 llm-holdout21 llm-holdout22; do
    # the random hold-out sets against the registry figures only (they are the probe's anyway)
    case $set in ops-rand*|ops-wide*|ops-softmax*|ops-smln*|ops-mix*|ops-gemm*|ops-paths|ops-skinny*|ops-tall*|ops-ln-rand*|ops-vec-rand*|ops-shallow-rand*|ops-mid-rand*|ops-tinyk-rand*|ops-row-rand*|ops-col-rand*|ops-naive-short-rand*|ops-flat-rand*|ops-sdpa-rand*) c="" ;; *) c=$cal ;; esac
    [ -f "$card/$set.json" ] && report "$card/$set.json" "$card" "$c" "$card/report-$set"
  done
done
# the L2 re-read sweeps (kernels/l2*/README.md)
report h100/kernels/l2/ops-l2.json h100 "" h100/report-ops-l2
report h100/kernels/l2-layernorm/ops-l2ln.json h100 "" h100/report-ops-l2-layernorm
# hold-outs 16 and 17 again: on the same H100 a minute later, and on a fresh H100 (holdout/README-1617.md)
for run in rerun1617:rerun machine2-1617:machine2; do
  for set in ops-rand16 ops-softmax17; do
    report "h100/holdout/${run%%:*}/$set.json" h100 "" "h100/report-$set-${run##*:}"
  done
done
# steps without CUDA graphs against the host's figures measured in the same call
# (host_rate.py before and after: the op floor; from run3 on they time the compiled chains too,
# which the reports describe and, since the nineteenth session, do not use)
hostrate() {  # measurements, hardware name, folder of the host-rate records, output stem
  local rates=()
  for r in "$3"/host-rate*.json; do rates+=(--host-rate "$r"); done
  roofcalc validate "$1" --hw "$2" "${rates[@]}" --json > "$4-hostrate.json"
}
hostrate h100/host/run1/llm-host.json h100 h100/host/run1 h100/report-llm-host-run1
hostrate h100/host/run2/llm-host.json h100 h100/host/run2 h100/report-llm-host-run2
hostrate h100/host/run3/llm-nograph.json h100 h100/host/run3 h100/report-llm-host-run3-nograph
hostrate h100/host/run3/llm-prefill-small.json h100 h100/host/run3 h100/report-llm-host-run3-prefill
hostrate h100/host/run4/llm-nograph-holdout.json h100 h100/host/run4 h100/report-llm-host-run4-nograph
hostrate h100/host/run4/llm-prefill-holdout.json h100 h100/host/run4 h100/report-llm-host-run4-prefill
hostrate h200/host/llm-host.json h200 h200/host h200/report-llm-host
report h100/host/run5/llm-prefill-holdout12.json h100 "" h100/report-llm-prefill-holdout12
hostrate h100/host/run5/llm-prefill-holdout12.json h100 h100/host/run5 h100/report-llm-prefill-holdout12
report h100/host/run6/llm-prefill-small.json h100 "" h100/report-llm-host-run6-prefill
hostrate h100/host/run6/llm-prefill-small.json h100 h100/host/run6 h100/report-llm-host-run6-prefill
# each step without graphs against its own host's speed, timed around it by llm_bench.py
# (host_op_s, from run7 and host7 on); also against the card's and the call's host figures
hostcase() {  # measurements, hardware name, output stem
  roofcalc validate "$1" --hw "$2" --host-per-case --json > "$3-hostcase.json"
}
for set in llm-prefill llm-prefill-compiled; do
  report h100/host/run7/$set.json h100 "" h100/report-llm-host-run7-${set#llm-}
  hostrate h100/host/run7/$set.json h100 h100/host/run7 h100/report-llm-host-run7-${set#llm-}
  hostcase h100/host/run7/$set.json h100 h100/report-llm-host-run7-${set#llm-}
done
report h100x2/host7/tp2-prefill.json h100 "" h100x2/report-llm-host7-tp2-prefill
hostrate h100x2/host7/tp2-prefill.json h100 h100x2/host7 h100x2/report-llm-host7-tp2-prefill
hostcase h100x2/host7/tp2-prefill.json h100 h100x2/report-llm-host7-tp2-prefill
# decode with graphs and prefill without them, on one more H100 (run8/)
report h100/host/run8/llm-decode-grid.json h100 ../probe/h100/calibration.yaml h100/report-llm-host-run8-decode-grid
report h100/host/run8/llm-prefill.json h100 "" h100/report-llm-host-run8-prefill
hostrate h100/host/run8/llm-prefill.json h100 h100/host/run8 h100/report-llm-host-run8-prefill
hostcase h100/host/run8/llm-prefill.json h100 h100/report-llm-host-run8-prefill
# a hold-out of both, on one GPU and at TP=2 of another pair (host8/)
for set in llm-prefill-holdout tp2-prefill-holdout; do
  report h100x2/host8/$set.json h100 "" h100x2/report-llm-host8-$set
  hostrate h100x2/host8/$set.json h100 h100x2/host8 h100x2/report-llm-host8-$set
  hostcase h100x2/host8/$set.json h100 h100x2/report-llm-host8-$set
done
# tensor parallel on two H100s without CUDA graphs (h100x2/host/, host2/)
for set in tp2-prefill-small tp2-nograph; do
  report h100x2/host/$set.json h100 "" h100x2/report-llm-host-$set
  hostrate h100x2/host/$set.json h100 h100x2/host h100x2/report-llm-host-$set
done
report h100x2/host2/tp2-nograph-b.json h100 "" h100x2/report-llm-host2-tp2-nograph-b
for set in tp2-nograph-holdout tp2-prefill-holdout; do
  report h100x2/host4/$set.json h100 "" h100x2/report-llm-host4-$set
  hostrate h100x2/host4/$set.json h100 h100x2/host4 h100x2/report-llm-host4-$set
done
hostrate h100x2/host2/tp2-nograph-b.json h100 h100x2/host2 h100x2/report-llm-host2-tp2-nograph-b
# eager steps without CUDA graphs, paired with the host's rates measured in the same call
# (host/README.md); the H200 call ran the probe first, whose calibration is kept per set
report h100/host/run1/llm-host.json h100 "" h100/report-llm-host-run1
report h100/host/run2/llm-host.json h100 "" h100/report-llm-host-run2
# no CUDA graphs, eager and compiled, on the machine whose host rates set the compiled figures (host/run3/)
report h100/host/run3/llm-nograph.json h100 "" h100/report-llm-host-run3-nograph
report h100/host/run3/llm-prefill-small.json h100 "" h100/report-llm-host-run3-prefill
report h100/host/run4/llm-nograph-holdout.json h100 "" h100/report-llm-host-run4-nograph
report h100/host/run4/llm-prefill-holdout.json h100 "" h100/report-llm-host-run4-prefill
report h200/host/llm-host.json h200 ../probe/h200/llm-host/calibration.yaml h200/report-llm-host
report h200x2/llm_tp2.json h200 ../probe/h200x2/calibration.yaml h200x2/report-llm_tp2
# TP=2 on two H100s (no probe of that machine: registry figures only)
report h100x2/llm_tp2-h100.json h100 "" h100x2/report-llm_tp2-h100
report h100x2/llm_tp2-h100-holdout3.json h100 "" h100x2/report-llm_tp2-h100-holdout3
report h100x2/llm_tp2-h100-holdout4.json h100 "" h100x2/report-llm_tp2-h100-holdout4
report h100x2/llm_tp2-h100-holdout5.json h100 "" h100x2/report-llm_tp2-h100-holdout5
report h100x2/llm_tp2-h100-holdout6.json h100 "" h100x2/report-llm_tp2-h100-holdout6
report h100x2/llm_tp2-h100-longctx.json h100 "" h100x2/report-llm_tp2-h100-longctx
report h100x2/llm_tp2-h100-grid7a.json h100 "" h100x2/report-llm_tp2-h100-grid7a
report h100x2/llm_tp2-h100-grid7b.json h100 "" h100x2/report-llm_tp2-h100-grid7b
report h100x2/llm_tp2-h100-holdout8a.json h100 "" h100x2/report-llm_tp2-h100-holdout8a
report h100x2/llm_tp2-h100-holdout8b.json h100 "" h100x2/report-llm_tp2-h100-holdout8b
report h100x2/llm_tp2-h100-holdout9a.json h100 "" h100x2/report-llm_tp2-h100-holdout9a
report h100x2/llm_tp2-h100-holdout9b.json h100 "" h100x2/report-llm_tp2-h100-holdout9b
report h200x2/llm_tp2-holdout.json h200 ../probe/h200x2/calibration.yaml h200x2/report-llm_tp2-holdout
report h200x2/llm_tp2-holdout2.json h200 ../probe/h200x2/calibration.yaml h200x2/report-llm_tp2-holdout2
# the reference and compiled implementations on steps Python issues, a hold-out on an H200 after
# the registry's host figure of 25342de (host2/: validation/HOLDOUT.md)
for set in llm-decode llm-prefill; do
  report h200/host2/$set.json h200 "" h200/report-llm-host2-${set#llm-}
  hostrate h200/host2/$set.json h200 h200/host2 h200/report-llm-host2-${set#llm-}
  hostcase h200/host2/$set.json h200 h200/report-llm-host2-${set#llm-}
done
# the same implementations, four hold-outs on H200s: host3 and host4 (evaluated with the model as at
# 0108089, spent by 611c158) and host5 (after 611c158: compiled code's host figures as
# fixed multiples of the host's op; host3/-host5/: validation/HOLDOUT.md), and host6 (after
# d9dbd70: the bands of steps the host can pace; evaluated once)
for host in host3 host4 host5 host6; do
  for set in llm-decode llm-prefill; do
    report h200/$host/$set.json h200 "" h200/report-llm-$host-${set#llm-}
    hostrate h200/$host/$set.json h200 h200/$host h200/report-llm-$host-${set#llm-}
    hostcase h200/$host/$set.json h200 h200/report-llm-$host-${set#llm-}
  done
done
# one line per report: median, share in band, outside [0.5, 2]
python3 - <<'PY' > summary.txt
import glob, json
print(f"{'report':48s} {'cases':>5s} {'median':>7s} {'in band':>8s} {'[0.67,1.5]':>10s} {'out[0.5,2]':>10s} {'min /bound':>10s}")
print("(band: ops [0.8, 1.25]; decode [0.85, 1.2]; prefill [0.8, 1.25])")
for p in sorted(glob.glob("*/report-*.json")):
    s = json.load(open(p))["summary"]
    print(f"{p:48s} {s['evaluated']:5d} {s['median_ratio']:7.3f} {s['share_in_band']:8.0%} "
          f"{s['share_in_registry_band']:10.0%} {s['outside_outer']:10d} {s['min_bound_ratio']:10.2f}")
PY
cat summary.txt
# the seed-43 draw's host-paced kinds under the repeated flush and the flush alone, one machine
for p in repeat flush; do
  report "h100/pacing2/ops-wide43-$p.json" h100 "" "h100/pacing2/report-ops-wide43-$p"
done
