"""exporter.py — sfc-export's driver: build the model, run one real training iteration
under the recorder (record.py), account for every byte PyTorch's allocator handed out
(account.py), find the batch axis, compare the graph's in-core peak with PyTorch's own
peak (a warning beyond 2 %), and write sfc-graph v1 (docs/exporter.md,
docs/graph-format.md).

The iteration recorded is the SECOND one: a first, unrecorded iteration creates the
optimizer state (momentum, Adam moments) and warms the allocator and kernels up, so the
recording shows the steady state a long training run repeats. Gradients are dropped
(zero_grad(set_to_none=True)) before the recorded iteration, as a training loop does.

Batch axis (the probe): after the recorded iteration at batch B, the same model runs one
more iteration at batch B2 (B // 2, or B + 1 when B < 4) under a second recorder. When
both recordings have the same op sequence, a tensor carries the batch when its byte size
differs between them and scales exactly linearly (bytes * B2 == bytes2 * B); its batch
axis is the one shape axis that changed, also linearly. A batch folded into
another dim (B*S rows of a transformer's reshape) is still an axis that scales linearly.
When the op sequences differ (data-dependent control flow), the exporter falls back to the
recorder's propagation flag plus the first axis of size B, and says so on stderr.

Op times at two batches: each batch is timed over --time-reps iterations (default 2) and
every op keeps its minimum. An op that touches a batch-carrying tensor and is aligned
with an op of the probe gets time_fixed_us, the batch-independent part a of the line
t(b) = a + c*b through its two (batch, time) points, clamped to [0, time_us]
(fixed_time); `sfc compile --batch N` then predicts a + (time_us - a) * N / B
(compiler/src/batch_scale.c). Cost: 2 * time_reps + 1 iterations in all.

Workspaces under --batch: the probe's op gives each workspace at B2 too; one that does
not follow sfc's rule (x N/B on ops touching a batch tensor, constant otherwise)
becomes explicit workspace tensors, a constant and a per-sample part (_batch_workspaces).
"""
import gzip
import importlib
import inspect
import io
import json
import os
import sys
import time

import torch

from . import account as acct
from . import models
from . import safe_write
from .record import Recorder


class ExportError(Exception):
    """A problem reported as one line and exit status 2."""


def _one_line(e):
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


# --------------------------------------------------------------------------- workloads
def _filter_kwargs(fn, kw):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return kw
    return {k: v for k, v in kw.items() if k in params}


def _torchvision(name, image_size):
    try:
        import torchvision
    except ImportError as e:
        raise ExportError(f"torchvision is not installed ({e}); run tools/bootstrap") from e
    ctor = getattr(torchvision.models, name, None)
    if ctor is None or not callable(ctor) or name.startswith("_") or name[0].isupper():
        raise ExportError(f"unknown model '{name}': not a torchvision model, a built-in "
                          f"({', '.join(sorted(models.BUILTIN))}) or module:callable")
    size = image_size or (299 if name == "inception_v3" else 224)

    def make(batch):
        try:
            m = ctor(weights=None)
        except TypeError:
            m = ctor()
        x = torch.randn(batch, 3, size, size)
        y = torch.randint(0, 1000, (batch,))
        return m, ((x,), y), _first_output_ce

    return make


def _first_output_ce(out, target):
    if not isinstance(out, torch.Tensor):  # googlenet / inception return named tuples in train mode
        out = out[0]
    return torch.nn.functional.cross_entropy(out, target)


def resolve(spec, image_size=None, seq_len=None):
    """MODEL -> make(batch) returning (module, (inputs, target), loss_fn)."""
    if ":" in spec:
        mod, _, attr = spec.partition(":")
        try:
            sys.path.insert(0, os.getcwd())
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise ExportError(f"cannot load '{spec}': {e}") from e
        builder = fn
    elif spec in models.BUILTIN:
        builder = models.BUILTIN[spec]
    else:
        return _torchvision(spec, image_size)
    opts = {"image_size": image_size, "seq_len": seq_len}

    def make(batch):
        kw = {k: v for k, v in dict(opts, batch=batch).items() if v is not None}
        res = builder(**_filter_kwargs(builder, kw))
        if not isinstance(res, tuple) or len(res) not in (2, 3):
            raise ExportError(f"{spec} must return (module, example[, loss_fn]), got {type(res).__name__}")
        m, ex = res[0], res[1]
        loss_fn = res[2] if len(res) == 3 else None
        if not isinstance(m, torch.nn.Module):
            raise ExportError(f"{spec} returned {type(m).__name__}, not a torch.nn.Module")
        if isinstance(ex, torch.Tensor):  # a bare batch: the loss is the mean output
            ex = ((ex,), None)
        inputs, target = ex
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        if loss_fn is None:
            loss_fn = (lambda out, _t: out.float().mean()) if target is None else _first_output_ce
        return m, (tuple(inputs), target), loss_fn

    make.takes_batch = "batch" in _filter_kwargs(builder, {"batch": 1})
    return make


