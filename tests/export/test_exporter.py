#!/usr/bin/env python3
"""test_exporter.py — tools/sfc-export on tiny models, checked by independent rules.

Each case exports a real training iteration of a tiny model (tiny-cnn: 2 conv layers with
BN, in-place ReLU, max-pool and a linear head; tiny-mlp; tiny-transformer) and checks the
graph against facts derived by hand from the model definition (tools/sfcexport/models.py),
not against the exporter's own numbers:

  * it loads, compiles and verifies with sfc;
  * views never create tensors or double-count bytes: pure view ops (detach, t, view,
    _reshape_alias, ...) list no outputs, and the graph's activation/grad bytes equal
    the sum over ops of the bytes of the storages each op freshly produced;
  * in-place ops (relu_, add_, mul_) write the storage they read, and create nothing;
  * kinds: one param tensor per parameter and buffer, one optimizer tensor per momentum
    buffer, their bytes the model's; exactly one output (the loss, 4 bytes, phase loss);
  * phases come in order forward, loss, backward, update;
  * batch_axis: the input and every forward activation of tiny-cnn carry the batch on
    axis 0, params, optimizer state and the param grads do not;
  * conv/pool attrs and conv FLOPs equal the values computed by hand;
  * backward_of links each convolution_backward to a convolution;
  * the raw allocation trace is a valid DSA instance (lower < upper, sizes match) whose
    max live bytes (`sfc pack`) is the recorder's peak and near the profiler's;
  * the export-vs-PyTorch check: sfc's in-core peak / PyTorch's measured peak is within
    [0.98, 1.01], the exporter's own promise (docs/exporter.md, "Memory accounting";
    every model there comes out at 1.0000);
  * bad models fail with one line and exit 2.

Exit 77 (skip) when PyTorch is not installed. SFC points at the sfc binary.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPORT = os.path.join(ROOT, "tools", "sfc-export")
SFC = os.environ.get("SFC", os.path.join(ROOT, "build", "compiler", "sfc"))
VIEW_OPS = {"detach", "t", "view", "_reshape_alias", "transpose", "permute", "unsqueeze",
            "squeeze", "expand", "select", "slice", "as_strided", "alias", "_unsafe_view",
            "split", "split_with_sizes", "unbind", "chunk", "narrow", "view_as", "reshape"}


def have_torch():
    for py in ("/usr/bin/python3", sys.executable):
        if os.path.exists(py) and subprocess.run([py, "-c", "import torch"],
                                                 capture_output=True).returncode == 0:
            return True
    return False


TMP = tempfile.mkdtemp(prefix="sfc-export-test-")
_cache = {}


def export(model, batch, *extra):
    key = (model, batch) + extra
    if key not in _cache:
        out = os.path.join(TMP, f"{model}-b{batch}-{len(_cache)}.json")
        trace = out[:-5] + ".csv"
        p = subprocess.run([EXPORT, model, "--batch", str(batch), "-o", out, "--trace", trace,
                            "-q", *extra], capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(f"export {model} failed: {p.stderr}")
        with open(out) as f:
            _cache[key] = (out, json.load(f), trace)
    return _cache[key]


def compile_json(path, *extra):
    p = subprocess.run([SFC, "compile", path, "--budget", "1GiB", "--json", *extra],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


class TinyCnn(unittest.TestCase):
    B = 4

    def setUp(self):
        self.path, self.g, self.trace = export("tiny-cnn", self.B)
        self.t = {t["id"]: t for t in self.g["tensors"]}

    def test_compiles_and_verifies(self):
        plan = os.path.join(TMP, "tc.plan")
        p = subprocess.run([SFC, "compile", self.path, "--budget", "64MiB", "-o", plan, "-q"])
        self.assertEqual(p.returncode, 0)
        self.assertEqual(subprocess.run([SFC, "verify", plan], capture_output=True).returncode, 0)
        self.assertEqual(self.g["batch"], self.B)

    def test_views_create_nothing(self):
        views = [op for op in self.g["ops"] if op["type"] in VIEW_OPS]
        self.assertTrue(any(op["type"] == "_reshape_alias" for op in views))  # nn.Flatten
        for op in views:
            self.assertEqual(op["outputs"], [], op)
        # every non-persistent tensor is produced by exactly one op, as a fresh storage:
        # the bytes of the graph are the bytes of the storages, each counted once
        producers = {}
        for op in self.g["ops"]:
            for o in op["outputs"]:
                if o not in op["inputs"]:
                    producers.setdefault(o, []).append(op["id"])
        for t in self.g["tensors"]:
            if t["kind"] in ("activation", "grad", "workspace", "output"):
                self.assertEqual(len(producers.get(t["id"], [])), 1, t)
        # the flattened activation is the ReLU output's storage: 4*16*4*4 floats, once
        flat = [op for op in self.g["ops"] if op["type"] == "addmm"][0]
        x = self.t[flat["inputs"][1]]
        self.assertEqual(x["bytes"], self.B * 16 * 4 * 4 * 4)
        self.assertEqual(x["shape"], [self.B, 16, 4, 4])

    def test_in_place_resolves(self):
        relu_ = [op for op in self.g["ops"] if op["type"] == "relu_"]
        self.assertEqual(len(relu_), 1)
        op = relu_[0]
        self.assertEqual(op["inputs"], op["outputs"])
        bn = [o for o in self.g["ops"] if o["type"] == "native_batch_norm"][0]
        self.assertEqual(op["outputs"][0], bn["outputs"][0])  # relu_ wrote BN's output
        for op in self.g["ops"]:
            if op["type"].endswith("_") and op["type"] != "zero_":
                self.assertTrue(set(op["outputs"]) <= set(op["inputs"]), op)

    def test_kinds(self):
        by = {}
        for t in self.g["tensors"]:
            by.setdefault(t["kind"], []).append(t)
        # params: conv0 w+b, bn w+b, conv1 w+b, linear w+b; buffers: mean, var, count
        p_bytes = 4 * (8 * 27 + 8 + 8 + 8 + 16 * 72 + 16 + 10 * 256 + 10) + 4 * 16 + 8
        self.assertEqual(len(by["param"]), 11)
        self.assertEqual(sum(t["bytes"] for t in by["param"]), p_bytes)
        self.assertEqual(len(by["optimizer"]), 8)  # one momentum buffer per parameter
        self.assertEqual(sum(t["bytes"] for t in by["optimizer"]), p_bytes - 4 * 16 - 8)
        self.assertEqual({t["name"] for t in by["input"]} >= {"input.0", "target"}, True)
        self.assertEqual(len(by["output"]), 1)
        loss = by["output"][0]
        self.assertEqual((loss["bytes"], loss["shape"]), (4, []))

    def test_phases_in_order(self):
        order = {"forward": 0, "loss": 1, "backward": 2, "update": 3}
        seq = [order[op["phase"]] for op in self.g["ops"]]
        self.assertEqual(seq, sorted(seq))
        self.assertEqual(set(seq), {0, 1, 2, 3})
        self.assertEqual([op["type"] for op in self.g["ops"] if op["phase"] == "loss"][-1],
                         "nll_loss_forward")

    def test_batch_axis(self):
        for t in self.g["tensors"]:
            if t["kind"] in ("param", "optimizer"):
                self.assertNotIn("batch_axis", t, t)
        inp = [t for t in self.g["tensors"] if t["name"] == "input.0"][0]
        self.assertEqual(inp["batch_axis"], 0)
        for op in self.g["ops"]:
            if op["phase"] == "forward" and op["type"] in ("convolution", "relu", "addmm",
                                                           "max_pool2d_with_indices"):
                for o in op["outputs"]:
                    if ".workspace" in self.t[o]["name"]:  # a kernel's scratch, not a result
                        continue
                    self.assertEqual(self.t[o].get("batch_axis"), 0, (op, self.t[o]))
        # gradients of params have the params' shapes and no batch axis
        pshapes = {tuple(t["shape"]) for t in self.g["tensors"] if t["kind"] == "param"}
        upd_reads = {i for op in self.g["ops"] if op["phase"] == "update" for i in op["inputs"]}
        grads = [self.t[i] for i in upd_reads if self.t[i]["kind"] == "grad"]
        self.assertEqual(len(grads), 8)
        for t in grads:
            self.assertNotIn("batch_axis", t)
            self.assertIn(tuple(t["shape"]) if t["shape"] != [1, 10] else (10,), pshapes)

    def test_attrs_and_flops(self):
        convs = [op for op in self.g["ops"] if op["type"] == "convolution"]
        self.assertEqual(len(convs), 2)
        self.assertEqual(convs[0]["attrs"], {"kernel": [3, 3], "stride": [1, 1], "padding": [1, 1],
                                             "dilation": [1, 1], "groups": 1})
        self.assertEqual(convs[1]["attrs"]["stride"], [2, 2])
        # 2 * N*Cout*H*W * Cin*k*k: conv0 out 4x8x16x16, conv1 out 4x16x4x4
        self.assertEqual(convs[0]["flops"], 2 * self.B * 8 * 16 * 16 * 3 * 9)
        self.assertEqual(convs[1]["flops"], 2 * self.B * 16 * 4 * 4 * 8 * 9)
        pool = [op for op in self.g["ops"] if op["type"] == "max_pool2d_with_indices"][0]
        self.assertEqual(pool["attrs"]["kernel"], [2, 2])
        self.assertEqual(pool["attrs"]["stride"], [2, 2])
        self.assertIs(pool["attrs"]["ceil_mode"], False)
        self.assertTrue(all(op.get("time_us", -1) >= 0 for op in self.g["ops"]))

    def test_backward_of(self):
        ops = self.g["ops"]
        cb = [op for op in ops if op["type"] == "convolution_backward"]
        self.assertEqual(len(cb), 2)
        for op in cb:
            self.assertEqual(ops[op["backward_of"]]["type"], "convolution")
        self.assertEqual({ops[op["backward_of"]]["id"] for op in cb},
                         {op["id"] for op in ops if op["type"] == "convolution"})
        tb = [op for op in ops if op["type"] == "threshold_backward"]
        self.assertTrue(tb and all(ops[op["backward_of"]]["type"].startswith("relu") for op in tb))

    def test_trace(self):
        with open(self.trace) as f:
            rows = [line.strip().split(",") for line in f]
        self.assertEqual(rows[0], ["id", "lower", "upper", "size"])
        sizes = {f"t{t['id']}": t["bytes"] for t in self.g["tensors"]}
        for rid, lo, hi, size in rows[1:]:
            self.assertLess(int(lo), int(hi))
            self.assertEqual(int(size), sizes[rid])
        # every storage is a row; a kernel's scratch made explicit (op<k>.<type>.workspace)
        # is not a storage
        storages = [t for t in self.g["tensors"] if ".workspace" not in t["name"]]
        self.assertEqual(len(rows) - 1, len(storages))
        # the trace's max live bytes (sfc pack's lower bound) is the recorder's own peak,
        # and close to what the profiler saw (the allocator's events; the trace has no
        # op workspaces)
        p = subprocess.run([SFC, "pack", self.trace], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lb = int([ln for ln in p.stdout.splitlines() if "lower bound" in ln][0].split()[2])
        self.assertEqual(lb, self.g["measured"]["own_peak_bytes"])
        self.assertTrue(0.97 <= lb / self.g["measured"]["torch_peak_bytes"] <= 1.01)

    def test_peak_vs_pytorch(self):
        s = compile_json(self.path)
        m = self.g["measured"]
        ratio = s["in_core_peak_bytes"] / m["torch_peak_bytes"]
        self.assertGreaterEqual(ratio, 0.98)
        self.assertLessEqual(ratio, 1.01)


class TinyMlp(unittest.TestCase):
    def test_mlp(self):
        path, g, _ = export("tiny-mlp", 8)
        s = compile_json(path)
        self.assertEqual(s["ops"], len(g["ops"]))
        mm = [op for op in g["ops"] if op["type"] in ("addmm", "mm")]
        # forward addmm x2 (2*8*32*64, 2*8*64*10), backward mm for grads
        fwd = [op["flops"] for op in mm if op["phase"] == "forward"]
        self.assertEqual(fwd, [2 * 8 * 32 * 64, 2 * 8 * 64 * 10])
        ratio = s["in_core_peak_bytes"] / g["measured"]["torch_peak_bytes"]
        self.assertTrue(0.98 <= ratio <= 1.01, ratio)

    def test_adam(self):
        path, g, _ = export("tiny-mlp", 4, "--optimizer", "adam")
        opt = [t for t in g["tensors"] if t["kind"] == "optimizer"]
        # exp_avg, exp_avg_sq and step per parameter (4 parameters)
        self.assertEqual(len(opt), 12)
        compile_json(path)


    def test_builder_without_batch(self):
        """module:callable with no batch= parameter: its own batch (6) is recorded, batch
        axes by propagation; the input, the linear's output and the log-softmax carry it."""
        with open(os.path.join(TMP, "fixedb.py"), "w") as f:
            f.write("import torch\n"
                    "def make():\n"
                    "    m = torch.nn.Sequential(torch.nn.Linear(8, 4))\n"
                    "    return m, ((torch.randn(6, 8),), torch.randint(0, 4, (6,))), "
                    "torch.nn.functional.cross_entropy\n")
        out = os.path.join(TMP, "fixedb.json")
        p = subprocess.run([EXPORT, "fixedb:make", "--batch", "32", "-o", out], capture_output=True,
                           text=True, cwd=TMP)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("takes no batch=", p.stderr)
        with open(out) as f:
            g = json.load(f)
        self.assertEqual(g["batch"], 6)
        by_type = {op["type"]: op for op in g["ops"] if op["phase"] in ("forward", "loss")}
        t = {x["id"]: x for x in g["tensors"]}
        for typ in ("addmm", "_log_softmax"):
            self.assertEqual(t[by_type[typ]["outputs"][0]].get("batch_axis"), 0, typ)
        self.assertEqual([x.get("batch_axis") for x in g["tensors"] if x["name"] == "input.0"], [0])
        compile_json(out, "--batch", "12")


