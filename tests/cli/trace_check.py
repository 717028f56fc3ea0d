#!/usr/bin/env python3
"""trace_check.py SFC ROOT TMPDIR — `sfc simulate --trace` checked by hand and against other views.

1. The hand-built swap plan (tests/data/runtime/swap.plan): every event at the time
   derived by hand in tests/cli/golden/simulate_swap.cmd (ops 10 us, copies 10 us of
   latency + 256 B at 25 GB/s = 10.01024 us), each stall naming the copy it waited for.
2. A U-Net plan compiled under a budget that needs swaps, and the same graph in core:
   the trace parses as JSON; the compute track's steps and stalls tile [0, end of the
   last step] without a gap or an overlap, in step order; the step durations sum to the
   compute time, the stalls to the stall time and the copies of each engine to its busy
   time that `sfc simulate --json` reports; the copies of one engine do not overlap; there
   is one copy event per swap; the last event ends at the predicted iteration time; each
   stall ends when the copy it names ends; the device-memory counter at each step equals
   the bytes of the device blocks live there, computed here from `sfc inspect --json`.
   The in-core plan has no copy and no stall.
   `sfc compile --json`'s behind_bound (the compiler's replay against its per-step time
   bound) agrees with the trace: losses positive, largest first, summing to no more than
   predicted - bound; and since every step of these graphs is a split point of the chain
   (fewer than 1536 steps), the chain grows by at least a step's compute from one step to
   the next, so the time lost before a step is at most the stall the trace shows there
   (before the end, step n: at most the copies' drain after the last step).
   The in-core plan loses nothing.
3. Bad targets (the plan itself, a directory, a missing value) exit 2, print nothing on
   stdout and leave the plan as it was.
Exit 0 when every check holds.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_check  # noqa: E402

SFC, ROOT, TMP = sys.argv[1:4]
EPS = 5e-6  # the trace prints times to the picosecond (1e-6 us): a sum of two rounds
sfc = cli_check.runner(SFC)
check = cli_check.check


def trace(plan, name):
    out = os.path.join(TMP, name + ".json")
    sfc("simulate", plan, "--trace", out)
    with open(out) as f:
        return json.load(f)


def events(t, ph, tid=None):
    return [e for e in t["traceEvents"] if e["ph"] == ph and (tid is None or e.get("tid") == tid)]


# 1. by hand
swap = os.path.join(ROOT, "tests", "data", "runtime", "swap.plan")
t = trace(swap, "swap")
copy = 10 + 256 / 25e3
want = [  # (name, ts, dur, waits_for)
    ("make_b", 0, 10, None),
    ("stall", 10, copy, "swap-out of b"),
    ("make_a", 10 + copy, 10, None),
    ("use_a", 20 + copy, 10, None),
    ("stall", 30 + copy, copy, "swap-in of b"),
    ("join", 30 + 2 * copy, 10, None),
]
got = sorted(events(t, "X", 1), key=lambda e: (e["args"]["step"], e["cat"] != "stall"))
check(len(got) == len(want), f"swap.plan: {len(got)} compute events, want {len(want)}")
for e, (name, ts, dur, waits) in zip(got, want):
    check(e["name"] == name and abs(e["ts"] - ts) < EPS and abs(e["dur"] - dur) < EPS,
          f"swap.plan: {e['name']} at {e['ts']} for {e['dur']}, want {name} at {ts} for {dur}")
    check(e.get("args", {}).get("waits_for") == waits,
          f"swap.plan: {name} at {ts} waits for {e.get('args', {}).get('waits_for')}, want {waits}")
outs, ins = events(t, "X", 3), events(t, "X", 2)
check(len(outs) == 1 and abs(outs[0]["ts"] - 10) < EPS and abs(outs[0]["dur"] - copy) < EPS
      and outs[0]["name"] == "b", f"swap.plan: the swap-out {outs}")
check(len(ins) == 1 and abs(ins[0]["ts"] - (30 + copy)) < EPS and abs(ins[0]["dur"] - copy) < EPS
      and ins[0]["name"] == "b", f"swap.plan: the swap-in {ins}")
check("not measured" in t["otherData"]["times"], "the trace says its times are predicted")


# 2. against the other views
def live_bytes(view, step):
    return sum(b["bytes"] for b in view["blocks"] if b["first_step"] <= step <= b["last_step"])


def against_views(budget, name):
    graph = os.path.join(ROOT, "plans", "unet.json.gz")
    plan = os.path.join(TMP, name + ".plan")
    summary = json.loads(sfc("compile", graph, "--budget", budget, "--packer", "best-fit", "-o",
                             plan, "--json").stdout)
    t = trace(plan, name)
    sim = json.loads(sfc("simulate", plan, "--json").stdout)
    view = json.loads(sfc("inspect", plan, "--json").stdout)
    comp = sorted(events(t, "X", 1), key=lambda e: (e["args"]["step"], e["cat"] != "stall"))
    steps = [e for e in comp if e["cat"] != "stall"]
    stalls = [e for e in comp if e["cat"] == "stall"]
    check([e["args"]["step"] for e in steps] == list(range(len(view["steps"]))),
          f"{name}: one compute event per step, in step order")
    at = 0.0
    for e in comp:
        check(abs(e["ts"] - at) < EPS, f"{name}: {e['name']} starts at {e['ts']}, not {at}")
        at = e["ts"] + e["dur"]
    check(abs(sum(e["dur"] for e in steps) - sim["compute_us"]) < 1e-3,
          f"{name}: steps sum to {sum(e['dur'] for e in steps)}, compute {sim['compute_us']}")
    check(abs(sum(e["dur"] for e in stalls) - sim["stall_us"]) < 1e-3,
          f"{name}: stalls sum to {sum(e['dur'] for e in stalls)}, stall {sim['stall_us']}")
    copies = {}
    for tid, busy in ((2, "h2d_busy_us"), (3, "d2h_busy_us")):
        cs = sorted(events(t, "X", tid), key=lambda e: e["ts"])
        for a, b in zip(cs, cs[1:]):
            check(a["ts"] + a["dur"] <= b["ts"] + EPS, f"{name}: copies overlap on track {tid}")
        check(abs(sum(e["dur"] for e in cs) - sim[busy]) < 1e-3, f"{name}: {busy}")
        for e in cs:
            copies[e["args"]["swap"]] = e
    check(len(copies) == len(view["swaps"]) == sim["swaps_in"] + sim["swaps_out"],
          f"{name}: {len(copies)} copies, {len(view['swaps'])} swaps")
    for e in copies.values():
        w = view["swaps"][e["args"]["swap"]]
        check(e["cat"] == ("swap-in" if w["direction"] == "in" else "swap-out") and
              e["args"]["bytes"] == w["bytes"] and e["name"] == view["tensors"][w["tensor"]]["name"],
              f"{name}: copy {e['args']['swap']} is not its swap")
    for e in stalls:
        c = copies.get(e["args"].get("swap"))
        check(c is not None and abs(c["ts"] + c["dur"] - (e["ts"] + e["dur"])) < EPS,
              f"{name}: the stall before step {e['args']['step']} does not end with its copy")
    end = max(e["ts"] + e["dur"] for e in events(t, "X"))
    check(abs(end - sim["predicted_iteration_us"]) < 1e-3,
          f"{name}: the trace ends at {end}, predicted {sim['predicted_iteration_us']}")
    mem = events(t, "C")
    check(len(mem) == len(view["steps"]), f"{name}: one memory sample per step")
    for k, e in enumerate(mem):
        check(e["args"]["bytes"] == live_bytes(view, k), f"{name}: device bytes at step {k}")
    behind = summary["behind_bound"]
    lag = summary["predicted_iteration_s"] - summary["lower_bound_iteration_s"]
    check(len(view["steps"]) < 1536, f"{name}: every step is a split point of the chain")
    check(all(b["s"] > 0 for b in behind) and
          all(a["s"] >= b["s"] for a, b in zip(behind, behind[1:])) and
          sum(b["s"] for b in behind) <= lag * (1 + 1e-9) + 1e-12,
          f"{name}: behind_bound {behind}, predicted - bound {lag} s")
    stall_at = {e["args"]["step"]: e["dur"] for e in stalls}
    # the end (step n): what the copies draining after the last step take
    stall_at[len(view["steps"])] = sim["predicted_iteration_us"] - (steps[-1]["ts"] + steps[-1]["dur"])
    for b in behind:
        k = b["step"]
        check(k <= len(view["steps"]) and
              (k == len(view["steps"]) or b["op"] == view["steps"][k]["op"]) and
              b["s"] * 1e6 <= stall_at.get(k, 0) + EPS,
              f"{name}: {b['s'] * 1e6} us lost before step {k}, stall there {stall_at.get(k, 0)} us")
    return len(copies), len(stalls), len(behind)


n_copies, n_stalls, n_behind = against_views("120MiB", "swapped")
check(n_copies > 0 and n_stalls > 0, f"the swapped U-Net plan has copies ({n_copies}) and stalls")
check(n_behind > 0, "the swapped U-Net plan falls behind its bound somewhere")
n_copies, n_stalls, n_behind = against_views("8GiB", "incore")
check(n_copies == 0 and n_stalls == 0, "the in-core plan has no copy and no stall")
check(n_behind == 0, "the in-core plan loses nothing to the bound")

# 3. bad targets
before = open(swap, "rb").read()
for args in (("--trace", swap), ("--trace", TMP), ("--trace",)):
    p = sfc("simulate", swap, *args, ok=(2,))
    check(p.stdout == "" and p.stderr.strip(), f"simulate {' '.join(args)}: exit 2 with a message only")
check(open(swap, "rb").read() == before, "the plan is unchanged")

print("trace: ok" if cli_check.failures == 0 else f"trace: {cli_check.failures} failures")
sys.exit(1 if cli_check.failures else 0)