# --------------------------------------------------------------------------- the iteration
def _example_tensors(inputs, target):
    ts = [t for t in inputs if isinstance(t, torch.Tensor)]
    if isinstance(target, torch.Tensor):
        ts.append(target)
    return ts


def _iteration(model, inputs, target, loss_fn, opt, rec=None):
    """One training iteration; with a recorder, phases are marked around each part."""
    def phase(p):
        if rec is not None:
            rec.phase = p
    phase("forward")
    out = model(*inputs)
    phase("loss")
    loss = loss_fn(out, target)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise ExportError("the loss must be a single-element tensor")
    del out
    phase("backward")
    hooks = rec.start_backward(loss) if rec is not None else []
    loss.backward()
    for h in hooks:
        h.remove()
    if rec is not None:
        rec.end_backward()
    phase("update")
    opt.step()
    return loss


def _declare_state(rec, model, opt, inputs, target):
    names = {}
    for n, p in model.named_parameters():
        names[id(p)] = n
        rec.declare(p, n, "param")
    for n, b in model.named_buffers():
        rec.declare(b, n, "param")
    for p, st in opt.state.items():
        for key, v in sorted(st.items()):
            if isinstance(v, torch.Tensor):
                rec.declare(v, f"{names.get(id(p), 'param')}.{key}", "optimizer")
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor):
            rec.declare(t, f"input.{i}", "input", batch=True)
    if isinstance(target, torch.Tensor):
        rec.declare(target, "target", "input", batch=True)
    elif target is not None:  # a tuple, list or dict of targets
        from torch.utils._pytree import tree_flatten
        for i, t in enumerate(tree_flatten(target)[0]):
            if isinstance(t, torch.Tensor):
                rec.declare(t, f"target.{i}", "input", batch=True)


