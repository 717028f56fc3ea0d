G="$DATA/../../plans/unet.json.gz"
J=$($SFC maxbatch "$G" --budget 256MiB --packer best-fit --tiling off --json -q)
rc=$?; printf '%s\nexit %s\n' "$J" "$rc"
$SFC maxbatch "$G" --budget 256MiB --packer best-fit --tiling off 2>/dev/null; echo "exit $?"
# (--tiling off: the swap scheduler's answers; tiling: auto would tile the larger batches)
# the answers, checked by sfc compile at the batches maxbatch printed (taken from its
# --json, so the checks follow the answer): the max batch fits and the next does not;
# the floor fits at the physical limit and not one above; in-core, the largest in-core
# batch fits and the next does not
num() { printf '%s\n' "$J" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
M=$(num max_batch); P=$(num physical_limit_batch); I=$(num in_core_max_batch)
echo "max $M, physical limit $P, in-core max $I"
C() { "$SFC" compile "$G" --budget 256MiB --packer best-fit --tiling off -q -o "$TMP/p" "$@"; }
C --batch "$M" >/dev/null; echo "compile max: exit $?"
# maxbatch's samples/s at the max batch is the search's own probe of it, not a compile
# again: a fresh compile must predict the same
S=$(printf '%s\n' "$J" | sed -n 's/.*"samples_per_s":\([0-9.e+-]*\).*/\1/p')
T=$(C --batch "$M" --json | sed -n 's/.*"predicted_iteration_s":\([0-9.e+-]*\).*/\1/p')
awk -v m="$M" -v s="$S" -v t="$T" 'BEGIN {
  r = t > 0 ? m / t : 0; d = r - s; if (d < 0) d = -d
  if (r > 0 && d <= 1e-9 * r) print "samples/s at the max batch: as compile predicts"
  else print "samples/s at the max batch: maxbatch " s ", compile " r }'
C --batch $((M + 1)) >/dev/null 2>&1; echo "compile max+1: exit $?"
C --batch "$P" 2>&1 | grep -c "no schedule fits"
C --batch $((P + 1)) 2>&1 | grep -c "no schedule fits"
C --policy none --batch "$I" >/dev/null; echo "in-core max: exit $?"
C --policy none --batch $((I + 1)) >/dev/null 2>&1; echo "in-core max+1: exit $?"
$SFC maxbatch "$G" --budget 1KiB --packer best-fit -q; echo "exit $?"
$SFC maxbatch "$DATA/graphs/tiny_mlp.json" --budget 1MiB 2>&1; echo "exit $?"
$SFC maxbatch "$G" --max 0 2>&1; echo "exit $?"
$SFC maxbatch 2>&1; echo "exit $?"
# --max below the physical limit (51 here): the limit line says --max capped it
$SFC maxbatch "$DATA/graphs/tiny_fcn.json" --budget 1MiB --packer best-fit --max 4 -q | grep 'physical limit'
$SFC maxbatch "$DATA/graphs/tiny_fcn.json" --budget 1MiB --packer best-fit --max 4 --json -q | grep -o '"physical_limit_capped":[a-z]*'
# --inplace: tiny-fcn's residual add and two threshold_backwards write a dying input
$SFC maxbatch "$DATA/graphs/tiny_fcn.json" --budget 1MiB --packer best-fit --max 4 --inplace -q | grep 'in place'
