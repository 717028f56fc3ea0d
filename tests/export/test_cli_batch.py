#!/usr/bin/env python3
"""test_cli_batch.py — `sfc compile --batch N` from the command line: usage errors, a graph
without "batch", a scaled size past the limits (one line, exit 2, no plan written), and
a hand-written graph whose rescaled numbers are derived by hand. No PyTorch needed."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SFC = os.environ.get("SFC", os.path.join(ROOT, "build", "compiler", "sfc"))
failures = []

# x[4,8] f32 (input, 128 B) -> fc (w: 8x2 f32, 64 B) -> y[4,2] (32 B) -> loss (4 B)
GRAPH = {
    "format": "sfc-graph", "version": 1, "name": "hand", "batch": 4,
    "tensors": [
        {"id": 0, "bytes": 128, "kind": "input", "shape": [4, 8], "dtype": "f32", "batch_axis": 0},
        {"id": 1, "bytes": 64, "kind": "param", "shape": [8, 2], "dtype": "f32"},
        {"id": 2, "bytes": 32, "kind": "activation", "shape": [4, 2], "dtype": "f32", "batch_axis": 0},
        {"id": 3, "bytes": 4, "kind": "output", "shape": [], "dtype": "f32"}],
    "ops": [
        {"id": 0, "type": "mm", "phase": "forward", "inputs": [0, 1], "outputs": [2], "time_us": 10},
        {"id": 1, "type": "mean", "phase": "loss", "inputs": [2], "outputs": [3], "time_us": 1}]}


def run(*args):
    return subprocess.run([SFC, *args], capture_output=True, text=True)


def expect_error(args, needle, plan=None):
    p = run(*args)
    lines = p.stderr.strip().splitlines()
    ok = p.returncode == 2 and len(lines) == 1 and needle in lines[0] and \
        (plan is None or not os.path.exists(plan))
    if not ok:
        failures.append(f"{args}: exit {p.returncode}, stderr {p.stderr!r}, wanted {needle!r}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        g = os.path.join(tmp, "hand.json")
        with open(g, "w") as f:
            json.dump(GRAPH, f)
        plan = os.path.join(tmp, "p.plan")
        for bad in ("0", "-3", "abc", "4x", "", "2147483649", "99999999999999999999"):
            expect_error(["compile", g, "--batch", bad, "-o", plan],
                         f"--batch: expected an integer from 1 to 2147483648, got '{bad}'", plan)
        expect_error(["compile", g, "--batch"], "option '--batch' needs a value")
        nob = dict(GRAPH)
        del nob["batch"]
        g2 = os.path.join(tmp, "nobatch.json")
        with open(g2, "w") as f:
            json.dump(nob, f)
        expect_error(["compile", g2, "--batch", "8", "-o", plan],
                     f"sfc: {g2}: --batch 8: the graph has no root \"batch\" field", plan)
        big = json.loads(json.dumps(GRAPH))
        big["tensors"][0]["bytes"] = 2 ** 30  # * 2^31 / 4 = 2^59 bytes: past 1 PiB
        g4 = os.path.join(tmp, "big.json")
        with open(g4, "w") as f:
            json.dump(big, f)
        expect_error(["compile", g4, "--batch", "2147483648", "-o", plan],
                     "tensor 0 would have more than 1125899906842624 bytes", plan)
        bad = dict(GRAPH, batch=0)
        g3 = os.path.join(tmp, "batch0.json")
        with open(g3, "w") as f:
            json.dump(bad, f)
        expect_error(["compile", g3], "$.batch: must be at least 1, got 0")
        # by hand: batch 4 -> 10: x 128 -> 320, y 32 -> 80, w and loss unchanged.
        # In-core peak = max over steps: step 0 (x, w, y) = 320 + 64 + 80 = 464;
        # step 1 (x, w, y, loss) = 320 + 64 + 80 + 4 = 468.
        p = run("compile", g, "--batch", "10", "--budget", "1MiB", "--json", "-o", plan)
        s = json.loads(p.stdout) if p.returncode == 0 else {}
        if s.get("in_core_peak_bytes") != 468 or s.get("batch") != 10:
            failures.append(f"scaled hand graph: exit {p.returncode}, {s}, {p.stderr!r}")
        if run("verify", plan).returncode != 0:
            failures.append("sfc verify of the scaled plan failed")
        p = run("compile", g, "--budget", "1MiB", "--json")
        s = json.loads(p.stdout) if p.returncode == 0 else {}
        if s.get("in_core_peak_bytes") != 128 + 64 + 32 + 4 or s.get("batch") != 4:
            failures.append(f"unscaled hand graph: {s}")
    for f in failures:
        print("FAIL:", f)
    print(f"test_cli_batch: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