def record_once(model, opt, example, loss_fn, device, timing, profile, calls=False):
    """Record one iteration; returns (recorder, dsa rows, measured dict).

    With profile (CPU), the iteration runs under torch.profiler with profile_memory=True
    and every op inside a profiler range, and account.py applies the allocator's events
    to the recording (workspaces, hidden tensors, PyTorch's frees; docs/exporter.md,
    "Memory accounting"). Without it only PyTorch's frees (the recorder's own weak
    references) are applied."""
    inputs, target = example
    opt.zero_grad(set_to_none=True)
    sync = torch.cuda.synchronize if device.type == "cuda" else None
    use_prof = profile and device.type != "cuda"
    rec = Recorder(timing=timing, sync=sync, mark=use_prof, calls=calls)
    _declare_state(rec, model, opt, inputs, target)
    handles = rec.attach_module_names(model)
    measured = {}
    prof = None
    try:
        if device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        elif use_prof:
            from torch.profiler import ProfilerActivity, profile as tprofile
            prof = tprofile(activities=[ProfilerActivity.CPU], profile_memory=True)
            prof.__enter__()
        t0 = time.perf_counter()
        try:
            with rec:
                loss = _iteration(model, inputs, target, loss_fn, opt, rec)
        finally:
            if prof is not None:
                prof.__exit__(None, None, None)
        measured["iteration_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    finally:
        for h in handles:
            h.remove()
    rec.finish(loss)
    events = acct.allocation_events(prof, device.type) if prof is not None else None
    stats = acct.account(rec, events, attribute=rec.mark)
    rec.account = stats
    rows = acct.trace_rows(rec)
    # the persistent state: storages that existed before the iteration and that it uses
    state = sum(t["bytes"] for t in rec.tensors
                if t["kind"] in acct.PERSISTENT and t["id"] not in stats["claimed"])
    measured["state_bytes"] = state
    measured["own_peak_bytes"] = acct.rows_peak(rows)
    if device.type == "cuda":
        measured["torch_peak_bytes"] = int(torch.cuda.max_memory_allocated())
        measured["torch_peak_source"] = "torch.cuda.max_memory_allocated"
    elif prof is not None:
        measured["torch_peak_bytes"] = state + stats["torch_net_peak"]
        measured["torch_peak_source"] = ("state_bytes + peak of the CPU allocator's blocks "
                                         "allocated during the iteration (torch.profiler)")
    del loss
    return rec, rows, measured


def _min_times(rec, model, opt, example, loss_fn, dev, reps):
    """Run reps - 1 more timed iterations; each op's time_us becomes its minimum over all
    of them (the fastest run is the one least disturbed by other work on a shared
    machine, and the profiler's per-op overhead is absent from the unprofiled ones).
    A repetition whose op sequence differs from rec's is ignored. Returns how many
    iterations the minimum was taken over."""
    used = 1
    for _ in range(reps - 1):
        again, _, _ = record_once(model, opt, example, loss_fn, dev, True, False)
        if [o["type"] for o in again.ops] != [o["type"] for o in rec.ops]:
            continue
        used += 1
        for op, o2 in zip(rec.ops, again.ops):
            if "time_us" in op and "time_us" in o2:
                op["time_us"] = min(op["time_us"], o2["time_us"])
    return used


PEAK_TOLERANCE = 0.02  # the in-core peak vs PyTorch's: warn when further apart


def _batch_workspaces(rec, rec2, op_pairs, batch, batch2):
    """Make every workspace rescale exactly under `sfc compile --batch`, which multiplies
    workspace_bytes by N/B when the op touches a batch-carrying tensor and leaves it
    alone otherwise. The probe's op gives the workspace at batch2: when that rule
    already holds (linear, or constant on an op without batch tensors) nothing changes;
    otherwise the workspace w = a + c*batch (c = (w - w2) / (batch - batch2), a whole
    number of bytes per sample) becomes up to two explicit `workspace` tensors the op
    produces: a bytes without a batch axis and c*batch bytes with batch_axis 0. A
    workspace that is not affine keeps workspace_bytes (exact at the recorded batch)
    and is counted. Returns that count."""
    batchy = {t["id"] for t in rec.tensors if t.get("batch_axis", -1) >= 0}
    odd = 0
    for k, j in op_pairs.items():
        op = rec.ops[k]
        w, w2 = op.get("workspace_bytes", 0), rec2.ops[j].get("workspace_bytes", 0)
        if w == 0 or op["type"] != rec2.ops[j]["type"]:
            continue
        touches = bool(batchy.intersection(op["inputs"]) or batchy.intersection(op["outputs"]))
        if (w * batch2 == w2 * batch) if touches else (w == w2):
            continue
        c, r = divmod(w - w2, batch - batch2)
        a = w - c * batch
        if r != 0 or c < 0 or a < 0:
            odd += 1
            continue
        del op["workspace_bytes"]
        for part, axis in ((a, None), (c * batch, 0)):
            if part == 0:
                continue
            tid = len(rec.tensors)
            t = {"id": tid, "name": f"op{k}.{op['type']}.workspace{'' if axis is None else '.batch'}",
                 "bytes": part, "kind": "workspace", "shape": [part], "dtype": "u8"}
            if axis is not None:
                t["batch_axis"] = axis
            rec.tensors.append(t)
            rec.alloc_op[tid] = k
            op["outputs"].append(tid)
    return odd


def fixed_time(t1, t2, b1, b2):
    """The batch-independent part a of t(b) = a + c*b through (b1, t1) and (b2, t2),
    clamped to [0, t1]: a = (t2*b1 - t1*b2) / (b1 - b2). b1 != b2."""
    a = (t2 * b1 - t1 * b2) / (b1 - b2)
    return min(max(a, 0.0), t1)


def _fit_fixed_times(rec, rec2, op_pairs, batch, batch2):
    """time_fixed_us for every op of rec that touches a batch-carrying tensor and was
    aligned with an op of the probe's recording rec2 (both timed). Returns the count."""
    batchy = {t["id"] for t in rec.tensors if t.get("batch_axis", -1) >= 0}
    n = 0
    for k, j in op_pairs.items():
        op, o2 = rec.ops[k], rec2.ops[j]
        if "time_us" not in op or "time_us" not in o2:
            continue
        if not batchy.intersection(op["inputs"]) and not batchy.intersection(op["outputs"]):
            continue
        op["time_fixed_us"] = fixed_time(op["time_us"], o2["time_us"], batch, batch2)
        n += 1
    return n


def _pair_tensors(rec_a, rec_b):
    """Pairs (tensor of A, tensor of B) that are the same tensor at two batch sizes.

    Persistent tensors are declared in the same order in both recordings, so they pair
    by id. Produced tensors pair through the ops that produce them: the two op sequences
    are aligned by type (difflib; identical sequences align one to one), and matched ops
    pair their outputs by position. Returns (pairs, exact, op_pairs) where exact says
    whether the sequences were identical and op_pairs maps matched op indices A -> B."""
    import difflib
    pairs = {}
    for ta, tb in zip(rec_a.tensors, rec_b.tensors):
        if rec_a.alloc_op.get(ta["id"], -1) < 0 and rec_b.alloc_op.get(tb["id"], -1) < 0 \
                and ta["name"] == tb["name"]:
            pairs[ta["id"]] = tb["id"]
    ta_types = [o["type"] for o in rec_a.ops]
    tb_types = [o["type"] for o in rec_b.ops]
    exact = ta_types == tb_types
    if exact:
        blocks = [(0, 0, len(ta_types))]
    else:
        blocks = difflib.SequenceMatcher(None, ta_types, tb_types, autojunk=False).get_matching_blocks()
    op_pairs = {}
    for i, j, n in blocks:
        for k in range(n):
            op_pairs[i + k] = j + k
            oa, ob = rec_a.ops[i + k], rec_b.ops[j + k]
            if len(oa["outputs"]) != len(ob["outputs"]):
                continue
            for x, y in zip(oa["outputs"], ob["outputs"]):
                if rec_a.alloc_op.get(x) == i + k and rec_b.alloc_op.get(y) == j + k:
                    pairs.setdefault(x, y)
    return pairs, exact, op_pairs


def _batch_axes(rec_a, rec_b, batch, batch2):
    """Tensor id -> batch axis, by comparing recordings at two batch sizes.

    Returns (axes, paired, nonlinear, exact, op_pairs): tensors that could not be paired
    keep no axis from here (the caller falls back to propagation for them)."""
    pairs, exact, op_pairs = _pair_tensors(rec_a, rec_b)
    axes, nonlinear = {}, 0
    for ida, idb in pairs.items():
        ta, tb = rec_a.tensors[ida], rec_b.tensors[idb]
        if ta["bytes"] == tb["bytes"]:
            axes[ida] = -1
            continue
        sa, sb = ta.get("shape"), tb.get("shape")
        if ta["bytes"] * batch2 != tb["bytes"] * batch or sa is None or sb is None or len(sa) != len(sb):
            nonlinear += 1
            axes[ida] = -1
            continue
        diff = [i for i, (x, y) in enumerate(zip(sa, sb)) if x != y]
        if len(diff) == 1 and sa[diff[0]] * batch2 == sb[diff[0]] * batch \
                and sa[diff[0]] % batch == 0:  # sfc compile --batch needs a multiple of B
            axes[ida] = diff[0]
        else:
            nonlinear += 1
            axes[ida] = -1
    return axes, len(pairs), nonlinear, exact, op_pairs


def _propagated_axes(rec, batch):
    axes = {}
    for t in rec.tensors:
        if t["id"] in rec.carries and t.get("shape"):
            for i, d in enumerate(t["shape"]):
                if d == batch:
                    axes[t["id"]] = i
                    break
    return axes


def device_name(dev):
    """The graph's "device": the GPU's own name on CUDA ("NVIDIA H100 80GB HBM3", which the
    compiler matches against a profile's model, h100-..., to use the measured times),
    otherwise torch's name ("cpu"). "cuda:0" would match no profile."""
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return str(dev)


def make_optimizer(model, optimizer):
    """The optimizer of an exported iteration (sfc-train builds the same one)."""
    if optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    if optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=1e-4)
    raise ExportError(f"unknown optimizer '{optimizer}' (expected sgd or adam)")


