# Graphs the loader accepts that FT tiling must not tile where they are odd: a 4-D
# tensor whose shape (or dtype) does not account for its bytes, an in-place op that lists
# no output. Their ops stay whole; every plan verifies and replays with integrity (these
# were exit 3, "compiler bug", or exit 1 with no plan written).
# (tests/data/odd_graphs: tiny_fcn.json with one tensor shape, one dtype, one in-place op's outputs changed; kept out of tests/data/graphs, whose every graph plan_identity pins)
for g in tiny_fcn_shape_off tiny_fcn_dtype_off tiny_fcn_no_output; do
  for b in 200KiB 400KiB; do
    $SFC compile "$DATA/odd_graphs/$g.json" --tiling on --budget $b -q -o $g.plan 2>err.txt
    echo "$g --tiling on --budget $b: exit $? $(sed 's|^sfc: [^:]*: ||' err.txt | cut -c1-40)"
  done
  $SFC compile "$DATA/odd_graphs/$g.json" --budget 400KiB -q -o $g.plan; echo "$g --budget 400KiB: exit $?"
  $SFC verify $g.plan | sed 's/^.*: ok:/ok:/'
  $SFC run $g.plan --integrity > /dev/null; echo "$g integrity: exit $?"
done
