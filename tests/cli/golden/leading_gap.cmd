# The issue's leading-gap case through the CLI: A [0,1] 100 B, B [1,2] 80 B, C [2,3] 60 B pack into 180.
$SFC compile "$DATA/graphs/leading_gap.json" -c "$CLI/align1.yaml" -o lg.plan && $SFC inspect lg.plan --json
