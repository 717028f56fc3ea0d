#!/usr/bin/env python3
"""time_calibration.py — the device time model against public measurements.

The bundled ResNet-50 graph was recorded on a CPU, so `sfc compile` models its op times
on the profile (compiler/src/time_model.c); `sfc simulate` replays the plan. Each row
below compiles it in-core, simulates one iteration and compares images/s = batch /
predicted iteration time with a published measurement (docs/workloads.md#device-time-
model-calibration says where each comes from). The prediction is deterministic (no
timing of this machine is involved); the check is that it stays within +-20 %.

Environment: SFC (the sfc binary), SFC_SOURCE_DIR (the repository root), as CTest sets.
Run by hand: SFC=build/compiler/sfc SFC_SOURCE_DIR=. python3 tests/core/time_calibration.py
"""
import json
import os
import subprocess
import sys
import tempfile

# (graph, batch, profile, budget, measured images/s, source)
ROWS = [
    ("resnet50", 128, "v100-nvlink2", "16GiB", 492.0,
     "out-of-core seed, Table 1: V100 16 GB in-core baseline, batch 128"),
    ("resnet50", 64, "rtx2080ti-pcie3", "11GiB", 294.0,
     "Lambda, RTX 2080 Ti Deep Learning Benchmarks (2019), FP32 ResNet-50"),
    ("resnet50", 64, "v100-nvlink2", "16GiB", 405.0,
     "the same Lambda table, FP32 ResNet-50 on a Tesla V100 (SXM3 32 GB)"),
]
TOLERANCE = 0.20


def main():
    sfc = os.environ.get("SFC")
    root = os.environ.get("SFC_SOURCE_DIR", ".")
    if not sfc:
        print("SFC must point at the sfc binary")
        return 2
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for graph, batch, profile, budget, measured, source in ROWS:
            plan = os.path.join(tmp, f"{graph}-{batch}-{profile}.plan")
            path = os.path.join(root, "plans", f"{graph}.json.gz")
            subprocess.run([sfc, "compile", path, "--batch", str(batch), "--profile", profile,
                            "--budget", budget, "-o", plan, "-q"], check=True)
            out = subprocess.run([sfc, "simulate", plan, "--json"], check=True,
                                 capture_output=True, text=True).stdout
            sim = json.loads(out)
            ips = batch / (sim["predicted_iteration_us"] * 1e-6)
            err = ips / measured - 1
            ok = abs(err) <= TOLERANCE and sim["times_from"] == f"{profile} (modelled: roofline)"
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {graph} batch {batch} on {profile}: predicted "
                  f"{ips:.0f} images/s ({sim['predicted_iteration_us'] / 1e3:.1f} ms, "
                  f"{sim['times_from']}), measured {measured:.0f} ({err:+.1%}; {source})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
