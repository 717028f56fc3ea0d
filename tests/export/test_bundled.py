#!/usr/bin/env python3
"""test_bundled.py — a bundled graph (plans/NAME.json.gz) loads, compiles, verifies and
agrees with the peak PyTorch measured while it was recorded.

    tests/export/test_bundled.py NAME     (SFC = the sfc binary)

Checks, per workload of plans/workloads.tsv that uses the graph:
  * the file is at most 1.5 MiB and says which batch it was recorded at; phases in
    order, one loss, params and optimizer state, backward_of on every backward op that
    produces a tensor (but the seed gradient's ones_like);
  * at the recorded batch it compiles under plans/default.yaml, the plan verifies
    (`sfc verify`), and in-core peak <= lower bound <= packed arena (a plan with swaps:
    lower bound <= packed arena);
  * export vs PyTorch: the lower bound / PyTorch's measured peak (the file's
    "measured.torch_peak_bytes", from the profiler's memory events during the recorded
    iteration) lies in [0.98, 1.01] — docs/exporter.md explains the tolerance;
  * rescaled to the workload's batch (--batch) it compiles and verifies, and the in-core
    peak grows when batch > recorded (not the lower bound: a plan that swaps has the
    budget's).
No PyTorch needed. Exit 0 pass, 1 fail.
"""
import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SFC = os.environ.get("SFC", os.path.join(ROOT, "build", "compiler", "sfc"))
LO, HI = 0.98, 1.01
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print(f"FAIL: {msg}")


def compile_plan(graph, plan, budget, batch=None):
    cmd = [SFC, "compile", graph, "-c", os.path.join(ROOT, "plans", "default.yaml"),
           "--budget", budget, "-o", plan, "--json"]
    if batch is not None:
        cmd += ["--batch", str(batch)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode in (0, 1), f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    if p.returncode not in (0, 1):
        return None
    s = json.loads(p.stdout)
    v = subprocess.run([SFC, "verify", plan], capture_output=True, text=True)
    ok = v.returncode == 0 or (v.returncode == 1 and not s["fits_budget"])
    check(ok, f"sfc verify {plan}: exit {v.returncode}: {v.stderr.strip()}")
    # a plan with swaps keeps less than the in-core peak on the device (its lower bound is
    # the scheduled blocks'); in-core, nothing can beat the peak
    in_core_ok = s["swaps"] > 0 or s["in_core_peak_bytes"] <= s["lower_bound_bytes"]
    check(in_core_ok and s["lower_bound_bytes"] <= s["arena_bytes"],
          f"{graph}: in-core {s['in_core_peak_bytes']} <= LB {s['lower_bound_bytes']} <= arena "
          f"{s['arena_bytes']} does not hold ({s['swaps']} swaps)")
    return s


def main():
    name = sys.argv[1]
    path = os.path.join(ROOT, "plans", f"{name}.json.gz")
    check(os.path.getsize(path) <= 1572864, f"{path}: {os.path.getsize(path)} bytes > 1.5 MiB")
    with gzip.open(path, "rt") as f:
        g = json.load(f)
    rec_batch, torch_peak = g["batch"], g["measured"]["torch_peak_bytes"]
    # structure a regenerated file must keep: one iteration in phase order, one loss,
    # persistent state declared, every producing backward op linked to its forward op
    order = {"forward": 0, "loss": 1, "backward": 2, "update": 3}
    seq = [order[op["phase"]] for op in g["ops"]]
    check(seq == sorted(seq) and set(seq) == {0, 1, 2, 3}, f"{name}: phases out of order")
    kinds = [t["kind"] for t in g["tensors"]]
    check(kinds.count("output") == 1 and "param" in kinds and "optimizer" in kinds,
          f"{name}: expected one output, params and optimizer state")
    unlinked = [op["id"] for op in g["ops"] if op["phase"] == "backward" and op["outputs"]
                and op["type"] != "ones_like" and "backward_of" not in op]
    check(not unlinked, f"{name}: backward ops without backward_of: {unlinked[:5]}")
    with open(os.path.join(ROOT, "plans", "workloads.tsv")) as f:
        rows = [r for r in csv.reader(f, delimiter="\t")
                if r and not r[0].startswith("#") and r[1] == f"{name}.json.gz"]
    check(rows, f"no workload in plans/workloads.tsv uses {name}.json.gz")
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "p.plan")
        s = compile_plan(path, plan, "141GB")
        if s:
            ratio = s["lower_bound_bytes"] / torch_peak
            print(f"{name}: batch {rec_batch}: {s['ops']} ops, {s['tensors']} tensors, in-core "
                  f"{s['in_core_peak_bytes']}, lower bound {s['lower_bound_bytes']}, PyTorch peak "
                  f"{torch_peak}, ratio {ratio:.4f}")
            check(LO <= ratio <= HI, f"{name}: LB / PyTorch peak = {ratio:.4f} outside [{LO}, {HI}]")
        for row in rows:
            wname, _, batch, budget = row[:4]
            if len(row) > 4:
                continue  # extra compile options (--image-size, tiling): another graph
            sb = compile_plan(path, plan, budget, None if batch == "-" else int(batch))
            if s and sb and batch != "-" and int(batch) > rec_batch:
                # the in-core peak: a plan that swaps has the budget's lower bound
                check(sb["in_core_peak_bytes"] > s["in_core_peak_bytes"],
                      f"{wname}: the in-core peak at batch {batch} is not above the one at "
                      f"{rec_batch}")
            if sb:
                print(f"{wname}: batch {batch}, budget {budget}: LB {sb['lower_bound_bytes']}, "
                      f"arena {sb['arena_bytes']}, fits {sb['fits_budget']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