class TinyTransformer(unittest.TestCase):
    def test_folded_batch_axes(self):
        path, g, _ = export("tiny-transformer", 4)
        axes = [(t["batch_axis"], t["shape"][t["batch_axis"]]) for t in g["tensors"] if "batch_axis" in t]
        dims = {d for _, d in axes}
        self.assertIn(4, dims)  # [B, S, d]
        self.assertIn(4 * 4, dims)  # attention scores fold B*heads
        self.assertIn(4 * 16, dims)  # B*S rows of the MLM loss
        for t in g["tensors"]:
            if "batch_axis" in t:
                self.assertEqual(t["shape"][t["batch_axis"]] % 4, 0, t)
        # every backward op that produces something links to an earlier forward/loss op,
        # views' backwards (clone, _unsafe_view, cat of split) included; ones_like (the
        # seed gradient) has no forward op
        ops = g["ops"]
        for op in ops:
            if op["phase"] == "backward" and op["outputs"] and op["type"] != "ones_like":
                self.assertIn("backward_of", op, op)
                self.assertIn(ops[op["backward_of"]]["phase"], ("forward", "loss"))
        compile_json(path)
        # rescaling 4 -> 8 gives exactly what a real batch-8 export gives
        path8, _, _ = export("tiny-transformer", 8)
        scaled, real = compile_json(path, "--batch", "8"), compile_json(path8)
        self.assertEqual(scaled["in_core_peak_bytes"], real["in_core_peak_bytes"])
        self.assertEqual(scaled["lower_bound_bytes"], real["lower_bound_bytes"])


