# scheduler.prefetch_limit and a fixed scheduler.window (policy window): the summary's
# swaps line says which limits the plan was made under, the plan verifies; with policy
# lms (here from --policy) the keys are refused, naming the key, exit 2.
printf 'version: 1\nscheduler:\n  prefetch_limit: 3\n' > "$TMP/limit.yaml"
$SFC compile "$DATA/../../plans/unet.json.gz" -c "$TMP/limit.yaml" --budget 120MiB --packer best-fit -o "$TMP/l.plan" | grep -E "swaps"; echo "exit $?"
$SFC verify "$TMP/l.plan" | cut -d';' -f1; echo "exit $?"
printf 'version: 1\nscheduler:\n  window: 64MiB\n' > "$TMP/window.yaml"
$SFC compile "$DATA/../../plans/unet.json.gz" -c "$TMP/window.yaml" --budget 120MiB --packer best-fit -o "$TMP/w.plan" | grep -E "swaps"; echo "exit $?"
$SFC verify "$TMP/w.plan" | cut -d';' -f1; echo "exit $?"
$SFC compile "$DATA/../../plans/unet.json.gz" -c "$TMP/limit.yaml" --budget 120MiB --policy lms -o "$TMP/x.plan" 2>&1; echo "exit $?"
