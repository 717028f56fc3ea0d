G="$DATA/../../plans/unet.json.gz"
$SFC maxbatch "$G" --budget 256MiB --packer best-fit --tiling off --json -q; echo "exit $?"
$SFC maxbatch "$G" --budget 256MiB --packer best-fit --tiling off 2>/dev/null; echo "exit $?"
# (--tiling off: the swap scheduler's answers; tiling: auto would tile the larger batches)
# the answers, checked by sfc compile: max batch 16 fits, 17 does not; the floor fits
# at the physical limit 19 and not at 20; in-core, 4 fits and 5 does not
$SFC compile "$G" --budget 256MiB --packer best-fit --tiling off --batch 16 -q; echo "compile 16: exit $?"
$SFC compile "$G" --budget 256MiB --packer best-fit --tiling off --batch 17 -q 2>/dev/null; echo "compile 17: exit $?"
$SFC compile "$G" --budget 256MiB --packer best-fit --tiling off --batch 19 -q 2>&1 | grep -c "no schedule fits"
$SFC compile "$G" --budget 256MiB --packer best-fit --tiling off --batch 20 -q 2>&1 | grep -c "no schedule fits"
$SFC compile "$G" --budget 256MiB --packer best-fit --tiling off --policy none --batch 4 -q; echo "in-core 4: exit $?"
$SFC compile "$G" --budget 256MiB --packer best-fit --tiling off --policy none --batch 5 -q 2>/dev/null; echo "in-core 5: exit $?"
$SFC maxbatch "$G" --budget 1KiB --packer best-fit -q; echo "exit $?"
$SFC maxbatch "$DATA/graphs/tiny_mlp.json" --budget 1MiB 2>&1; echo "exit $?"
$SFC maxbatch "$G" --max 0 2>&1; echo "exit $?"
$SFC maxbatch 2>&1; echo "exit $?"
# --max below the physical limit (51 here): the limit line says --max capped it
$SFC maxbatch "$DATA/graphs/tiny_fcn.json" --budget 1MiB --packer best-fit --max 4 -q | grep 'physical limit'
$SFC maxbatch "$DATA/graphs/tiny_fcn.json" --budget 1MiB --packer best-fit --max 4 --json -q | grep -o '"physical_limit_capped":[a-z]*'
# --inplace: tiny-fcn's residual add and two threshold_backwards write a dying input
$SFC maxbatch "$DATA/graphs/tiny_fcn.json" --budget 1MiB --packer best-fit --max 4 --inplace -q | grep 'in place'
