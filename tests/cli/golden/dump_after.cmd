$SFC compile "$DATA/graphs/leading_gap.json" -c "$CLI/align1.yaml" -q --dump-after liveness