def export(spec, batch=8, image_size=None, seq_len=None, optimizer="sgd", device="cpu",
           probe=True, profile=True, seed=0, time_decimals=None, time_reps=2, log=None,
           record_calls=False):
    """Run the export; returns (graph dict, dsa rows, info dict)."""
    if batch < 1:
        raise ExportError(f"--batch must be at least 1, got {batch}")
    if time_reps < 1:
        raise ExportError(f"--time-reps must be at least 1, got {time_reps}")
    torch.manual_seed(seed)
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ExportError("--device cuda: no CUDA device is available")
    make = resolve(spec, image_size, seq_len)
    t_start = time.perf_counter()
    try:
        model, example, loss_fn = make(batch)
        model.to(dev).train()
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's builder failed: one clear line
        raise ExportError(f"cannot build '{spec}': {_one_line(e)}") from e
    if not any(p.requires_grad for p in model.parameters()):
        raise ExportError(f"'{spec}' has no trainable parameters: nothing to train")
    first = next((t for t in example[0] if isinstance(t, torch.Tensor) and t.dim() > 0), None)
    if not getattr(make, "takes_batch", True) and first is not None and first.shape[0] != batch:
        if log:  # the builder chose its own batch: record that one
            log(f"sfc-export: note: '{spec}' takes no batch=; its example has batch "
                f"{first.shape[0]} (dim 0 of the first input), recorded as the graph's batch")
        batch = int(first.shape[0])
    if not getattr(make, "takes_batch", True):
        probe = False  # it cannot build another batch size: propagation only
    inputs, target = example

    def to_dev(ex):
        from torch.utils._pytree import tree_map
        ins, tg = ex
        return (tuple(t.to(dev) if isinstance(t, torch.Tensor) else t for t in ins),
                tree_map(lambda t: t.to(dev) if isinstance(t, torch.Tensor) else t, tg))
    example = to_dev(example)
    opt = make_optimizer(model, optimizer)

    try:
        _iteration(model, *example, loss_fn, opt)  # warm-up: creates the optimizer state
        rec, rows, measured = record_once(model, opt, example, loss_fn, dev, True, profile,
                                          calls=record_calls)
        reps = _min_times(rec, model, opt, example, loss_fn, dev, time_reps)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure of the model is one clear line
        raise ExportError(f"cannot trace '{spec}': {_one_line(e)}") from e

    info = dict(measured)
    info["time_reps"] = reps
    rec2 = op_pairs = batch2 = None
    axes, info["axes_source"], nonlinear = {}, "propagation", 0
    if probe:
        batch2 = batch // 2 if batch >= 4 else batch + 1  # never 1: some kernels special-case it
        try:
            if ":" in spec or spec in models.BUILTIN:
                _, ex2, _ = make(batch2)
            else:
                x = example[0][0]
                ex2 = ((torch.randn(batch2, *x.shape[1:]),), torch.randint(0, 1000, (batch2,)))
            rec2, _, _ = record_once(model, opt, to_dev(ex2), loss_fn, dev, True, profile)
            _min_times(rec2, model, opt, to_dev(ex2), loss_fn, dev, time_reps)
            axes, paired, nonlinear, exact, op_pairs = _batch_axes(rec, rec2, batch, batch2)
            info["probe_batch"] = batch2
            info["axes_source"] = "probe" if exact else "probe (aligned)"
            if not any(ax >= 0 for ax in axes.values()):
                # nothing changed size: the builder ignored batch= (or nothing depends on it)
                axes, rec2 = {}, None
                info["axes_source"] = "propagation"
                if log:
                    log(f"sfc-export: warning: no tensor changed size at batch {batch2}; does "
                        f"'{spec}' honour batch=? batch axes by propagation")
            unpaired = len(rec.tensors) - paired
            if not exact and log:
                log(f"sfc-export: note: the op sequence differs at batch {batch2} "
                    f"({len(rec.ops)} vs {len(rec2.ops)} ops); aligned by op type, "
                    f"{unpaired} tensors unpaired (batch axis by propagation)")
        except Exception as e:  # noqa: BLE001 - the probe is an extra; fall back, loudly
            rec2 = None
            if log:
                log(f"sfc-export: warning: batch probe failed ({type(e).__name__}: {e}); "
                    "batch axes by propagation")
    prop = _propagated_axes(rec, batch)
    for tid, ax in prop.items():
        axes.setdefault(tid, ax)
    info["nonlinear_tensors"] = nonlinear
    for t in rec.tensors:
        ax = axes.get(t["id"], -1)
        if ax >= 0:
            t["batch_axis"] = ax
    info["nonlinear_workspaces"] = 0
    if rec2 is not None:
        info["nonlinear_workspaces"] = _batch_workspaces(rec, rec2, op_pairs, batch, batch2)
        if info["nonlinear_workspaces"] and log:
            log(f"sfc-export: note: {info['nonlinear_workspaces']} op workspaces are not affine "
                f"in the batch (batch {batch} vs {batch2}): exact at batch {batch}, scaled "
                "linearly by sfc compile --batch")
    info["fixed_times"] = 0
    if rec2 is not None:
        info["fixed_times"] = _fit_fixed_times(rec, rec2, op_pairs, batch, batch2)
    if time_decimals is not None:
        for op in rec.ops:
            for key in ("time_us", "time_fixed_us"):  # rounding keeps fixed <= time
                if key in op:
                    op[key] = round(op[key], time_decimals)
                    if time_decimals == 0:
                        op[key] = int(op[key])
    info["export_s"] = round(time.perf_counter() - t_start, 2)
    measured["export_s"] = info["export_s"]  # build, warm-up, recorded + probe (+ repetitions)
    info["externals"] = rec.externals
    info.update({k: v for k, v in rec.account.items() if k != "claimed"})
    if measured.get("torch_peak_bytes") is not None and dev.type != "cuda":
        measured["accounting"] = {k: rec.account[k] for k in (
            "workspace_ops", "hidden_tensors", "hidden_bytes", "externals_produced",
            "held_tensors", "held_bytes")}
    name = spec.replace(":", ".") + f"-b{batch}"
    graph = {"format": "sfc-graph", "version": 1, "name": name, "batch": batch,
             "producer": "sfc-export", "torch": torch.__version__, "device": device_name(dev),
             "optimizer": optimizer, "measured": measured, "tensors": rec.tensors, "ops": rec.ops}
    if record_calls:
        graph["calls_unexpressed"] = rec.unexpressed  # [] when every call was recorded
        # what sfc-train needs to rebuild the same model, batch and state
        graph["call_source"] = {"model": spec, "batch": batch, "image_size": image_size,
                                "seq_len": seq_len, "seed": seed, "optimizer": optimizer}
    peak = acct.in_core_peak(graph)
    measured["in_core_peak_bytes"] = info["in_core_peak_bytes"] = peak
    tp = measured.get("torch_peak_bytes")
    if tp:
        info["peak_ratio"] = peak / tp
        msg = peak_warning(peak, tp)
        if msg and log:
            log(msg)
    return graph, rows, info


