#!/usr/bin/env python3
"""batch_scaling.py — how well `sfc compile --batch` predicts a real export at another batch.

    tests/export/batch_scaling.py resnet18 2 4 8 [--image-size 64] [--seq-len L] [--tolerance 0.02]

Exports MODEL at each batch (tools/sfc-export, a real iteration each), then, for every
batch B after the first, compiles the FIRST export rescaled with --batch B and the real
export at B, and prints the relative error of the in-core peak and the lower bound
(scaled / real - 1). Exit 1 when an error's magnitude exceeds --tolerance, 77 when
PyTorch is missing (a skipped test). SFC points at the sfc binary (default build/).
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compile_json(sfc, graph, batch=None):
    cmd = [sfc, "compile", graph, "--budget", "128GiB", "--json"]
    if batch:
        cmd += ["--batch", str(batch)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: does not fit 128GiB, the numbers still count
        sys.exit(f"batch_scaling: {' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def predicted_time(graph, batch):
    """Total time_us of the graph rescaled as sfc does (ops touching batch tensors * r)."""
    with gzip.open(graph, "rt") as f:
        g = json.load(f)
    r = batch / g["batch"]
    batchy = {t["id"] for t in g["tensors"] if t.get("batch_axis", -1) >= 0}
    total = 0.0
    for op in g["ops"]:
        t = op.get("time_us", 0.0)
        total += t * r if batchy.intersection(op["inputs"] + op["outputs"]) else t
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("batches", type=int, nargs="+")
    ap.add_argument("--image-size", type=int)
    ap.add_argument("--seq-len", type=int)
    ap.add_argument("--tolerance", type=float, default=0.02)
    a = ap.parse_args()
    sfc = os.environ.get("SFC", os.path.join(ROOT, "build", "compiler", "sfc"))
    exporter = os.path.join(ROOT, "tools", "sfc-export")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        graphs = []
        for b in a.batches:
            out = os.path.join(tmp, f"b{b}.json.gz")
            cmd = [exporter, a.model, "--batch", str(b), "-o", out, "-q", "--no-profile"]
            if a.image_size:
                cmd += ["--image-size", str(a.image_size)]
            if a.seq_len:
                cmd += ["--seq-len", str(a.seq_len)]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                if "PyTorch is not installed" in p.stderr:
                    print("batch_scaling: skipped, PyTorch is not installed")
                    return 77
                sys.exit(f"batch_scaling: export failed: {p.stderr.strip()}")
            graphs.append(out)
        base = a.batches[0]
        print(f"{a.model}: graph recorded at batch {base}, rescaled with --batch, vs a real export")
        print(f"{'batch':>6} {'metric':>13} {'scaled':>14} {'real':>14} {'error':>9}")
        for b, g in zip(a.batches[1:], graphs[1:]):
            s, r = compile_json(sfc, graphs[0], b), compile_json(sfc, g)
            for key, label in (("in_core_peak_bytes", "in-core peak"), ("lower_bound_bytes", "lower bound")):
                err = s[key] / r[key] - 1.0
                worst = max(worst, abs(err))
                print(f"{b:>6} {label:>13} {s[key]:>14} {r[key]:>14} {err:>+9.4%}")
        print("op time (sum of time_us; CPU, one thread; informative, not checked):")
        for b, g in zip(a.batches[1:], graphs[1:]):
            ps, pr = predicted_time(graphs[0], b), predicted_time(g, b)
            print(f"{b:>6} {'time_us':>13} {ps:>14.0f} {pr:>14.0f} {ps / pr - 1:>+9.2%}")
    print(f"worst |error| of the memory numbers {worst:.4%} (tolerance {a.tolerance:.2%})")
    return 0 if worst <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
