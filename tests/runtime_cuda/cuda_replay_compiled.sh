#!/bin/sh
# cuda_replay_compiled.sh HARNESS GRAPH[:BATCH]... — compiles each graph at 50 % and 30 %
# of its in-core peak (out-of-core plans: swaps, homes on the host), verifies each plan
# and replays them all on the cuda device through HARNESS (test_cuda_device_fake plans):
# arena and VA mode, reads synchronised and reads left to the stream, and on the fake
# driver also with copies run when issued. $SFC is the sfc binary; SFCRT_CUDA_LIBRARY
# picks the driver (the fake here; unset on a GPU machine: tools/gpu-check).
set -eu
: "${SFC:?SFC must point at the sfc binary}"
harness=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for spec in "$@"; do
  graph=${spec%%:*}
  batch=
  [ "$spec" = "$graph" ] || batch="--batch ${spec#*:}"
  # the in-core peak and the floor (the least any schedule needs) from one --budget 1 run
  # shellcheck disable=SC2086 # batch is empty or two words
  line=$("$SFC" compile "$graph" $batch --budget 1 --json -o "$tmp/floor.plan" 2>/dev/null |
    head -n 1) || true
  peak=$(echo "$line" | sed -n 's/.*"in_core_peak_bytes":\([0-9]*\).*/\1/p')
  floor=$(echo "$line" | sed -n 's/.*"min_budget_bytes":\([0-9]*\).*/\1/p')
  [ -n "$peak" ] && [ -n "$floor" ] || { echo "$graph: no peak or floor in: $line" >&2; exit 1; }
  for pct in 50 30; do
    budget=$((peak * pct / 100))
    [ "$budget" -ge $((floor + floor / 32)) ] || budget=$((floor + floor / 32))
    [ "$budget" -lt "$peak" ] && [ "$budget" != "${last:-}" ] || continue
    last=$budget
    n=$((n + 1))
    plan=$tmp/$n.plan
    # shellcheck disable=SC2086
    "$SFC" compile "$graph" $batch --budget "$budget" -o "$plan" -q
    "$SFC" verify "$plan" >/dev/null
    echo "$spec: $budget bytes ($pct % of $peak, floor $floor): $plan"
  done
done
[ "$n" -gt 0 ] || { echo "no graph has a budget below its in-core peak" >&2; exit 1; }
# shellcheck disable=SC2046 # plan paths without spaces (mktemp)
"$harness" plans $(ls "$tmp"/[0-9]*.plan)
