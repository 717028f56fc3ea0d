# sfc run: integrity replay of hand-built swap plans and a compiled plan; a plan the
# reader accepts but whose swap-out copies nothing fails integrity (exit 1).
$SFC run "$DATA/runtime/swap.plan" --integrity --iterations 3; echo "exit $?"
$SFC run "$DATA/runtime/full.plan" --device host --integrity; echo "exit $?"
$SFC run "$DATA/runtime/lost_swap.plan" --integrity 2>&1; echo "exit $?"
$SFC run "$DATA/runtime/lost_swap.plan"; echo "exit $?"
$SFC run "$DATA/runtime/swap.plan" --device sim --iterations 2; echo "exit $?"
$SFC compile "$DATA/graphs/small_cnn.json" -o cnn.plan -q && $SFC run cnn.plan --integrity; echo "exit $?"
$SFC run 2>&1; echo "exit $?"
$SFC run "$DATA/runtime/swap.plan" --device gpu 2>&1; echo "exit $?"
$SFC run "$DATA/runtime/swap.plan" --device sim --integrity 2>&1; echo "exit $?"
$SFC run "$DATA/runtime/swap.plan" --iterations 0 2>&1; echo "exit $?"
$SFC run "$DATA/runtime/swap.plan" --va 2>&1; echo "exit $?"
$SFC run "$DATA/bad_plans/big_endian.plan" 2>&1; echo "exit $?"
