#!/bin/sh
# expect_error.sh EXIT INPUT OUTPUT cmd args...
# Runs cmd; passes when its exit status is EXIT, it printed exactly one line on
# stderr, that line equals INPUT.err (with @INPUT@ replaced by INPUT), and OUTPUT
# was not created.
set -u
want_exit=$1; input=$2; output=$3; shift 3
rm -f "$output"
errf=$(mktemp); trap 'rm -f "$errf"' EXIT
"$@" >/dev/null 2>"$errf"
got_exit=$?
fail=0
if [ "$got_exit" != "$want_exit" ]; then
  echo "exit status $got_exit, expected $want_exit"; fail=1
fi
lines=$(wc -l <"$errf")
if [ "$lines" != 1 ]; then
  echo "stderr has $lines lines, expected exactly 1:"; cat "$errf"; fail=1
fi
if [ ! -f "$input.err" ]; then
  echo "missing expectation file $input.err"; fail=1
else
  want=$(sed "s|@INPUT@|$input|g" "$input.err")
  got=$(cat "$errf")
  if [ "$got" != "$want" ]; then
    printf 'stderr:   %s\nexpected: %s\n' "$got" "$want"; fail=1
  fi
fi
if [ -e "$output" ]; then
  echo "output file $output was written despite the error"; fail=1
fi
exit $fail
