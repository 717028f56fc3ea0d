#!/bin/sh
# doc-hexdump.sh PLAN_HEXDUMP DOC — the annotated hex dump in DOC (between its
# <!-- hexdump:begin --> and <!-- hexdump:end --> markers, inside a ``` fence) is what
# PLAN_HEXDUMP prints today: the plan-format page shows the bytes the writer writes
# (tests/plan/regen-bad-plans.sh rewrites it). Exit 1 with the difference when not.
set -eu
[ $# -eq 2 ] || { echo "usage: doc-hexdump.sh PLAN_HEXDUMP DOC" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$1" >"$tmp/now"
awk '/<!-- hexdump:begin -->/ { f = 1; next } /<!-- hexdump:end -->/ { f = 0 } f' "$2" |
  sed '1d;$d' >"$tmp/doc"
[ -s "$tmp/doc" ] || { echo "$2: no hex dump between the hexdump markers" >&2; exit 1; }
if ! diff "$tmp/doc" "$tmp/now" >"$tmp/diff"; then
  echo "$2: the hex dump is stale (< the page, > plan_hexdump now); run tests/plan/regen-bad-plans.sh:" >&2
  cat "$tmp/diff" >&2
  exit 1
fi
echo "doc-hexdump: $(wc -l <"$tmp/now") lines match"
