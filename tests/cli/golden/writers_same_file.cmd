# An output that is an input (by name, hard link or symlink), the config, or the other
# output is refused before any work: exit 2, one line, the input untouched (cmp).
cp "$DATA/graphs/small_cnn.json" m.json && cp "$CLI/align1.yaml" c.yaml && ln m.json hard.json && ln -s m.json sym.json
$SFC compile m.json -o m.json 2>&1; echo "exit $?"
$SFC compile m.json -o hard.json 2>&1; echo "exit $?"
$SFC compile m.json -o sym.json 2>&1; echo "exit $?"
$SFC compile sym.json -o m.json 2>&1; echo "exit $?"
$SFC compile m.json -c c.yaml -o c.yaml 2>&1; echo "exit $?"
cmp m.json "$DATA/graphs/small_cnn.json" && cmp c.yaml "$CLI/align1.yaml" && echo "inputs untouched"
$SFC compile m.json -o p.plan -q; echo "exit $?"; cp p.plan p0.plan
$SFC inspect p.plan --svg p.plan 2>&1; echo "exit $?"
ln -s p.plan p-link.svg
$SFC inspect p.plan --svg p-link.svg 2>&1; echo "exit $?"
cmp p.plan p0.plan && echo "plan untouched"
cp "$DATA/pack/leading_gap.csv" x.csv && ln x.csv x-hard.csv
$SFC pack x.csv -o x.csv 2>&1; echo "exit $?"
$SFC pack x.csv --svg x-hard.csv 2>&1; echo "exit $?"
$SFC pack x.csv -o out.csv --svg out.csv 2>&1; echo "exit $?"
$SFC pack x.csv -o out.csv --svg ./out.csv 2>&1; echo "exit $?"
ls out.csv 2>&1
echo old > both.csv && ln -s both.csv both-link.svg
$SFC pack x.csv -o both.csv --svg both-link.svg 2>&1; echo "exit $?"
cmp x.csv "$DATA/pack/leading_gap.csv" && cat both.csv
