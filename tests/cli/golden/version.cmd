$SFC --version
