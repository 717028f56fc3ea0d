"""record.py — record one training iteration at the ATen dispatch level as sfc-graph v1.

How it works (docs/exporter.md has the long version):

* A `TorchDispatchMode` (below autograd, so forward, backward and optimizer ops are all
  seen, one ATen op at a time) wraps every op: it looks up the storage of every tensor
  argument, runs the op, times it, and looks up the storage of every result.
* Tensors in the graph are STORAGES, not views: `t.storage()` gives the storage's base
  address and byte size. A view or an in-place op returns a tensor on a storage the op
  already read, so it resolves to the same graph tensor and never counts its bytes twice.
  A tensor that shows only part of its storage (mse_loss's 0-d result over a
  B*C*H*W-element buffer) records the storage's flat shape, so the probe finds its batch.
* With mark=True (the profiled iterations) each op runs inside a profiler range
  "sfc::K", K its index, so that account.py can attribute the allocator's events to ops
  (workspaces, hidden allocations, PyTorch's frees: docs/exporter.md).
* Identity: a base address can be freed and handed out again. Every storage we see gets a
  weak reference (`UntypedStorage._weak_ref`); before each op the recorder polls the weak
  references of the live storages, so a freed storage ends there (this is also the exact
  free time of the raw allocation trace), and a later storage at the same address gets a
  fresh id. Cost: O(live storages) per op.
* Kinds: params and buffers (`param`), optimizer state (`optimizer`) and the example batch
  (`input`) are declared before the iteration (persistent). A storage first produced by an
  op gets its kind from the phase it was produced in: forward/loss -> `activation`,
  backward -> `grad`, update -> `workspace`; the loss value becomes `output`. A storage
  first seen as an op's input that no recorded op produced (a constant made from Python
  data) is declared `input` (persistent) and counted in `externals`.
* Phases are set by the driver around model(x), loss_fn, backward() and step().
* backward_of: every forward result's autograd node (`grad_fn`, read from the tensors the
  later ops consume, and once more when backward starts) is mapped to the forward op that
  produced it; a pre-hook on every node of the autograd graph tells which node the engine
  is running, so each backward op links to that node's forward op. Best effort: ops the
  engine runs outside a node (gradient accumulation into an input buffer) link to the node
  that ran last.
* Batch-carrying tensors are flagged by propagation (a result carries the batch when some
  argument does, starting from the example batch); the axis itself is found by recording
  the iteration a second time at another batch size and comparing the shapes (see
  exporter.py), so it is measured, not guessed from size coincidences.
"""
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

DTYPES = {
    torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "bool",
}

PHASE_KIND = {"forward": "activation", "loss": "activation", "backward": "grad",
              "update": "workspace"}


def untyped(t):
    """The tensor's untyped storage, or None (sparse, meta, no storage)."""
    try:
        if hasattr(t, "untyped_storage"):
            return t.untyped_storage()
        s = t.storage()
        return s._untyped() if hasattr(s, "_untyped") else s.untyped()
    except Exception:  # noqa: BLE001 - tensors without storage are simply skipped
        return None


def _prod(xs):
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _arg_dict(func, args, kwargs):
    """Name -> value for the op's arguments, by its schema."""
    out = dict(kwargs)
    try:
        for a, v in zip(func._schema.arguments, args):
            out[a.name] = v
    except AttributeError:
        pass
    return out


def _ints(v, n):
    if v is None:
        return None
    if isinstance(v, int):
        return [v] * n
    v = [int(x) for x in v]
    return v


