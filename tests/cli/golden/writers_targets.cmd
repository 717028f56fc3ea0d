# Where outputs go (docs/cli.md#output-files). Symlinks planted at every predictable
# name next to the output are never followed (their target stays "precious");
# /dev/null and /dev/full are written in place (as root, sfc runs as nobody here, so a
# broken writer could not replace them); a FIFO is written in place for a background
# reader (bounded by timeout); a symlink to a regular file replaces that file and stays
# a link; a dangling link and a missing folder are refused before any work.
unpriv() { if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
G="$DATA/graphs/small_cnn.json"
echo precious > victim
for out in cnn.plan b.csv b.svg i.svg; do
  for n in "$out.tmp" ".$out.tmp" "$out~" "$out.new" ".$out.swp" "$out.part" ".#$out" ".$out"; do ln -s "$PWD/victim" "$n"; done
done
$SFC compile "$G" -o cnn.plan -q; echo "exit $?"
$SFC compile "$G" -o cnn.plan -q; echo "exit $? (again, over the first)"
$SFC pack "$DATA/pack/leading_gap.csv" -o b.csv --svg b.svg > /dev/null; echo "exit $?"
$SFC inspect cnn.plan --svg i.svg > /dev/null; echo "exit $?"
cat victim; find . -type l ! -lname "$PWD/victim" | wc -l | sed 's/^ */links retargeted: /'
ls -A | grep -v -e '^victim$' -e '^cnn.plan$' -e '^b.csv$' -e '^b.svg$' -e '^i.svg$' -e '^\.stdout$' -e '^\.stderr$' | wc -l | sed 's/^ */entries besides the outputs: /'
find . -maxdepth 1 -type f | sort
$SFC verify cnn.plan > /dev/null; echo "verify exit $?"
rm -f cnn.plan.tmp .cnn.plan.tmp cnn.plan~ cnn.plan.new .cnn.plan.swp cnn.plan.part .#cnn.plan .cnn.plan
unpriv $SFC compile "$G" -o /dev/null -q; echo "exit $?"
unpriv $SFC compile "$G" -o /dev/full -q 2>&1; echo "exit $?"
unpriv $SFC pack "$DATA/pack/leading_gap.csv" -o /dev/null --svg /dev/null > /dev/null; echo "exit $?"
unpriv $SFC pack "$DATA/pack/leading_gap.csv" --svg /dev/full 2>&1 > /dev/null; echo "exit $?"
chmod go+rx . && unpriv $SFC inspect "$PWD/cnn.plan" --svg /dev/full 2>&1 > /dev/null; echo "exit $?"
test -c /dev/null && test -c /dev/full && echo "devices intact"
mkfifo pipe
timeout 120 cat pipe > got.plan &
$SFC compile "$G" -o pipe -q; echo "exit $?"
wait
test -p pipe && echo "pipe is still a FIFO"; $SFC verify got.plan > /dev/null; echo "verify exit $?"
mkdir real && echo old > real/target.plan && ln -s real/target.plan link.plan
$SFC compile "$G" -o link.plan -q; echo "exit $?"
test -L link.plan && echo "link.plan is still a link"; $SFC verify real/target.plan > /dev/null; echo "verify exit $?"; ls -A real
ln -s nowhere.plan dangling.plan
$SFC compile "$G" -o dangling.plan -q 2>&1; echo "exit $?"; ls nowhere.plan 2>&1
$SFC compile "$G" -o real -q 2>&1; echo "exit $?"
$SFC compile "$G" -o missing_dir/x.plan 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --svg missing_dir/x.svg 2>&1; echo "exit $?"
$SFC inspect cnn.plan --svg missing_dir/out.svg; echo "exit $? (nothing printed before)"
$SFC pack "$DATA/pack/leading_gap.csv" --capacity 0 2>&1; echo "exit $?"
