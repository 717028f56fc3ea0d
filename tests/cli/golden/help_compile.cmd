$SFC help compile
