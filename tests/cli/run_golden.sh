#!/bin/sh
# run_golden.sh CASE [--write]
# Runs tests/cli/golden/CASE.cmd with sh (variables: SFC the binary, DATA tests/data,
# CLI tests/cli, TMP a scratch folder) and compares what it printed — stdout, then
# stderr, then the exit status — with CASE.out after normalising what varies between
# runs (timings, the scratch path). A timing is replaced with its padding, so a
# compile of 10 ms or more prints the same line as one of 1 ms. --write stores the output as the new CASE.out:
# tools/regen-golden does that for every case; never edit .out files by hand.
set -u
case_name=$1
here=$(cd "$(dirname "$0")" && pwd)
cmd="$here/golden/$case_name.cmd"
want="$here/golden/$case_name.out"
: "${SFC:?SFC must point at the sfc binary}"
DATA=$(cd "$here/../data" && pwd)
CLI=$here
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export SFC DATA CLI TMP
out="$TMP/.stdout"; err="$TMP/.stderr"
(cd "$TMP" && sh "$cmd") >"$out" 2>"$err"
rc=$?
got=$( { cat "$out"; echo "--- stderr"; cat "$err"; echo "--- exit $rc"; } |
  sed -e "s|$TMP|\$TMP|g" -e "s|$DATA|\$DATA|g" -e "s|$CLI|\$CLI|g" \
      -e 's|\(time\)  *[0-9][0-9.]* ms|\1 <ms> ms|g' \
      -e 's|"compile_ms":[0-9.e+-]*|"compile_ms":0|' )
if [ "${2:-}" = "--write" ]; then
  printf '%s\n' "$got" >"$want"
  exit 0
fi
if [ ! -f "$want" ]; then
  echo "missing $want (run tools/regen-golden)"; exit 1
fi
if [ "$got" != "$(cat "$want")" ]; then
  printf '%s\n' "$got" | diff -u "$want" - ; exit 1
fi
exit 0
