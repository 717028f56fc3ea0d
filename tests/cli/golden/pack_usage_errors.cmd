# sfc pack: bad usage and bad input: one line on stderr, exit 2, nothing written.
$SFC pack 2>&1; echo "exit $?"
$SFC pack a.csv b.csv 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --frob 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" -a nope 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --capacity 12XB 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --alignment 3 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --time-limit 0 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --time-limit 86401 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --mip-max-blocks -1 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --page 0 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --page 2MiX 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" -o 2>&1; echo "exit $?"
$SFC pack missing.csv -o m.csv 2>&1; echo "exit $?"; ls m.csv 2>&1
$SFC pack "$DATA/pack/bad_size.csv" -o m.csv --svg m.svg 2>&1; echo "exit $?"; ls m.csv m.svg 2>&1
$SFC pack --list | head -3
$SFC pack "$DATA/pack/leading_gap.csv" --mip-max-blocks 10001 2>&1; echo "exit $?"
