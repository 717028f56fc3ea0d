"""finals_check.py — window: auto judges its finals after each one's copy-queue reorder.

Usage: finals_check.py SFC PROJECT_SOURCE_DIR WORKDIR

The bundled U-Net on rtx2080ti-pcie3 in 72 MiB (best-fit) sends several window
candidates through the final rounds (-v: "window candidate C took A ms after the final
rounds (B ms after its reorder)"). Its finals turn around under the reorder: the plan
slowest before its reorder is the fastest after it (41.842 against 40.819 ms before,
38.331 against 39.618 after, when this test was written). Checked:
  - at least two finals, and a pair of them whose order the reorder turns around (else
    this graph no longer exercises what the test is for: the test says so and fails);
  - the plan compiled is the fastest final after its reorder: its predicted iteration
    (--json) equals the least after-reorder time of the -v lines (to their 3 decimals),
    which a pipeline that judged before the reorder would not give here;
  - the best final, not the last one here, is made again in one round (its last round's
    target, margin and pack length), not through all its rounds;
  - the plan goes through sfc verify.
The bundled DarkNet-19 on v100-nvlink2 at 30 % of its in-core peak: the tuner ranks
rank-only candidates first (its six: bytes x length, length and the traffic LP's, each
in two modes), and a rank-only plan leads the finals. Checked: two hidden-first finals
ran all the same (HIDDEN_FINALS; with one the test fails), the plan is the fastest final
after its reorder, and it is the traffic LP's (its second candidate's, the one in queue
order: the second LP final runs where the first one's plan leads the finals), sfc verify
passes.
Everything is the sim's prediction (deterministic); nothing is timed.
"""
import json
import os
import re
import sys

from cli_check import check, runner
import cli_check

sfc_bin, root, work = sys.argv[1], sys.argv[2], sys.argv[3]
sfc = runner(sfc_bin)
graph = os.path.join(root, "plans", "unet.json.gz")
plan = os.path.join(work, "unet-72MiB.plan")
args = [graph, "--profile", "rtx2080ti-pcie3", "--budget", "72MiB", "--packer", "best-fit"]

p = sfc("compile", *args, "-o", plan, "-v")
finals = [(int(c), float(a), float(b), over == "")
          for c, a, b, over in re.findall(
              r"window candidate (\d+) took ([0-9.]+) ms after the final rounds "
              r"\(([0-9.]+) ms after its reorder\)( \(over\))?", p.stderr)]
fitting = [f for f in finals if f[3]]
check(len(fitting) >= 2, f"two or more fitting finals in -v (got {len(finals)})")
flip = any(a[1] < b[1] and a[2] > b[2] for a in fitting for b in fitting)
check(flip, "a pair of finals whose order the reorder turns around (this graph no longer "
      "exercises judging after the reorder: pick another case)")

j = json.loads(sfc("compile", *args, "-o", plan, "--json", "-q").stdout)
best = min((f[2] for f in fitting), default=None)
got = j["predicted_iteration_s"] * 1e3
check(best is not None and abs(got - best) < 0.0006,
      f"the plan is the fastest final after its reorder: predicted {got:.3f} ms, "
      f"finals after their reorder {[f[2] for f in fitting]}")
check(j["fits_budget"], "the plan fits its budget")
# the best final was not the last here: it is made again from its last round alone (the
# round's target, margin and pack length), one schedule pass, and its time above is the
# final's own
again = p.stderr.split("through them again")
check(len(again) == 2 and again[1].count("sfc: pass schedule") == 1,
      "the best final made again in one round (one 'pass schedule' line after 'through them "
      f"again'; got {again[1].count('sfc: pass schedule') if len(again) == 2 else 'no rerun'})")

v = sfc("verify", plan)
check("ok" in v.stdout, f"sfc verify: {v.stdout.strip()}")

# DarkNet-19 on v100-nvlink2 at 30 % of its in-core peak: the tuner ranks rank-only
# candidates first; two hidden-first finals run behind them (HIDDEN_FINALS: before the
# traffic LP's candidates the second of them found the plan, 12.517 ms against 12.924);
# the traffic LP's second candidate gave the plan (12.074 ms), now its first with the
# per-copy tie-break (11.769 ms when this was written; a plan of the same time as the
# first LP candidate's tuner replay, told apart by its packed arena).
dk = os.path.join(root, "plans", "darknet19.json.gz")
peak = json.loads(sfc("compile", dk, "--profile", "v100-nvlink2", "--json", "-q").stdout)
dargs = [dk, "--profile", "v100-nvlink2", "--budget", str(int(peak["in_core_peak_bytes"] * 0.3))]
dplan = os.path.join(work, "darknet19-30.plan")
p = sfc("compile", *dargs, "-o", dplan, "-v")
tuned = dict(re.findall(r"window candidate (\d+) \(priority (.*)\): arena", p.stderr))
rank_only = {int(c) for c, d in tuned.items() if " alone" in d}
hidden_first = {int(c) for c, d in tuned.items() if " alone" not in d and "late write-backs" not in d}
dfinals = [(int(c), float(b)) for c, a, b, over in re.findall(
    r"window candidate (\d+) took ([0-9.]+) ms after the final rounds "
    r"\(([0-9.]+) ms after its reorder\)( \(over\))?", p.stderr) if over == ""]
hidden = [f for f in dfinals if f[0] in hidden_first]
lp = {int(c) for c, d in tuned.items() if d.startswith("traffic LP, then ")}
check(len(rank_only) == 8 and len(lp) == 4 and lp <= rank_only,
      f"the tuner's eight rank-only candidates in -v, four the traffic LP's "
      f"({sorted(rank_only)}, {sorted(lp)})")
check(len(hidden) >= 2, f"two hidden-first finals where rank-only plans lead ({dfinals})")
m = re.search(r"iteration +([0-9.]+) ms +predicted", p.stdout)
dbest = min((f[1] for f in dfinals), default=None)
check(m and dbest is not None and abs(float(m.group(1)) - dbest) < 0.0006,
      f"DarkNet-19: the plan is the fastest final after its reorder "
      f"({m.group(1) if m else '?'} ms; finals {dfinals})")
check(len([f for f in dfinals if f[0] in lp]) >= 2, f"two traffic LP finals ran ({dfinals})")
check("best of 21: priority traffic LP, then bytes x length per copy alone" in p.stdout,
      "DarkNet-19: the traffic LP's candidate with the per-copy tie-break gives the plan")
v = sfc("verify", dplan)
check("ok" in v.stdout, f"sfc verify darknet19: {v.stdout.strip()}")

if cli_check.failures:
    sys.exit(f"{cli_check.failures} check(s) failed")
print(f"finals: {len(fitting)} finals, judged after their reorder ({got:.3f} ms): ok")
