# sfc compile --inplace: elementwise results written into a dying input (tiny-fcn's
# residual add and two threshold_backwards; ResNet-50's 16 gradient sums and 49
# threshold_backwards), each plan verified and replayed with integrity on the host
# device; the --json fields.
$SFC compile "$DATA/graphs/tiny_fcn.json" --budget 560KiB --inplace -o fcn.plan; echo "exit $?"
$SFC verify fcn.plan; echo "exit $?"
$SFC run fcn.plan --integrity --iterations 2; echo "exit $?"
$SFC compile "$DATA/graphs/tiny_fcn.json" --budget 560KiB --json | tr ',' '\n' | grep inplace
$SFC compile "$DATA/graphs/tiny_fcn.json" --budget 560KiB --inplace --json | tr ',' '\n' | grep inplace
$SFC compile "$CLI/../../plans/resnet50.json.gz" --budget 200MiB --inplace -o r50.plan --json | tr ',' '\n' | grep -e inplace -e fits_budget
$SFC verify r50.plan | sed 's/;.*//'; echo "exit $?"
$SFC run r50.plan --integrity --iterations 2 | grep integrity; echo "exit $?"
