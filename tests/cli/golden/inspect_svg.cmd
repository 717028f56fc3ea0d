# sfc inspect --svg: the SVG parses (python3 xml.etree) and has one rect of class "b" per device block.
$SFC compile "$DATA/graphs/small_cnn.json" --budget 64MiB -o cnn.plan -q && $SFC inspect cnn.plan --svg cnn.svg > /dev/null; echo "exit $?"
python3 -c "import sys, json, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); n = sum(1 for e in r.iter('{http://www.w3.org/2000/svg}rect') if e.get('class') == 'b'); print('svg rects:', n, 'blocks:', len(json.load(open(sys.argv[2]))['blocks']))" cnn.svg /dev/stdin <<JSON
$($SFC inspect cnn.plan --json)
JSON
$SFC inspect cnn.plan --svg 2>&1; echo "exit $?"
