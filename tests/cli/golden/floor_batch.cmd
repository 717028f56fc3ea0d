$SFC compile "$DATA/../../plans/resnet50.json.gz" --profile v100-nvlink2 --batch 1700 --budget 16GiB -q; echo "exit $?"
$SFC compile "$DATA/../../plans/resnet50.json.gz" --profile v100-nvlink2 --batch 1659 --budget 16GiB --packer best-fit -q 2>&1 | grep -c "no schedule fits"
$SFC compile "$DATA/../../plans/resnet50.json.gz" --profile v100-nvlink2 --batch 1658 --budget 16GiB --packer best-fit -q 2>&1 | grep -c "no schedule fits"
