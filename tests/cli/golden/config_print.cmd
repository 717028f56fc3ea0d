$SFC config --print
