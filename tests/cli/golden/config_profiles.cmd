$SFC config --profiles
