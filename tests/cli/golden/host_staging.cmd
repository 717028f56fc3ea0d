printf 'host:\n  staging_budget: 1MiB\n' > "$TMP/staging.yaml"
$SFC compile "$DATA/../../plans/unet.json.gz" -c "$TMP/staging.yaml" --budget 120MiB --packer best-fit -o "$TMP/s.plan" | grep -E "budget|host staging|swaps"; echo "exit $?"
$SFC compile "$DATA/../../plans/unet.json.gz" -c "$TMP/staging.yaml" --budget 120MiB --packer best-fit -q; echo "exit $?"
