# sim device on the hand-built swap plan (tests/runtime/rt_plans.h): ops 10 us, copies
# 10 us latency + 256 B / 25 GB/s = 10.01024 us. By hand: step 0 [0,10]; swap-out
# [10,20.01024]; step 1 waits it (stall 10.01024) [20.01024,30.01024]; step 2 to
# 40.01024; swap-in waits step 2 [40.01024,50.02048]; step 3 waits it (stall 10.01024)
# and ends at 60.02048. Compute only 40, stall 20.02048 in 2 waits.
$SFC simulate "$DATA/runtime/swap.plan"; echo "exit $?"
$SFC simulate "$DATA/runtime/swap.plan" --json --top 1; echo "exit $?"
# full.plan (pb_example_full): steps 1-4 end at 32.5 us, step 3 (a's last reader) at 27.5;
# the swap-in waits for it and lands at 27.5 + 10.01024; step 5 stalls 5.01024 and ends at
# 47.51024.
$SFC simulate "$DATA/runtime/full.plan" --top 0; echo "exit $?"
# --profile rtx2080ti-pcie3 (12 GB/s, 10 us): copy = 10 + 256 / 12e3 = 10.021333 us, the
# same two stalls: 40 + 2 * 10.021333 = 60.042667 us.
$SFC simulate "$DATA/runtime/swap.plan" --profile rtx2080ti-pcie3 --top 0; echo "exit $?"
$SFC simulate 2>&1; echo "exit $?"
$SFC simulate "$DATA/runtime/swap.plan" --top 99 2>&1; echo "exit $?"
$SFC simulate missing.plan 2>&1; echo "exit $?"
