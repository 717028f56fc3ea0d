$SFC compile "$DATA/graphs/tiny_mlp.json" --json
# a paged arena (plan format 1.7) at 30 % of small_cnn's peak in 64 KiB pages: the page
# peak is the fit measure (page_peak_bytes <= budget_bytes, fits_budget), the virtual arena
# (arena_bytes) may be larger; sfc verify recounts the pages (invariant 59)
$SFC compile "$DATA/graphs/small_cnn.json" --budget 1650000 --arena paged --page 64KiB --json -o p.plan; echo "exit $?"
$SFC verify p.plan; echo "exit $?"
