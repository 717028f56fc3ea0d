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
# A paged plan (pb_example_paged at 512-byte pages, tests/plan/plan_examples.c): ops
# 10 us; the second iteration maps pages 1, 2, 3 and unmaps 2, 3 (pending from the first,
# finished) and 1 (at step 4, waiting for t2's last user, step 2): 60 us, no stall. With
# maps of 50 us (test_rt_api.c test_sim_paged_by_hand, by hand): steps 0, 2, 4 wait for
# the host 50, 30 and 40 us: 180 us.
$SFC simulate "$CLI/../fuzz/corpus/plan/paged.plan" --top 0; echo "exit $?"
$SFC simulate "$CLI/../fuzz/corpus/plan/paged.plan" --page-map-us 50 --json; echo "exit $?"
# --paged replays a plan packed as one arena in paged mode: its pages are mapped in the
# first iteration and stay (nothing to unmap), so the prediction is the arena's.
$SFC simulate "$DATA/runtime/swap.plan" --paged --top 0; echo "exit $?"
$SFC simulate "$DATA/runtime/swap.plan" --page-map-us -1 2>&1; echo "exit $?"