def op_attrs(name, a):
    """Spatial attrs (graph-format.md `attrs`) for conv and pooling ops, else None."""
    if name in ("convolution", "convolution_backward"):
        w = a.get("weight")
        if not isinstance(w, torch.Tensor) or w.dim() < 3:
            return None
        k = [int(x) for x in w.shape[2:]]
        n = len(k)
        at = {"kernel": k, "stride": _ints(a.get("stride"), n), "padding": _ints(a.get("padding"), n),
              "dilation": _ints(a.get("dilation"), n), "groups": int(a.get("groups", 1))}
        if a.get("transposed"):
            at["output_padding"] = _ints(a.get("output_padding"), n)
    elif name.startswith(("max_pool", "avg_pool")) and "kernel_size" in a:
        k = _ints(a["kernel_size"], 2)
        n = len(k)
        st = _ints(a.get("stride"), n) or k
        at = {"kernel": k, "stride": st, "padding": _ints(a.get("padding", 0), n),
              "dilation": _ints(a.get("dilation", 1), n), "ceil_mode": bool(a.get("ceil_mode", False))}
    else:
        return None
    at = {key: v for key, v in at.items() if v is not None}
    for key in ("kernel", "stride", "padding", "dilation", "output_padding"):
        v = at.get(key)
        if v is not None and (len(v) > 3 or len(v) == 0):
            return None
    lens = {len(v) for v in at.values() if isinstance(v, list) and len(v) > 1}
    if len(lens) > 1:
        return None
    return at


def op_flops(name, a, outs):
    """FLOP estimate (multiply-add = 2) for convolutions and matrix products, else 0."""
    try:
        if name == "convolution":
            w, o = a["weight"], outs[0]
            if a.get("transposed"):
                return 2 * a["input"].numel() * w.shape[1] * _prod(w.shape[2:])
            return 2 * o.numel() * w.shape[1] * _prod(w.shape[2:])
        if name == "convolution_backward":
            w, go = a["weight"], a["grad_output"]
            if a.get("transposed"):
                f = 2 * a["input"].numel() * w.shape[1] * _prod(w.shape[2:])
            else:
                f = 2 * go.numel() * w.shape[1] * _prod(w.shape[2:])
            mask = a.get("output_mask") or [True, True, True]
            return f * (int(bool(mask[0])) + int(bool(mask[1])))
        if name in ("mm", "addmm"):
            m1, m2 = (a["self"], a["mat2"]) if name == "mm" else (a["mat1"], a["mat2"])
            return 2 * m1.shape[0] * m1.shape[1] * m2.shape[1]
        if name in ("bmm", "baddbmm"):
            m1, m2 = (a["self"], a["mat2"]) if name == "bmm" else (a["batch1"], a["batch2"])
            return 2 * m1.shape[0] * m1.shape[1] * m1.shape[2] * m2.shape[2]
    except (KeyError, IndexError, AttributeError, TypeError):
        return 0
    return 0


