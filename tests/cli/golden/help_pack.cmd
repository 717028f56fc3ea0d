$SFC help pack
