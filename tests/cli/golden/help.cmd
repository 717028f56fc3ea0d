$SFC --help