class Recorder(TorchDispatchMode):
    """Records every ATen op run while the mode is active; see the module comment."""

    def __init__(self, timing=True, sync=None, mark=False, calls=False):
        super().__init__()
        self.timing = timing
        # calls: record each op's call (overload, every argument and result) as op["call"]
        self.calls = calls
        self.unexpressed = []  # {"op": k, "what": ...}: call parts no JSON value expresses
        self.sync = sync  # callable run after each op (torch.cuda.synchronize) or None
        # mark: run each op inside a profiler range "sfc::K" (K = the op's index), so the
        # profiler's allocation events can be attributed to ops (account.py)
        self.mark = mark and hasattr(torch.ops.profiler, "_record_function_enter_new")
        self.tensors = []  # dicts in id order (id == index)
        self.ops = []
        self.phase = "forward"
        self.live = {}  # storage base address -> (tensor id, weak ref handle)
        self.freed = []  # (tensor id, op index at which it was found freed)
        self.alloc_op = {}  # tensor id -> op index that produced it (-1: persistent)
        self.carries = set()  # tensor ids that carry the batch (propagation)
        self.externals = 0
        self.modules = []  # module path stack (forward hooks)
        self.obj_op = {}  # id(tensor object) -> (weakref, op index)  forward results
        self.node_op = {}  # autograd node -> forward op index
        self.cur_node = None
        self.loss_tid = None
        self.ptr = {}  # tensor id -> storage base address (account.py matches allocations)
        self.first_read = {}  # external tensor id -> index of the op that first read it

    # -- storages ---------------------------------------------------------------------
    def _new_tensor(self, t, st, name, kind):
        tid = len(self.tensors)
        nbytes = int(st.nbytes())
        rec = {"id": tid, "name": name, "bytes": nbytes, "kind": kind}
        item = t.element_size()
        if t.numel() * item != nbytes:
            # the tensor shows part of its storage (a 0-d mse_loss result over B*C*H*W
            # elements): describe the storage, flat, so that its batch axis can be found
            rec["shape"] = [nbytes // item] if nbytes % item == 0 else [nbytes]
            if nbytes % item == 0 and t.dtype in DTYPES:
                rec["dtype"] = DTYPES[t.dtype]
            elif nbytes % item != 0:
                rec["dtype"] = "u8"
        else:
            if t.dim() <= 8:
                rec["shape"] = [int(x) for x in t.shape]
            if t.dtype in DTYPES:
                rec["dtype"] = DTYPES[t.dtype]
        self.tensors.append(rec)
        self.ptr[tid] = st.data_ptr()
        self.live[st.data_ptr()] = (tid, st._weak_ref())
        return tid

    def declare(self, t, name, kind, batch=False):
        """Declare a persistent tensor (param, optimizer state, input) before recording."""
        st = untyped(t)
        if st is None or st.nbytes() == 0:
            return None
        hit = self._find(st)
        if hit is not None:  # tied weights, or the same storage under two names
            return hit
        tid = self._new_tensor(t, st, name, kind)
        self.alloc_op[tid] = -1
        if batch:
            self.carries.add(tid)
        return tid

    def _find(self, st):
        e = self.live.get(st.data_ptr())
        if e is None:
            return None
        tid, h = e
        if type(st)._expired(h) or self.tensors[tid]["bytes"] != st.nbytes():
            self._end(st.data_ptr())
            return None
        return tid

    def _end(self, ptr):
        tid, h = self.live.pop(ptr)
        self.freed.append((tid, len(self.ops)))
        torch.UntypedStorage._free_weak_ref(h)

    def _poll_frees(self):
        dead = [p for p, (_, h) in self.live.items() if torch.UntypedStorage._expired(h)]
        for p in dead:
            self._end(p)

    # -- module names -----------------------------------------------------------------
    def attach_module_names(self, model):
        handles = []

        def pre(name):
            def f(_m, _inp):
                self.modules.append(name)
            return f

        def post(_m, _inp, _out):
            if self.modules:
                self.modules.pop()

        for name, m in model.named_modules():
            if name:
                handles.append(m.register_forward_pre_hook(pre(name)))
                handles.append(m.register_forward_hook(post))
        return handles

    # -- autograd nodes (backward_of) -------------------------------------------------
    def _note_grad_fn(self, t):
        e = self.obj_op.get(id(t))
        if e is None or e[0]() is not t:
            return
        gf = t.grad_fn
        if gf is not None and gf not in self.node_op:
            self.node_op[gf] = e[1]

    def start_backward(self, loss):
        """Map the remaining forward results to their nodes; pre-hook every node."""
        for _, (ref, _k) in list(self.obj_op.items()):
            t = ref()
            if t is not None:
                self._note_grad_fn(t)
        self.obj_op.clear()
        seen, stack, handles = set(), [loss.grad_fn], []
        while stack:
            n = stack.pop()
            if n is None or n in seen:
                continue
            seen.add(n)

            def hook(*_a, _n=n):
                self.cur_node = _n
            try:
                handles.append(n.register_prehook(hook))
            except (AttributeError, RuntimeError):
                pass
            stack.extend(f for f, _ in n.next_functions)
        return handles

    def end_backward(self):
        self.cur_node = None
        self.node_op.clear()

    # -- the op hook ------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ns = getattr(func, "namespace", "aten")
        if ns == "profiler":
            return func(*args, **kwargs)
        self._poll_frees()
        flat_in = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        inputs, in_ptrs = [], set()
        for a in flat_in:
            st = untyped(a)
            if st is None or st.nbytes() == 0:
                continue
            tid = self._find(st)
            if tid is None:  # made outside any recorded op: a constant from Python data
                self.externals += 1
                tid = self._new_tensor(a, st, f"external.{self.externals}", "input")
                self.alloc_op[tid] = -1
                self.first_read[tid] = len(self.ops)
            if tid not in inputs:
                inputs.append(tid)
            in_ptrs.add(st.data_ptr())
            if self.phase in ("forward", "loss"):
                self._note_grad_fn(a)

        call_args = self._encode((args, kwargs), len(self.ops)) if self.calls else None
        t0 = time.perf_counter_ns()
        if self.mark:
            h = torch.ops.profiler._record_function_enter_new(f"sfc::{len(self.ops)}", None)
            try:
                out = func(*args, **kwargs)
            finally:
                torch.ops.profiler._record_function_exit._RecordFunction(h)
        else:
            out = func(*args, **kwargs)
        if self.sync:
            self.sync()
        dt = (time.perf_counter_ns() - t0) / 1000.0

        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
        rets = getattr(func, "_schema", None)
        rets = rets.returns if rets is not None else []
        pure_view = bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write
                                       for r in rets)
        k = len(self.ops)
        outputs = []
        flat_out = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        kind = PHASE_KIND[self.phase]
        batch = any(t in self.carries for t in inputs)
        for j, o in enumerate(flat_out):
            if self.phase in ("forward", "loss"):  # views too: their nodes link backward ops
                self.obj_op[id(o)] = (_weak(o), k)
            st = untyped(o)
            if st is None or st.nbytes() == 0:
                continue
            tid = self._find(st) if st.data_ptr() in in_ptrs or st.data_ptr() in self.live else None
            if tid is None:  # a fresh storage
                tid = self._new_tensor(o, st, f"op{k}.{name}.out{j}", kind)
                self.alloc_op[tid] = k
                if batch:
                    self.carries.add(tid)
            elif pure_view:
                continue
            if tid not in outputs:
                outputs.append(tid)

        # arguments the op writes without returning them (native_batch_norm's running
        # statistics, out= arguments): outputs too, or a plan would not know they change
        for a in _mutated_args(func, args, kwargs):
            st = untyped(a)
            tid = self._find(st) if st is not None and st.nbytes() > 0 else None
            if tid is not None and tid not in outputs:
                outputs.append(tid)
        op = {"id": k, "name": "", "type": name, "phase": self.phase, "inputs": inputs,
              "outputs": outputs}
        mod = self.modules[-1] if self.modules else ""
        a = None
        if name in ("convolution", "convolution_backward") or name.startswith(("max_pool", "avg_pool")) \
                or name in ("mm", "addmm", "bmm", "baddbmm"):
            a = _arg_dict(func, args, kwargs)
            at = op_attrs(name, a)
            if at:
                op["attrs"] = at
            fl = op_flops(name, a, flat_out)
            if fl > 0:
                op["flops"] = int(fl)
        if self.phase == "backward" and self.cur_node is not None:
            fwd = self.node_op.get(self.cur_node)
            if fwd is not None:
                op["backward_of"] = fwd
                mod = self.ops[fwd]["name"].split(":")[0]
        op["name"] = f"{mod}:{name}" if mod else name
        if self.timing:
            op["time_us"] = dt
        if self.calls:
            op["call"] = {"overload": str(func), "args": call_args[0], "kwargs": call_args[1],
                          "results": self._encode(out, k)}
        self.ops.append(op)
        return out

    # -- the call record (issue 14 item 1; docs/graph-format.md "call") ----------------
    def _encode(self, v, k):
        """v as JSON: a tensor as its graph tensor id and view geometry; ints, floats,
        bools, strings, None, lists as themselves; dtypes, layouts, devices and memory
        formats by name; anything else listed in self.unexpressed, never dropped."""
        if isinstance(v, torch.Tensor):
            st = untyped(v)
            tid = self._find(st) if st is not None and st.nbytes() > 0 else None
            return {"tensor": tid, "sizes": list(v.shape), "strides": list(v.stride()),
                    "offset": v.storage_offset(), "dtype": DTYPES.get(v.dtype, str(v.dtype))}
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                return {"float": str(v)}
            return v
        if isinstance(v, (list, tuple)):
            return [self._encode(x, k) for x in v]
        if isinstance(v, dict):
            return {str(key): self._encode(x, k) for key, x in v.items()}
        if isinstance(v, torch.dtype):
            return {"dtype": DTYPES.get(v, str(v))}
        if isinstance(v, torch.layout):
            return {"layout": str(v)}
        if isinstance(v, torch.device):
            return {"device": str(v)}
        if isinstance(v, torch.memory_format):
            return {"memory_format": str(v)}
        self.unexpressed.append({"op": k, "what": type(v).__name__})
        return {"unexpressed": type(v).__name__}


    def finish(self, loss):
        """Close the recording: the loss becomes `output`; return the DSA rows."""
        self._poll_frees()
        st = untyped(loss)
        if st is not None:
            tid = self._find(st)
            if tid is not None and self.alloc_op.get(tid, -1) >= 0:
                self.tensors[tid]["kind"] = "output"
                self.loss_tid = tid
        end = len(self.ops) + 1
        rows = {tid: (self.alloc_op.get(tid, -1) + 1, at + 1) for tid, at in self.freed}
        for _p, (tid, h) in list(self.live.items()):
            rows.setdefault(tid, (self.alloc_op.get(tid, -1) + 1, end))
            torch.UntypedStorage._free_weak_ref(h)
        # the last op during which PyTorch still held each storage (found freed before op
        # f: held through f - 1; still alive now: through the last op)
        self.held_until = {tid: hi - 2 for tid, (_lo, hi) in rows.items()}
        self.live.clear()
        # persistent tensors start at 0; a storage produced by op k starts at k+1
        return sorted((tid, max(0, lo) if self.alloc_op.get(tid, -1) >= 0 else 0,
                       max(hi, lo + 1), self.tensors[tid]["bytes"])
                      for tid, (lo, hi) in rows.items())


