$SFC compile "$DATA/../../plans/unet.json.gz" --image-size 8192 --batch 1 --profile rtx2080ti-pcie3 --budget 11GiB -q; echo "exit $?"
$SFC compile "$DATA/../../plans/unet.json.gz" --image-size 8192 --batch 1 --profile rtx2080ti-pcie3 --budget 11GiB --tiling off -q 2>&1 | grep -c "hint"
$SFC compile "$DATA/../../plans/unet-plain.json.gz" --image-size 8192 --batch 1 --profile rtx2080ti-pcie3 --budget 11GiB -o "$TMP/u.plan" | grep -E "tiled|budget"; echo "exit $?"
$SFC verify "$TMP/u.plan" | cut -d';' -f1
$SFC compile "$DATA/../../plans/bert-base.json.gz" --budget 100MiB -q 2>&1 | grep -c "hint"