def peak_warning(in_core, torch_peak):
    """The warning when the graph's in-core peak and PyTorch's differ by more than
    PEAK_TOLERANCE (relative to PyTorch's), else None."""
    r = in_core / torch_peak
    if abs(in_core - torch_peak) <= PEAK_TOLERANCE * torch_peak:
        return None
    return (f"sfc-export: warning: the graph's in-core peak ({in_core} B) is {r:.4f} x "
            f"PyTorch's peak ({torch_peak} B), more than {PEAK_TOLERANCE:.0%} apart: memory "
            "the export does not account for (docs/exporter.md, \"Memory accounting\")")


def write_graph(graph, path):
    """One tensor or op per line (diffable); gzip when the name ends in .gz (mtime 0)."""
    parts = []
    head = {k: v for k, v in graph.items() if k not in ("tensors", "ops")}
    parts.append(json.dumps(head, separators=(",", ":"))[:-1])
    for key in ("tensors", "ops"):
        items = ",\n".join(json.dumps(x, separators=(",", ":")) for x in graph[key])
        parts.append(f',\n"{key}":[\n{items}\n]')
    text = "".join(parts) + "}\n"
    data = text.encode()
    if path.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as g:
            g.write(data)
        data = buf.getvalue()
    safe_write.write_bytes(path, data)  # a fresh temporary renamed over path (safe_write.py)


def write_trace(rows, path):
    lines = ["id,lower,upper,size\n"]
    lines += [f"t{tid},{lo},{hi},{size}\n" for tid, lo, hi, size in rows]
    safe_write.write_bytes(path, "".join(lines).encode())
