# plan format 1.4: sfc compile records its time bound in the plan, and sfc simulate prints
# the same bound (ms there, us here) with predicted/bound; with another link (--profile v100-nvlink2)
# it names the bound as the plan's link's and gives no ratio; --json has it (the 1.3-era
# swap.plan records none: null, see simulate_swap).
$SFC compile "$DATA/../../plans/unet.json.gz" --profile rtx2080ti-pcie3 --budget 72MiB --packer best-fit -o "$TMP/b.plan" | grep -E "iteration|time bound"; echo "exit $?"
$SFC simulate "$TMP/b.plan" --top 0 | grep -E "predicted iteration|time bound"; echo "exit $?"
$SFC simulate "$TMP/b.plan" --profile v100-nvlink2 --top 0 | grep -E "time bound"; echo "exit $?"
$SFC simulate "$TMP/b.plan" --json --top 0 | grep -o '"lower_bound_iteration_us":[0-9.]*'; echo "exit $?"
