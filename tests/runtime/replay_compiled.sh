#!/bin/sh
# replay_compiled.sh GRAPH [ITERATIONS] — compile a graph, verify the plan, predict it
# on sim and replay it on host with integrity checks (default 2 iterations).
# replay_compiled.sh --synthetic SEED LAYERS — the same on a seeded random graph from
# tools/gen-synthetic-graph. Exit 0 only when every stage succeeds. $SFC is the binary.
set -eu
: "${SFC:?SFC must point at the sfc binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$1" = --synthetic ]; then
  root=$(cd "$(dirname "$0")/../.." && pwd)
  python3 "$root/tools/gen-synthetic-graph" --seed "$2" --layers "$3" --out "$tmp/g.json"
  graph=$tmp/g.json
  iterations=2
else
  graph=$1
  iterations=${2:-2}
fi
"$SFC" compile "$graph" -o "$tmp/p.plan" -q || [ $? -eq 1 ] # over budget still replays
"$SFC" verify "$tmp/p.plan"
"$SFC" simulate "$tmp/p.plan" >/dev/null
"$SFC" run "$tmp/p.plan" --device sim >/dev/null
"$SFC" run "$tmp/p.plan" --integrity --iterations "$iterations"
