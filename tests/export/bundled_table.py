#!/usr/bin/env python3
"""bundled_table.py — the per-model numbers of docs/workloads.md, from the bundled graphs.

    SFC=build/compiler/sfc tests/export/bundled_table.py

For every plans/*.json.gz: recorded batch, ops, tensors, in-core peak and lower bound
(sfc compile under plans/default.yaml at the recorded batch), PyTorch's peak measured
while recording (the file's "measured"), their ratio, the same ratio above the persistent
state, the recorded iteration's time and sfc's compile time. Markdown on stdout.
"""
import glob
import gzip
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SFC = os.environ.get("SFC", os.path.join(ROOT, "build", "compiler", "sfc"))


def mib(n):
    return f"{n / 2**20:.1f}"


def main():
    print("| model | batch | ops | tensors | in-core peak MiB | lower bound MiB | PyTorch peak MiB "
          "| LB / PyTorch | same, above state | iteration s | compile ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(ROOT, "plans", "*.json.gz"))):
        with gzip.open(path, "rt") as f:
            g = json.load(f)
        p = subprocess.run([SFC, "compile", path, "-c", os.path.join(ROOT, "plans", "default.yaml"),
                            "--json"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bundled_table: {path}: {p.stderr.strip()}")
        s, m = json.loads(p.stdout), g["measured"]
        lb, tp, st = s["lower_bound_bytes"], m["torch_peak_bytes"], m["state_bytes"]
        print(f"| {os.path.basename(path)[:-8]} | {g['batch']} | {s['ops']} | {s['tensors']} | "
              f"{mib(s['in_core_peak_bytes'])} | {mib(lb)} | {mib(tp)} | {lb / tp:.4f} | "
              f"{(lb - st) / (tp - st):.4f} | {m['iteration_ms'] / 1e3:.1f} | {s['compile_ms']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
