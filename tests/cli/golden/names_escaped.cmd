# Names may hold control characters (escaped in the file, so valid JSON). Wherever sfc
# prints a name it escapes them: ESC, BEL, TAB and DEL as \xNN, the C1 CSI U+009B as
# \u009b; no raw control character (C0 but newline, DEL, C1) reaches the terminal.
# --json keeps the real characters and still parses.
sed -e 's/"name": "tiny-mlp-b4"/"name": "evil\\u001b]0;pwned\\u0007\\u001b[2J"/' \
    -e 's/"name": "fc1.weight"/"name": "w\\u009b31m\\u007f\\tx"/' \
    -e 's/"name": "relu1"/"name": "relu\\u001b[1m"/' "$DATA/graphs/tiny_mlp.json" > names.json
$SFC compile names.json -o names.plan > compile.txt; echo "compile exit $?"
head -1 compile.txt
$SFC compile names.json -q --dump-after steps 2> dump.txt; grep -oE '"(relu|w)\\[^"]*"' dump.txt
$SFC inspect names.plan --blocks --steps > inspect.txt; grep -E "graph |relu|w\\\\u009b" inspect.txt
$SFC simulate names.plan > simulate.txt; head -1 simulate.txt
python3 -c "
import sys
for f in sys.argv[1:]:
    t = open(f, encoding='utf-8').read()
    print(f, 'raw controls:', sum(1 for c in t if (ord(c) < 32 and c != '\n') or 0x7f <= ord(c) <= 0x9f))
" compile.txt dump.txt inspect.txt simulate.txt
$SFC inspect names.plan --json | python3 -c "import json, sys; d = json.load(sys.stdin); print(ascii(d['graph']), ascii(d['tensors'][2]['name']))"
