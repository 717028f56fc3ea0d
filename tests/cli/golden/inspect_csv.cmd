# sfc inspect --csv: one row per device block with bytes, each as inspect --json has it (lower = first step, upper = last step + 1, the plan's offset); the offsets a packing (no two rows share a byte over a common step) whose peak is the arena; sfc pack reads it; the plan, another output and a missing value refused.
$SFC compile "$DATA/graphs/small_cnn.json" --budget 2MiB -o cnn.plan -q; echo "compile exit $?"
$SFC inspect cnn.plan --csv cnn.csv > /dev/null; echo "exit $?"
$SFC inspect cnn.plan --json > cnn.json
python3 - cnn.csv cnn.json <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
plan = json.load(open(sys.argv[2]))
want = [b for b in plan['blocks'] if b['bytes'] > 0]
print('rows', len(rows), 'blocks with bytes', len(want), 'of', len(plan['blocks']))
same = all(int(r['id']) == b['index'] and int(r['lower']) == b['first_step'] and
           int(r['upper']) == b['last_step'] + 1 and int(r['size']) == b['bytes'] and
           int(r['offset']) == b['offset'] for r, b in zip(rows, want))
print('rows match inspect --json:', same and len(rows) == len(want))
iv = [(int(r['lower']), int(r['upper']), int(r['offset']), int(r['offset']) + int(r['size'])) for r in rows]
clash = sum(1 for i in range(len(iv)) for j in range(i) if iv[i][0] < iv[j][1] and iv[j][0] < iv[i][1] and iv[i][2] < iv[j][3] and iv[j][2] < iv[i][3])
print('overlapping pairs:', clash, 'peak == arena:', max(x[3] for x in iv) == plan['arena_bytes'], 'swaps:', len(plan['swaps']) > 0)
PY
$SFC pack cnn.csv > pack.txt; echo "pack exit $?"; head -2 pack.txt
$SFC inspect cnn.plan --csv cnn.plan 2>&1; echo "exit $?"
$SFC inspect cnn.plan --csv out.csv --timeline out.csv 2>&1; echo "exit $?"
$SFC inspect cnn.plan --csv 2>&1; echo "exit $?"
