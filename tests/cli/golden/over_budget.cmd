$SFC compile "$DATA/graphs/small_cnn.json" --budget 100KiB -o over.plan; echo "compile exit $?"; $SFC verify over.plan; echo "verify exit $?"; $SFC inspect over.plan | grep budget