# Ops that write arguments their schema does not mark Tensor(a!) (PyTorch 1.13): batch
# norm in training mode updates the running statistics in place. Found by sfc-train
# --check (the running mean after the update differed from eager PyTorch).
UNMARKED_WRITES = {
    "native_batch_norm": ("running_mean", "running_var"),
    "cudnn_batch_norm": ("running_mean", "running_var"),
    "miopen_batch_norm": ("running_mean", "running_var"),
}


def _mutated_args(func, args, kwargs):
    """The tensors among the op's arguments that it writes: marked Tensor(a!) by its
    schema, or listed in UNMARKED_WRITES (batch norm's running statistics in training)."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return []
    name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else ""
    extra = UNMARKED_WRITES.get(name, ())
    named = {a.name: (args[i] if i < len(args) else kwargs.get(a.name))
             for i, a in enumerate(schema.arguments)}
    if extra and not named.get("training", True):
        extra = ()
    out = []
    for a in schema.arguments:
        info = a.alias_info
        if (info is None or not info.is_write) and a.name not in extra:
            continue
        out += [t for t in tree_flatten(named.get(a.name))[0] if isinstance(t, torch.Tensor)]
    return out


def _weak(o):
    import weakref
    try:
        return weakref.ref(o)
    except TypeError:
        return lambda: None
