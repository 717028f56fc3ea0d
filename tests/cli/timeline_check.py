#!/usr/bin/env python3
"""timeline_check.py SFC ROOT TMPDIR — `sfc inspect --timeline` checked against other views.

A U-Net plan compiled under a budget that needs swaps, and the same graph in core. The
SVG must parse; each memory column's stacked bytes, kind by kind, must equal the bytes of
the device blocks live at the step it names, computed here from `sfc inspect --json`; the
budget line carries the plan's budget; the traffic bars sum to the swap bytes
`sfc compile --json` reports; the stall marks sum to the stall `sfc simulate --json`
reports; the in-core plan shows no traffic and no stall. Bad targets exit 2 with nothing
on stdout. Exit 0 when every check holds.
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_check  # noqa: E402

SFC, ROOT, TMP = sys.argv[1:4]
GRAPH = os.path.join(ROOT, "plans", "unet.json.gz")
NS = "{http://www.w3.org/2000/svg}"
sfc = cli_check.runner(SFC)
check = cli_check.check


def timeline(budget, name):
    plan = os.path.join(TMP, name + ".plan")
    svg = os.path.join(TMP, name + ".svg")
    comp = json.loads(sfc("compile", GRAPH, "--budget", budget, "--packer", "best-fit", "-o",
                          plan, "--json").stdout)
    sfc("inspect", plan, "--timeline", svg)
    view = json.loads(sfc("inspect", plan, "--json").stdout)
    sim = json.loads(sfc("simulate", plan, "--json").stdout)
    return comp, view, sim, ET.parse(svg).getroot()


def live_by_kind(view, step):
    kinds = {}
    for b in view["blocks"]:
        if b["first_step"] <= step <= b["last_step"] and b["bytes"]:
            k = view["tensors"][b["tensor"]]["kind"]
            kinds[k] = kinds.get(k, 0) + b["bytes"]
    return kinds


def rects(root, cls):
    return [r for r in root.iter(NS + "rect") if r.get("class") == cls]


comp, view, sim, root = timeline("120MiB", "swapped")
check(comp["swaps"] > 0, f"the 120 MiB plan swaps ({comp['swaps']})")
mem = rects(root, "mem")
cols = {}
for r in mem:
    cols.setdefault(int(r.get("data-col")), []).append(r)
check(len(cols) == min(view["step_count"], 1200), f"{len(cols)} memory columns")
bad = 0
for c, rs in cols.items():
    step = int(rs[0].get("data-step"))
    drawn = {r.get("data-kind"): int(r.get("data-bytes")) for r in rs}
    if drawn != live_by_kind(view, step):
        bad += 1
        if bad <= 3:
            print(f"column {c} step {step}: drawn {drawn}, plan {live_by_kind(view, step)}")
check(bad == 0, f"{bad} columns whose stacks differ from the plan's live blocks")
budget = [l for l in root.iter(NS + "line") if l.get("id") == "budget"]
check(len(budget) == 1 and int(budget[0].get("data-bytes")) == view["budget_bytes"],
      "the budget line carries the plan's budget")
out = sum(int(r.get("data-bytes")) for r in rects(root, "out"))
inn = sum(int(r.get("data-bytes")) for r in rects(root, "in"))
check(out == comp["swap_out_bytes"], f"swap-out bars {out} == {comp['swap_out_bytes']}")
check(inn == comp["swap_in_bytes"], f"swap-in bars {inn} == {comp['swap_in_bytes']}")
stall = sum(float(r.get("data-us")) for r in rects(root, "stall"))
check(abs(stall - sim["stall_us"]) <= 1e-3 * max(1.0, sim["stall_us"]) + 0.01,
      f"stall marks {stall:.3f} us == simulate's {sim['stall_us']:.3f} us")
print(f"swapped plan: {len(cols)} columns, {comp['swaps']} swaps, stall {stall:.1f} us")

comp, view, sim, root = timeline("8GiB", "incore")
check(comp["swaps"] == 0, "the 8 GiB plan is in core")
check(not rects(root, "out") and not rects(root, "in") and not rects(root, "stall"),
      "an in-core plan shows no traffic and no stall")

plan = os.path.join(TMP, "swapped.plan")
for target, why in ((os.path.join(TMP, "missing", "t.svg"), "a missing folder"),
                    (plan, "the plan itself")):
    p = subprocess.run([SFC, "inspect", plan, "--timeline", target], capture_output=True,
                       text=True)
    check(p.returncode == 2 and p.stdout == "", f"--timeline into {why}: exit 2, no stdout "
          f"(got {p.returncode}, {len(p.stdout)} bytes)")
check(os.path.getsize(plan) > 0, "the plan is untouched")
sys.exit(1 if cli_check.failures else 0)
