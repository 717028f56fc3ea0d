# sfc pack: the leading-gap case (180 = lower bound), the packed CSV, the SVG parsed by
# python3 (one rect of class "b" per buffer); a case where best-fit reaches the lower
# bound (6) and greedy-size does not (7); capacity exceeded (exit 1); alignment; the page
# peak of the leading-gap packing in 64-byte pages: 192 (worked by hand in test_pack.c).
{ $SFC pack "$DATA/pack/leading_gap.csv" -o lg.csv --svg lg.svg; echo "exit $?"; }
cat lg.csv
python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); print('svg rects:', sum(1 for e in r.iter('{http://www.w3.org/2000/svg}rect') if e.get('class') == 'b'))" lg.svg
{ $SFC pack "$DATA/pack/bestfit_beats_greedy.csv" -a best-fit; echo "exit $?"; }
{ $SFC pack "$DATA/pack/bestfit_beats_greedy.csv" -a greedy-size --capacity 6 -o over.csv; echo "exit $?"; }
cat over.csv
{ $SFC pack "$DATA/pack/leading_gap.csv" --alignment 64 -a best-fit; echo "exit $?"; }
{ $SFC pack "$DATA/pack/leading_gap.csv" -a best-fit --page 64; echo "exit $?"; }
