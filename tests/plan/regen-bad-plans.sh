#!/bin/sh
# regen-bad-plans.sh — regenerate every file made from the test-only plan builder:
#   tests/data/bad_plans/*.plan      structurally corrupt plans, and plans that break
#                                    a reference rule (4-13)      (CLI exit 2)
#   tests/data/invalid_plans/*.plan  well-formed, invalid plans, one per semantic rule
#                                    14-59 of docs/plan-format.md  (CLI exit 1)
#   tests/fuzz/corpus/plan/*.plan    valid seeds for fuzz_plan and plan_mutants
#   docs/plan-format.md              the annotated hex dump between its markers
# The .plan.err sidecars are NOT generated: they are the specification, written by
# hand from the rules in docs/plan-format.md. After a regeneration, run
#   ctest --test-dir build-plan -R 'test_plan_corpus|test_plan_rules|plan/'
# and read `git diff`: a changed .plan with an unchanged .err must still pass; a new
# file needs its .err (and a row in tests/plan/test_plan_rules.c); CRC values in an
# .err are checked independently (e.g. Python's zlib.crc32), not copied from sfc.
#
#   tests/plan/regen-bad-plans.sh [BUILD_DIR]      (default: build-plan)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-plan}
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" --target make_bad_plans plan_hexdump >/dev/null

mkdir -p "$root/tests/data/bad_plans" "$root/tests/data/invalid_plans" \
         "$root/tests/fuzz/corpus/plan"
"$build/tests/plan/make_bad_plans" "$root/tests/data/bad_plans" \
    "$root/tests/data/invalid_plans" "$root/tests/fuzz/corpus/plan"

doc="$root/docs/plan-format.md"
dump=$(mktemp)
trap 'rm -f "$dump" "$dump.md"' EXIT
"$build/tests/plan/plan_hexdump" >"$dump"
awk -v dump="$dump" '
  /<!-- hexdump:begin -->/ { print; print "```"; while ((getline l < dump) > 0) print l; print "```"; skip = 1; next }
  /<!-- hexdump:end -->/   { skip = 0 }
  !skip                    { print }
' "$doc" >"$dump.md"
cat "$dump.md" >"$doc"
echo "regen-bad-plans: $(ls "$root"/tests/data/bad_plans/*.plan | wc -l) bad, $(ls "$root"/tests/data/invalid_plans/*.plan | wc -l) invalid, $(ls "$root"/tests/fuzz/corpus/plan/*.plan | wc -l) seeds, hex dump in docs/plan-format.md"
