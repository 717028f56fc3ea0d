$SFC compile "$DATA/graphs/tiny_mlp.json" --json
