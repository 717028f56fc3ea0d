#!/bin/sh
# cuda_replay_compiled.sh HARNESS GRAPH[:BATCH][+paged]... — compiles each graph at 50 % and
# 30 % of its in-core peak (out-of-core plans: swaps, homes on the host), and for a +paged one
# with a paged arena (--arena paged, 64 KiB pages) at the lower of those budgets too,
# verifies each plan and replays them all on the cuda device through HARNESS (test_cuda_device_fake plans):
# arena, VA and paged mode, reads synchronised and reads left to the stream, and on the fake
# driver also with copies run when issued. $SFC is the sfc binary; SFCRT_CUDA_LIBRARY
# picks the driver (the fake here; unset on a GPU machine: tools/gpu-check). SFC_JOBS
# graphs are compiled at once (default 1; gpu-check passes its --jobs: compiling the
# eight graphs one by one took longer than replaying them on an H100).
set -eu
: "${SFC:?SFC must point at the sfc binary}"
harness=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs=${SFC_JOBS:-1}
case $jobs in '' | *[!0-9]* | 0) echo "SFC_JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac

# one graph: its plans $tmp/<i>-<pct>.plan, its lines in $tmp/<i>.out; $tmp/<i>.ok when done
plan_graph() (
  i=$1 spec=$2
  paged=
  case $spec in *+paged) spec=${spec%+paged} paged=1 ;; esac
  graph=${spec%%:*}
  batch=
  [ "$spec" = "$graph" ] || batch="--batch ${spec#*:}"
  # the in-core peak and the floor (the least any schedule needs) from one --budget 1 run
  # shellcheck disable=SC2086 # batch is empty or two words
  line=$("$SFC" compile "$graph" $batch --budget 1 --json -o "$tmp/floor-$i.plan" 2>/dev/null |
    head -n 1) || true
  peak=$(echo "$line" | sed -n 's/.*"in_core_peak_bytes":\([0-9]*\).*/\1/p')
  floor=$(echo "$line" | sed -n 's/.*"min_budget_bytes":\([0-9]*\).*/\1/p')
  [ -n "$peak" ] && [ -n "$floor" ] || { echo "$graph: no peak or floor in: $line" >&2; exit 1; }
  last=
  for pct in 50 30; do
    budget=$((peak * pct / 100))
    [ "$budget" -ge $((floor + floor / 32)) ] || budget=$((floor + floor / 32))
    [ "$budget" -lt "$peak" ] && [ "$budget" != "$last" ] || continue
    last=$budget
    plan=$tmp/$i-$pct.plan
    # shellcheck disable=SC2086
    "$SFC" compile "$graph" $batch --budget "$budget" -o "$plan" -q
    "$SFC" verify "$plan" >/dev/null
    echo "$spec: $budget bytes ($pct % of $peak, floor $floor): $plan"
  done
  # and a paged arena (plan format 1.7) at the last budget: its pool is the page peak
  # (exit 1: its pages do not fit that budget — a tiny graph in 64 KiB pages — skipped)
  if [ -n "$paged" ] && [ -n "$last" ]; then
    plan=$tmp/$i-30-paged.plan
    rc=0
    # shellcheck disable=SC2086
    "$SFC" compile "$graph" $batch --budget "$last" --arena paged --page 64KiB -o "$plan" -q \
      2>"$tmp/$i-paged.err" || rc=$?
    if [ "$rc" = 0 ]; then
      "$SFC" verify "$plan" >/dev/null
      echo "$spec: $last bytes, paged: $plan"
    elif [ "$rc" = 1 ]; then
      rm -f "$plan"
      echo "$spec: $last bytes, paged: skipped, $(cat "$tmp/$i-paged.err")"
    else
      cat "$tmp/$i-paged.err" >&2
      exit "$rc"
    fi
  fi
)

# batches of $jobs graphs in the background; each graph's lines printed in order after
i=0
for spec in "$@"; do
  i=$((i + 1))
  (
    plan_graph "$i" "$spec" >"$tmp/$i.out" 2>&1 # set -e: a failure ends the subshell here
    : >"$tmp/$i.ok"
  ) &
  [ $((i % jobs)) -ne 0 ] || wait
done
wait
failed=0
k=0
while [ "$k" -lt "$i" ]; do
  k=$((k + 1))
  cat "$tmp/$k.out"
  [ -e "$tmp/$k.ok" ] || { echo "graph $k of $i: compile or verify failed (above)" >&2; failed=1; }
done
[ "$failed" = 0 ] || exit 1
plans=$(ls "$tmp"/[0-9]*-[0-9]*.plan 2>/dev/null || true)
[ -n "$plans" ] || { echo "no graph has a budget below its in-core peak" >&2; exit 1; }
# shellcheck disable=SC2086 # plan paths without spaces (mktemp)
"$harness" plans $plans
