#!/usr/bin/env python3
"""batch_scaling.py — how well `sfc compile --batch` predicts a real export at another batch.

    tests/export/batch_scaling.py resnet18 2 4 8 [--image-size 64] [--seq-len L] [--tolerance 0.02]

Exports MODEL at each batch (tools/sfc-export, a real iteration each), then, for every
batch B after the first, compiles the FIRST export rescaled with --batch B and the real
export at B, and prints the relative error of the in-core peak and the lower bound
(scaled / real - 1). Op times, for every pair of batches (B1 -> B2, B1 < B2): the B1
export's times rescaled to B2 under the linear rule and under sfc's rule with
time_fixed_us, against the B2 export's own times, summed and per op. Exit 1 when an error's magnitude exceeds --tolerance, 77 when
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


def load(graph):
    with gzip.open(graph, "rt") as f:
        return json.load(f)


def predicted_times(g, batch, linear=False):
    """Per-op time_us of graph g rescaled to batch as sfc does (batch_scale.c): an op that
    touches a batch tensor takes a + (t - a) * N / B with a = time_fixed_us (0 when absent,
    or always with linear=True: the plain linear rule sfc used before time_fixed_us)."""
    r = batch / g["batch"]
    batchy = {t["id"] for t in g["tensors"] if t.get("batch_axis", -1) >= 0}
    out = []
    for op in g["ops"]:
        t = op.get("time_us", 0.0)
        if batchy.intersection(op["inputs"] + op["outputs"]):
            a = 0.0 if linear else min(max(op.get("time_fixed_us", 0.0), 0.0), t)
            t = a + (t - a) * r
        out.append(t)
    return out


def time_report(src, dst, linear):
    """(summed-time error, per-op stats or None): per-op stats when the op sequences are
    identical — time-weighted mean |error| (sum |pred - real| / sum real) and the 10th,
    50th, 90th percentiles of pred/real - 1 over the ops that touch a batch tensor."""
    pred = predicted_times(src, dst["batch"], linear)
    real = [op.get("time_us", 0.0) for op in dst["ops"]]
    err = sum(pred) / sum(real) - 1
    if [o["type"] for o in src["ops"]] != [o["type"] for o in dst["ops"]]:
        return err, None
    batchy = {t["id"] for t in src["tensors"] if t.get("batch_axis", -1) >= 0}
    rel = sorted(p / r - 1 for p, r, op in zip(pred, real, src["ops"])
                 if r > 0 and batchy.intersection(op["inputs"] + op["outputs"]))
    wmae = sum(abs(p - r) for p, r in zip(pred, real)) / sum(real)
    q = [rel[min(len(rel) - 1, int(f * len(rel)))] for f in (0.1, 0.5, 0.9)] if rel else [0, 0, 0]
    return err, (wmae, *q)


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
            # profiled, as a user's export is: the memory numbers include the workspaces
            cmd = [exporter, a.model, "--batch", str(b), "-o", out, "-q"]
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
        print("op time (CPU, one thread; informative, not checked): rule 'linear' scales "
              "whole op times, 'fixed' keeps time_fixed_us;\n  sum = summed time error; "
              "per-op (identical op sequences only): time-weighted mean |error|, "
              "p10/p50/p90 of per-op error")
        loaded = [load(p) for p in graphs]
        print(f"{'from':>5} {'to':>4} {'rule':>7} {'sum':>9} {'w|err|':>8} {'p10':>8} "
              f"{'p50':>8} {'p90':>8}")
        for i in range(len(loaded)):
            for j in range(i + 1, len(loaded)):
                for linear in (True, False):
                    err, per = time_report(loaded[i], loaded[j], linear)
                    cols = " ".join(f"{x:>+8.1%}" for x in per) if per else "(op sequences differ)"
                    print(f"{a.batches[i]:>5} {a.batches[j]:>4} "
                          f"{'linear' if linear else 'fixed':>7} {err:>+9.1%} {cols}")
    print(f"worst |error| of the memory numbers {worst:.4%} (tolerance {a.tolerance:.2%})")
    return 0 if worst <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
