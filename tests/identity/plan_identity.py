#!/usr/bin/env python3
"""plan_identity.py SFC BASELINE [--write] — compile every bundled workload (plans/*.json.gz,
at its recorded batch and at its batch in plans/workloads.tsv) and every test graph (tests/data/graphs/*.json) with the
deterministic best-fit packer, and compare what the plan places with BASELINE:
arena, in-core peak, lower bound, and a SHA-256 of every device block (tensor, offset,
bytes, live steps, flags) and every step's operand blocks.

The baseline was written by the compiler as it stood before the IR gained per-step
uses, arenas, partial blocks and step times (commit 6f22575, 'sfc 0.1.0' plan minor 0):
refactoring the IR must not move a single byte. Fields a later format adds (host blocks,
step times) are not part of the digest; a plan that really changes placement must
update the baseline with --write in the same commit and say why.
"""
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile


def digest(sfc, graph, tmp, batch=None):
    plan = os.path.join(tmp, "p.plan")
    extra = ["--batch", batch] if batch else []
    r = subprocess.run([sfc, "compile", graph, "--packer", "best-fit", "-q", "-o", plan] + extra,
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{graph}: sfc compile exited {r.returncode}: {r.stderr.strip()}")
    r = subprocess.run([sfc, "inspect", plan, "--json", "--blocks", "--steps"],
                       capture_output=True, text=True, check=True)
    d = json.loads(r.stdout)
    blocks = [[b["tensor"], b["offset"], b["bytes"], b["first_step"], b["last_step"],
               b["persistent"], b["swapped_in"]] for b in d["blocks"]]
    steps = [[s["op_id"], s["blocks"]] for s in d["steps"]]
    h = hashlib.sha256(json.dumps([blocks, steps], separators=(",", ":")).encode()).hexdigest()
    return [str(d["arena_bytes"]), str(d["in_core_peak_bytes"]), str(d["lower_bound_bytes"]),
            str(len(blocks)), h[:16]]


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    sfc, baseline = sys.argv[1], sys.argv[2]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    graphs = sorted(glob.glob(os.path.join(root, "plans", "*.json.gz"))) + \
        sorted(glob.glob(os.path.join(root, "tests", "data", "graphs", "*.json")))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for g in graphs:
            rows[os.path.relpath(g, root)] = digest(sfc, g, tmp)
        with open(os.path.join(root, "plans", "workloads.tsv")) as f:
            for line in f:
                p = line.split()
                if line.startswith("#") or len(p) < 3 or p[2] == "-" or len(p) > 4:
                    continue  # extra compile options (e.g. tiling) plan something else
                key = f"plans/{p[1]}@{p[2]}"
                if key not in rows:
                    rows[key] = digest(sfc, os.path.join(root, "plans", p[1]), tmp, p[2])
    if "--write" in sys.argv[3:]:
        with open(baseline, "w") as f:
            f.write("# graph\tarena\tin_core_peak\tlower_bound\tblocks\tsha256[:16] (plan_identity.py)\n")
            for k, v in rows.items():
                f.write("\t".join([k] + v) + "\n")
        print(f"wrote {baseline} ({len(rows)} graphs)")
        return 0
    want = {}
    with open(baseline) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p = line.rstrip("\n").split("\t")
            want[p[0]] = p[1:]
    bad = 0
    for k, v in rows.items():
        if k not in want:
            print(f"{k}: not in the baseline")
            bad += 1
        elif want[k] != v:
            print(f"{k}: placement changed: baseline {want[k]}, now {v}")
            bad += 1
    for k in want:
        if k not in rows:
            print(f"{k}: in the baseline but not compiled")
            bad += 1
    print(f"plan identity: {len(rows) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