class BatchScaling(unittest.TestCase):
    def test_cnn_2_to_8(self):
        """A CNN's memory is affine in the batch: the rescaled b2 graph must match a real
        b8 export exactly (tolerance 0: every batch tensor is linear, nothing else moves)."""
        p2, _, _ = export("tiny-cnn", 2)
        p8, _, _ = export("tiny-cnn", 8)
        s, r = compile_json(p2, "--batch", "8"), compile_json(p8)
        self.assertEqual(s["in_core_peak_bytes"], r["in_core_peak_bytes"])
        self.assertEqual(s["lower_bound_bytes"], r["lower_bound_bytes"])
        self.assertEqual(s["batch"], 8)

    def test_fixed_time_fit(self):
        """fixed_time against hand-derived lines: t = 4 + 1.5 b through (4, 10) and (2, 7)
        gives a = 4; b1 < b2 (2 -> 3 for small batches) works the same way; a point pair
        that implies a negative or larger-than-t1 intercept is clamped to [0, t1]."""
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from sfcexport.exporter import fixed_time as f\n"
                "print(f(10, 7, 4, 2), f(7, 8.5, 2, 3), f(10, 5, 4, 2), f(10, 1, 4, 2),"
                " f(10, 12, 4, 2), f(0, 0, 4, 2))" % os.path.join(ROOT, "tools"))
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        p = subprocess.run([py, "-c", code], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        # (10,7): c = 1.5, a = 4; (7 at 2, 8.5 at 3): c = 1.5, a = 4; (10,5): a = 0;
        # (10,1): a = -8 -> 0; (10,12): a = 14 -> 10; all zero -> 0
        self.assertEqual([float(x) for x in p.stdout.split()], [4.0, 4.0, 0.0, 0.0, 10.0, 0.0])

    def test_time_fixed_us(self):
        """Every op that touches a batch-carrying tensor (and was aligned with the probe's
        op) has 0 <= time_fixed_us <= time_us; ops touching none have no field; sfc loads
        it, and --time-reps 1 still fits it."""
        for extra in ((), ("--time-reps", "1")):
            _, g, _ = export("tiny-cnn", 4, *extra)
            batchy = {t["id"] for t in g["tensors"] if t.get("batch_axis", -1) >= 0}
            n = 0
            for op in g["ops"]:
                touches = bool(batchy.intersection(op["inputs"] + op["outputs"]))
                if "time_fixed_us" in op:
                    n += 1
                    self.assertTrue(touches, op)
                    self.assertGreaterEqual(op["time_fixed_us"], 0.0)
                    self.assertLessEqual(op["time_fixed_us"], op["time_us"])
                else:
                    self.assertFalse(touches, op)  # tiny-cnn's sequence is identical at 2
            self.assertGreater(n, 10)


class Errors(unittest.TestCase):
    def run_export(self, *args):
        return subprocess.run([EXPORT, *args, "-o", os.path.join(TMP, "bad.json")],
                              capture_output=True, text=True)

    def check_one_line(self, p, needle):
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(needle, lines[0])
        self.assertTrue(lines[0].startswith("sfc-export: error: "))

    def test_unknown_model(self):
        self.check_one_line(self.run_export("no_such_model"), "unknown model 'no_such_model'")

    def test_bad_callable(self):
        self.check_one_line(self.run_export("os:getcwd"), "must return (module, example")

    def test_missing_module(self):
        self.check_one_line(self.run_export("no_such_mod:make"), "cannot load 'no_such_mod:make'")

    def export_module(self, name, source):
        """Writes TMP/name.py and exports name:make from TMP."""
        with open(os.path.join(TMP, name + ".py"), "w") as f:
            f.write("import torch\n" + source)
        return subprocess.run([EXPORT, f"{name}:make", "-o", os.path.join(TMP, "bad.json")],
                              capture_output=True, text=True, cwd=TMP)

    def test_untraceable(self):
        # a model whose forward fails: one line naming the error
        p = self.export_module("badmodel",
                               "class M(torch.nn.Module):\n"
                               "    def __init__(self):\n"
                               "        super().__init__()\n"
                               "        self.lin = torch.nn.Linear(3, 3)\n"
                               "    def forward(self, x):\n"
                               "        raise ValueError('cannot do this\\nsecond line')\n"
                               "def make(batch=2):\n"
                               "    return M(), torch.randn(batch, 3)\n")
        self.check_one_line(p, "cannot trace 'badmodel:make': ValueError: cannot do this")

    def test_no_parameters(self):
        p = self.export_module("noparams", "def make(batch=2):\n"
                                           "    return torch.nn.ReLU(), torch.randn(batch, 3)\n")
        self.check_one_line(p, "'noparams:make' has no trainable parameters")

    def test_bad_batch(self):
        self.check_one_line(self.run_export("tiny-mlp", "--batch", "0"), "--batch must be at least 1")
        self.check_one_line(self.run_export("tiny-mlp", "--time-reps", "0"),
                            "--time-reps must be at least 1")

    def test_help_has_example(self):
        p = subprocess.run([EXPORT, "--help"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("tools/sfc-export resnet18 --batch 4 -o resnet18-b4.json.gz", p.stdout)
        self.assertIn("sfc compile resnet18-b4.json.gz --batch 64", p.stdout)


if __name__ == "__main__":
    if not have_torch():
        print("test_exporter: skipped, PyTorch is not installed")
        sys.exit(77)
    if not os.path.exists(SFC):
        sys.exit(f"test_exporter: no sfc binary at {SFC} (set SFC)")
    prog = unittest.main(exit=False, verbosity=1)
    sys.exit(0 if prog.result.wasSuccessful() else 1)
