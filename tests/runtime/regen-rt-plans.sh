#!/bin/sh
# regen-rt-plans.sh — regenerate tests/data/runtime/*.plan (the runtime's hand-built
# plans used by the CLI golden tests run_* and simulate_*) from tests/runtime/rt_plans.c.
# Then run tools/regen-golden and read the diff.
#
#   tests/runtime/regen-rt-plans.sh [BUILD_DIR]      (default: build)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" --target make_rt_plans >/dev/null
mkdir -p "$root/tests/data/runtime"
"$build/tests/runtime/make_rt_plans" "$root/tests/data/runtime"
ls -l "$root/tests/data/runtime"
