# Output sfc cannot write is an error, not a success (a full disk would leave an empty
# config that compiles for the default profile); an option followed by another option
# has no value (`-o --json` must not write a plan named --json); `sfc help help` helps.
$SFC config --print --profile v100-nvlink2 > /dev/full; echo "exit $?"
$SFC compile "$DATA/graphs/small_cnn.json" --budget 64MiB --json > /dev/full; echo "exit $?"
$SFC compile "$DATA/graphs/small_cnn.json" --budget --json 2>&1; echo "exit $?"
$SFC compile "$DATA/graphs/small_cnn.json" -o --json 2>&1; echo "exit $?"; ls -- --json 2>&1
$SFC compile "$DATA/graphs/small_cnn.json" --budget 64MiB -q --output=-dash.plan; echo "exit $?"; ls -- -dash.plan
$SFC compile "$DATA/graphs/small_cnn.json" --budget -1 2>&1; echo "exit $?"
$SFC help help > help.txt; echo "exit $?"; head -1 help.txt
$SFC help nosuch 2>&1; echo "exit $?"
# a graph within its limits (a tensor of 2^50 bytes) whose plan would pass the plan
# format's 1 PiB arena: one line, exit 2, no plan (was exit 3, "compiler bug")
sed 's/"bytes": 64, "kind": "input"/"bytes": 1125899906842624, "kind": "input"/' "$DATA/graphs/minimal.json" > pib.json
$SFC compile pib.json -o pib.plan 2>&1; echo "exit $?"; ls pib.plan 2>&1
# a va_chunk a plan cannot record is the config's error
printf 'version: 1\ndevice:\n  va_chunk: 2PiB\n' > va.yaml
$SFC config --print -c va.yaml 2>&1 >/dev/null; echo "exit $?"
# a newline in a path stays escaped: the error is one line
cp "$DATA/runtime/lost_swap.plan" "$(printf 'a\nb.plan')"
$SFC verify "$(printf 'a\nb.plan')" 2>&1; echo "exit $?"
$SFC inspect "$(printf 'no\nsuch.plan')" 2>&1; echo "exit $?"
cp "$DATA/graphs/small_cnn.json" "$(printf 'c\nd.json')"
$SFC compile "$(printf 'c\nd.json')" --budget 1KiB -q 2>&1; echo "exit $?"
$SFC run "$DATA/runtime/swap.plan" --verbose > /dev/null; echo "run --verbose: exit $?"
# paths on stdout are escaped too: a newline in a name cannot split a summary line
cp "$DATA/graphs/small_cnn.json" small.json
$SFC compile small.json --budget 64MiB -o "$(printf 'e\nf.plan')" | tail -1
$SFC verify "$(printf 'e\nf.plan')"; echo "exit $?"
$SFC inspect "$(printf 'e\nf.plan')" | head -1
$SFC simulate "$(printf 'e\nf.plan')" | head -1
$SFC run "$(printf 'e\nf.plan')" | head -1
# a trace sfc cannot write names the trace alone
$SFC simulate "$DATA/runtime/swap.plan" --trace /dev/full 2>&1 >/dev/null; echo "exit $?"
