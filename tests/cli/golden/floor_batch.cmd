$SFC compile "$DATA/../../plans/resnet50.json.gz" --profile v100-nvlink2 --batch 1800 --budget 16GiB -q; echo "exit $?"
$SFC compile "$DATA/../../plans/resnet50.json.gz" --profile v100-nvlink2 --batch 1784 --budget 16GiB --packer best-fit -q 2>&1 | grep -c "no schedule fits"
$SFC compile "$DATA/../../plans/resnet50.json.gz" --profile v100-nvlink2 --batch 1783 --budget 16GiB --packer best-fit -q 2>&1 | grep -c "no schedule fits"
