# The full help of the runtime commands.
$SFC help run; echo "exit $?"
$SFC simulate --help; echo "exit $?"
