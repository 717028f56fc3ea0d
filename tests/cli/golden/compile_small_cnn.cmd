$SFC compile "$DATA/graphs/small_cnn.json" --budget 64MiB -o cnn.plan && $SFC verify cnn.plan && $SFC inspect cnn.plan --blocks --steps
