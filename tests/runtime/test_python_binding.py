#!/usr/bin/env python3
"""test_python_binding.py — runtime/python/sfcrt.py, the ctypes binding (issue 14 item 2).

Compiles plans with the sfc CLI, then drives them from Python through libsfcrt:
  - errors become sfcrt.Error with the runtime's own message: a missing file (IO), a
    corrupt plan (its corpus .err line), a step marked done with none pending (STATE);
  - the pull loop on the host device with integrity checks: two iterations, every step
    handed out once per iteration, the runtime's counters agree;
  - the sim device through the binding predicts what `sfc simulate --json` predicts;
  - a tiled plan (the 64 x 64 VGG-16 export rescaled to 256 x 256, tiling on, 2 GiB):
    tiled steps carry boxes, per-tile buffers their held boxes, recomputing steps the
    flag, backward tiles' outputs the accumulate modes, as many as compile --json says.
usage: test_python_binding.py SFC (the sfc binary); exit 77 when libsfcrt cannot load.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
import sfcrt  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}", file=sys.stderr)


def sfc(*args):
    p = subprocess.run([SFC, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def expect_error(fn, status, contains):
    try:
        fn()
    except sfcrt.Error as e:
        check(e.status == status, f"status {e.status}, expected {status} ({e.message})")
        check(contains in e.message, f"message '{e.message}' lacks '{contains}'")
        return
    check(False, f"no error (expected {status})")


def main():
    global SFC
    SFC = sys.argv[1]
    lib_dir = os.path.join(os.path.dirname(os.path.dirname(SFC)), "runtime", "libsfcrt.so")
    if os.path.exists(lib_dir):
        os.environ.setdefault("SFCRT_LIBRARY", lib_dir)
    try:
        sfcrt.library()
    except OSError as e:
        print(f"skip: {e}")
        return 77
    data = os.path.join(ROOT, "tests", "data")
    with tempfile.TemporaryDirectory() as tmp:
        # errors carry the runtime's message
        expect_error(lambda: sfcrt.Plan(os.path.join(tmp, "missing.plan")), "IO", "missing.plan")
        bad = os.path.join(data, "bad_plans", "blocks_crc.plan")
        want = open(bad + ".err").read().strip().split(": ", 2)[-1]
        expect_error(lambda: sfcrt.Plan(bad), "BAD_INPUT", want)

        # the pull loop on the host device, integrity on
        plan_path = os.path.join(tmp, "cnn.plan")
        rc, out, err = sfc("compile", os.path.join(data, "graphs", "small_cnn.json"), "-o",
                           plan_path, "-q")
        check(rc == 0, f"compile: {err}")
        info = json.loads(sfc("inspect", plan_path, "--json")[1])
        plan = sfcrt.Plan(plan_path)
        with sfcrt.Session(plan, device="host", integrity=True) as s:
            check(s.device == "host", f"device {s.device}")
            expect_error(s.done, "STATE", "no step is pending")
            seen = []
            for it in range(2):
                names = [step.name for step in s.iteration()]
                seen.append(names)
            st = s.stats()
            check(st.iterations == 2, f"iterations {st.iterations}")
            check(st.steps == 2 * info["step_count"], f"steps {st.steps}")
            check(len(seen[0]) == info["step_count"] and seen[0] == seen[1],
                  "each iteration hands out every step once, in order")
        # homes: below its in-core peak small_cnn's parameters live on the host between
        # uses (plan 1.3); home() says where each persistent tensor keeps its value
        homed_path = os.path.join(tmp, "homed.plan")
        rc, out, err = sfc("compile", os.path.join(data, "graphs", "small_cnn.json"), "--budget",
                           "1600KiB", "-o", homed_path, "-q")
        check(rc == 0, f"compile at 1600KiB: {err}")
        homed = sfcrt.Plan(homed_path)
        where = {}
        with sfcrt.Session(homed, device="host", integrity=True) as s:
            for t in homed.tables().tensors:
                if t.flags & 1:  # SFC_TENSOR_PERSISTENT
                    addr, w = s.home(t.index)
                    check(addr is not None, f"{t.name}: a host session gives an address")
                    where[t.name] = w
                elif t.flags & 8 == 0:  # not UNUSED: a block, but no home
                    expect_error(lambda: s.home(t.index), "INVALID_ARGUMENT", "not persistent")
            expect_error(lambda: s.home("no such tensor"), "INVALID_ARGUMENT", "no tensor")
            s.begin()
            name = next(iter(where))
            expect_error(lambda: s.home(name), "STATE", "an iteration is running")
            while s.next() is not None:
                s.done()
            s.end()
            s.run(1)  # integrity: every use of a homed tensor matched, and every home
        check("host" in where.values(), f"some tensor homed on the host: {where}")
        # the sim device predicts what sfc simulate does
        sim = json.loads(sfc("simulate", plan_path, "--json")[1])
        with sfcrt.Session(plan, device="sim") as s:
            s.run(1)
            p = s.stats().predicted_iteration_us
            check(abs(p - sim["predicted_iteration_us"]) <= 1e-6 * max(1.0, p),
                  f"sim {p} vs simulate {sim['predicted_iteration_us']}")
        # a tiled plan: boxes, held buffers, recompute, accumulate
        graph = os.path.join(data, "graphs", "image_size", "vgg16-64.json.gz")
        tiled = os.path.join(tmp, "tiled.plan")
        rc, out, err = sfc("compile", graph, "--image-size", "256", "--tiling", "on", "--budget",
                           "2GiB", "-o", tiled, "--json")
        check(rc == 0, f"tiled compile: {err}")
        c = json.loads(out)
        check(c["tiled_segments"] > 0, "the plan is tiled")
        counts = {"tiled": 0, "recompute": 0, "held": 0, "first": 0, "add": 0}
        with sfcrt.Session(sfcrt.Plan(tiled), device="host", integrity=True) as s:
            for step in s.iteration():
                if step.tile is not None:
                    counts["tiled"] += 1
                    check(all(b is not None for b in step.boxes), f"{step}: every operand boxed")
                counts["recompute"] += step.recompute
                counts["held"] += sum(h is not None for h in step.held)
                counts["first"] += step.accumulate.count(sfcrt.ACCUMULATE_FIRST)
                counts["add"] += step.accumulate.count(sfcrt.ACCUMULATE)
            check(s.stats().iterations == 1, "one tiled iteration")
        check(counts["recompute"] == c["recomputed_steps"],
              f"recomputed {counts['recompute']} vs {c['recomputed_steps']}")
        check(counts["tiled"] > 0 and counts["held"] > 0 and counts["first"] > 0 and
              counts["add"] > 0, f"tiled steps, held buffers and accumulation seen: {counts}")
        print(f"binding: host pull loop {info['step_count']} steps x 2, sim {p:.1f} us, tiled "
              f"plan {counts}")
    print("ok" if not failures else f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
