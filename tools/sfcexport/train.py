"""train.py — sfc-train's executor: real training iterations of a PyTorch model, run from
an sfc plan (issue 14 items 3-5; docs/exporter.md "Training from a plan").

The graph the plan was compiled from must carry the call record (`sfc-export
--record-calls`). The runtime (libsfcrt, through runtime/python/sfcrt.py) owns the memory:
a session on the `host` device holds the plan's arena, and its pull loop hands out every
step with the address of each operand. For each step the executor

  * maps the step's operands to graph tensors (the plan's OPS and TENSORS tables),
  * makes torch tensors that ALIAS the arena at those addresses with the view geometry
    the call record gives (sizes, strides, storage offset, dtype),
  * issues the recorded ATen call (torch.ops.aten.<op>.<overload>) on them: an in-place
    op or a view acts on the aliases directly; a result on a fresh storage is computed
    by PyTorch and copied into the output the plan assigned — unless the op has an out=
    overload taking the same arguments plus one out tensor per result (add.out,
    threshold_backward.grad_input, nll_loss_forward.output, ...): then that overload
    writes the results into their aliases directly, no copy (use_out=False: never),
  * marks the step done; the runtime issues the plan's swaps on its copy queues.

Parameters, buffers, optimizer state and the batch are the plan's persistent tensors:
each is written into its home (`Session.home`: the device arena, or pinned host memory
when the plan moves it off the device between uses) before the first iteration, and
every step that writes one copies it back, so the module and optimizer always hold what the
plan run computed. Nothing of the model's Python code runs during a plan iteration; a
constant made from Python data inside the model (a graph `input` no declared tensor
explains) cannot be replayed and is refused.

--check --reference accumulate:K compares instead with in-core training of each batch as
K micro-batches, gradients accumulated (the losses scaled by 1/K) before one optimizer
step: the loss and the updated parameters and optimizer state, within --tolerance (the
sums run in another order). For a batch too large to train in core (on a GPU); exact up
to rounding only for models that neither mix samples (batch norm) nor draw random
numbers (dropout).

--check runs the same iterations eagerly first (the model's own Python code, recorded
with the exporter's recorder), one iteration at a time from the same state and the same
random-number state, and compares: the eager op sequence and calls with the graph's (the
model must not diverge from the graph the plan came from), every op's results, the
loss, every parameter's gradient, the optimizer state and the updated parameters — all
bitwise. The first difference is reported with the op and the relative difference.
"""
import copy
import ctypes
import gzip
import json
import math
import os
import re
import sys
import time

import torch
from torch.utils._pytree import tree_flatten, tree_map

from . import exporter
from .record import Recorder, untyped

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runtime", "python"))
import sfcrt  # noqa: E402

DT = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16,
      "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
      "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}
MEMORY_FORMATS = {"torch.contiguous_format": torch.contiguous_format,
                  "torch.channels_last": torch.channels_last,
                  "torch.channels_last_3d": torch.channels_last_3d,
                  "torch.preserve_format": torch.preserve_format}
ITEM = {d: torch.empty((), dtype=d).element_size() for d in DT.values()}
PERSISTENT_KINDS = ("param", "optimizer", "input")
# in-place ops that change a tensor's sizes, strides or storage: a step running one keeps
# no aliases for the next iteration (its operands' metadata would not be the recorded one)
RESTRIDES = {"resize_", "resize_as_", "set_", "as_strided_", "transpose_", "t_", "squeeze_",
             "unsqueeze_", "swapaxes_", "swapdims_", "_resize_output_"}
# ops whose result is uninitialised memory: --check does not compare their bytes
UNINITIALISED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}


class TrainError(Exception):
    """A problem reported as one line; exit status 2 (usage, inputs) unless .status."""

    def __init__(self, msg, status=2):
        super().__init__(msg)
        self.status = status


class Mismatch(TrainError):
    """The plan run differs from eager PyTorch (--check): exit status 1."""

    def __init__(self, msg):
        super().__init__(msg, 1)


# --------------------------------------------------------------------------- inputs
def load_graph(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        g = json.loads(raw)
    except OSError as e:
        raise TrainError(f"cannot read graph '{path}': {e.strerror or e}") from e
    except (ValueError, EOFError) as e:
        raise TrainError(f"graph '{path}' is not JSON: {e}") from e
    if not isinstance(g, dict) or not isinstance(g.get("ops"), list) or \
            not isinstance(g.get("tensors"), list):
        raise TrainError(f"graph '{path}' is not an sfc graph (no ops and tensors)")
    missing = [o.get("id") for o in g["ops"] if not isinstance(o.get("call"), dict)]
    if missing:
        raise TrainError(f"graph '{path}' has no call record for op {missing[0]} ({len(missing)} "
                         f"ops without): export it with sfc-export --record-calls")
    if g.get("calls_unexpressed"):
        u = g["calls_unexpressed"][0]
        raise TrainError(f"graph '{path}': op {u.get('op')}'s call has a {u.get('what')} the "
                         f"recorder could not express; it cannot be replayed")
    return g


# --------------------------------------------------------------------------- aliasing
def _extent(geom, item):
    if any(int(s) == 0 for s in geom["sizes"]):
        return 0
    return (int(geom["offset"]) + sum((int(s) - 1) * int(st)
                                      for s, st in zip(geom["sizes"], geom["strides"])) + 1) * item


def alias(addr, avail, geom, what, mem=None):
    """A tensor viewing `avail` bytes of memory at `addr` with the recorded geometry, on
    `mem`'s device (HOST when None)."""
    mem = mem or HOST
    dtype = DT.get(geom["dtype"])
    if dtype is None:
        raise TrainError(f"{what}: dtype {geom['dtype']} is not supported by the executor")
    ext = _extent(geom, ITEM[dtype])
    if ext == 0:
        return torch.empty_strided(geom["sizes"], geom["strides"], dtype=dtype,
                                   device=mem.device)
    if ext > avail:
        raise TrainError(f"{what}: the recorded view needs {ext} bytes, its tensor has {avail}")
    return mem.raw(addr, ext, dtype).as_strided(geom["sizes"], geom["strides"],
                                                int(geom["offset"]))


def _view(base, geom, dtype):
    """uint8 tensor `base` as `dtype` with the recorded sizes, strides and offset."""
    if dtype is not torch.uint8:
        base = base.view(dtype)
    return base.as_strided(geom["sizes"], geom["strides"], int(geom["offset"]))


# --------------------------------------------------------------------------- memory
class HostMemory:
    """Memory the CPU reads and writes: the host device's arena, and the fake CUDA
    driver's "device" memory (host memory too). raw() aliases bytes as a uint8 tensor."""
    device = torch.device("cpu")
    name = "host"

    def raw(self, addr, n, dtype=torch.uint8):
        """n bytes at addr as a 1-D tensor of dtype (n is a multiple of its size)."""
        return torch.frombuffer((ctypes.c_char * n).from_address(addr), dtype=dtype)

    def copy(self, dst, src, n):
        ctypes.memmove(dst, src, n)

    def sync(self, step):
        """Before a step runs on the CPU: what the step's stream waits for has run."""

    def problems(self):
        """Misuse of the device seen by the fake driver (None: none, or no fake)."""
        return None


HOST = HostMemory()


class FakeCudaMemory(HostMemory):
    """The cuda device on the test suite's fake driver (tests/runtime_cuda/fake_cuda.h),
    whose device memory is host memory: ops run on the CPU at the step's addresses. The
    fake runs its queued copies lazily, only when something waits for them, so before
    each step the executor synchronises the step's stream (cuStreamSynchronize through
    the same loaded copy of the fake the runtime uses): every swap-in and every copy the
    step's stream was made to wait for has then landed, and nothing else has — a wait
    the runtime forgot is a stale read, seen by --check."""
    name = "cuda (fake driver)"

    def __init__(self, path):
        try:
            self.lib = ctypes.CDLL(path)  # dlopen of the runtime's path: the same copy
            getproc = self.lib.cuGetProcAddress_v2
        except (OSError, AttributeError) as e:
            raise TrainError(f"--fake-driver {path}: not a CUDA driver library: {e}") from e
        getproc.restype = ctypes.c_int
        getproc.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                            ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
        fn, found = ctypes.c_void_p(), ctypes.c_int()
        if getproc(b"cuStreamSynchronize", ctypes.byref(fn), 12000, 0, ctypes.byref(found)) \
                or not fn.value:
            raise TrainError(f"--fake-driver {path}: it has no cuStreamSynchronize")
        self._sync = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(fn.value)
        self._violation = getattr(self.lib, "fake_cuda_violation", None)
        if self._violation is not None:
            self._violation.restype = ctypes.c_char_p
            self._violation.argtypes = [ctypes.POINTER(ctypes.c_long)]

    def sync(self, step):
        r = self._sync(step.stream)
        if r:
            raise TrainError(f"step {step.index}: cuStreamSynchronize of its stream failed "
                             f"(CUresult {r})")

    def problems(self):
        if self._violation is None:
            return None
        n = ctypes.c_long()
        what = self._violation(ctypes.byref(n))
        return f"{n.value} (first: {what.decode(errors='replace')})" if n.value else None


class _CudaBytes:
    """n bytes of device memory at addr, for torch.as_tensor (__cuda_array_interface__)."""

    def __init__(self, addr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (addr, False),
                                         "strides": None, "version": 2}


class CudaMemory(HostMemory):
    """The cuda device on a real GPU: aliases are CUDA tensors over the session's device
    pointers; every op and copy is issued on PyTorch's current stream, which is the
    session's compute stream (has_stream), so the plan's waits order them."""
    name = "cuda"

    def __init__(self):
        self.device = torch.device("cuda", torch.cuda.current_device())

    def raw(self, addr, n, dtype=torch.uint8):
        t = torch.as_tensor(_CudaBytes(addr, n), device=self.device)
        return t if dtype is torch.uint8 else t.view(dtype)

    def copy(self, dst, src, n):
        self.raw(dst, n).copy_(self.raw(src, n))


def write_host(addr, value, n):
    """n bytes of tensor `value` into host memory at addr. A value on a GPU is copied to
    the CPU first, and that copy is held until the bytes are written: passing
    `untyped(value.cpu()).data_ptr()` straight to memmove frees the copy before memmove
    reads it (CPython drops the temporaries once data_ptr() returns), and a plan's host
    homes then start with whatever the C allocator left in freed memory."""
    src = value.detach().cpu()
    ctypes.memmove(addr, untyped(src).data_ptr(), n)


def _overload(name):
    parts = name.split(".")
    if len(parts) != 3:
        raise TrainError(f"cannot resolve the ATen overload '{name}'")
    try:
        return getattr(getattr(getattr(torch.ops, parts[0]), parts[1]), parts[2])
    except (AttributeError, RuntimeError) as e:
        raise TrainError(f"this PyTorch has no ATen overload '{name}'") from e


def _out_variant(func, results):
    """The out= overload of functional ATen overload `func` whose results are `results`
    (the call record's), and the names of its out arguments in result order; None when
    there is none: the results are not all fresh tensors (a view, an in-place op, a list),
    or no overload of the op takes the same arguments plus one out tensor per result
    (add.Tensor -> add.out, threshold_backward -> .grad_input, nll_loss_forward ->
    .output)."""
    schema = func._schema
    if not isinstance(results, list) or not results or \
            not all(_is_tensor_rec(r) for r in results) or \
            len(schema.returns) != len(results) or \
            any(r.alias_info is not None for r in schema.returns) or \
            any(a.alias_info is not None for a in schema.arguments):
        return None
    want = [(a.name, str(a.type)) for a in schema.arguments]
    packet = getattr(torch.ops.aten, schema.name.split("::")[-1], None)
    for name in (packet.overloads() if packet is not None else []):
        o = getattr(packet, name)
        args = o._schema.arguments
        outs = [a.name for a in args if a.is_out]
        if len(outs) == len(results) and \
                [(a.name, str(a.type)) for a in args if not a.is_out] == want:
            return o, outs
    return None


def _is_tensor_rec(v):
    return isinstance(v, dict) and "tensor" in v and "sizes" in v


def _decode(v, resolve, device=None):
    """A recorded argument as a value; `device` (not None) replaces every recorded device
    (a graph exported on the CPU, run on CUDA)."""
    if _is_tensor_rec(v):
        return resolve(v)
    if isinstance(v, list):
        return [_decode(x, resolve, device) for x in v]
    if isinstance(v, dict):
        (k, x), = v.items() if len(v) == 1 else ((None, None),)
        if isinstance(x, str):
            if k == "dtype":
                d = DT.get(x) or getattr(torch, str(x).split(".")[-1], None)
                if not isinstance(d, torch.dtype):
                    raise TrainError(f"unknown dtype {x}")
                return d
            if k == "layout":
                return getattr(torch, str(x).split(".")[-1])
            if k == "device":
                return torch.device(x) if device is None else device
            if k == "memory_format":
                if x not in MEMORY_FORMATS:
                    raise TrainError(f"unknown memory format {x}")
                return MEMORY_FORMATS[x]
            if k == "float":
                return float(x)
            if k == "unexpressed":
                raise TrainError(f"a call argument of type {x} was not recorded")
        return {k: _decode(x, resolve, device) for k, x in v.items()}
    return v


def _recs_in(v, out=None):
    """Every tensor record in a recorded argument structure, in order."""
    out = [] if out is None else out
    if _is_tensor_rec(v):
        out.append(v)
    elif isinstance(v, list):
        for x in v:
            _recs_in(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            _recs_in(x, out)
    return out


def _tensor_ids(v, out):
    out.update(r["tensor"] for r in _recs_in(v) if r["tensor"] is not None)
    return out


def _pair_results(rec, val, out):
    """(record, value) for every tensor result, walking both structures together."""
    if _is_tensor_rec(rec):
        out.append((rec, val))
    elif isinstance(rec, list) and isinstance(val, (list, tuple)) and len(rec) == len(val):
        for r, x in zip(rec, val):
            _pair_results(r, x, out)
    return out


def _bits_equal(a, b):
    """Bitwise equality of two tensors (NaNs with the same bits are equal)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    a, b = a.contiguous(), b.contiguous()
    if a.dtype.is_floating_point:
        bits = {8: torch.int64, 4: torch.int32, 2: torch.int16}[a.element_size()]
        return torch.equal(a.view(bits), b.view(bits))
    return torch.equal(a, b)


def _difference(a, b):
    """'max relative difference R at [index]' between two float tensors (a: plan)."""
    if a.shape != b.shape:
        return f"shape {list(a.shape)} vs {list(b.shape)}"
    if a.numel() == 0:
        return "empty"
    x, y = a.detach().double().reshape(-1), b.detach().double().reshape(-1)
    d = (x - y).abs()
    rel = d / y.abs().clamp_min(1e-300)
    rel[d == 0] = 0
    nan = torch.isnan(x) != torch.isnan(y)
    if bool(nan.any()):
        i = int(nan.nonzero()[0])
        return f"NaN in one only at flat index {i}"
    i = int(torch.argmax(rel))
    idx, rest = [], i
    for n in reversed(a.shape):
        idx.insert(0, rest % int(n))
        rest //= int(n)
    return (f"max relative difference {float(rel[i]):.3g} at {idx} "
            f"(plan {float(x[i])!r}, eager {float(y[i])!r})")


# --------------------------------------------------------------------------- the model
def _state_tensors(model, opt, example):
    """graph tensor id -> the model's tensor for every persistent tensor, with the
    declaration order and names the exporter's recorder gives (so ids match)."""
    rec = Recorder(timing=False)
    inputs, target = example
    exporter._declare_state(rec, model, opt, inputs, target)
    objs = {}
    ts = [p for _, p in model.named_parameters()] + [b for _, b in model.named_buffers()]
    for st in opt.state.values():
        ts += [v for _, v in sorted(st.items()) if isinstance(v, torch.Tensor)]
    ts += batch_tensors(example)
    for t in ts:
        st = untyped(t)
        if st is None or st.nbytes() == 0:
            continue
        tid = rec._find(st)
        if tid is not None and tid not in objs:
            objs[tid] = t
    names = [(t["id"], t["name"], t["bytes"], t["kind"]) for t in rec.tensors]
    for _p, (_tid, h) in list(rec.live.items()):
        torch.UntypedStorage._free_weak_ref(h)
    rec.live.clear()
    return objs, names


def build(spec, batch, image_size, seq_len, optimizer, seed):
    """The model, its optimizer and example batch after the exporter's warm-up iteration
    (the state the exported iteration started from)."""
    torch.manual_seed(seed)
    make = exporter.resolve(spec, image_size, seq_len)
    try:
        model, example, loss_fn = make(batch)
        model.train()
    except exporter.ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's builder failed: one clear line
        raise TrainError(f"cannot build '{spec}': {exporter._one_line(e)}") from e
    opt = exporter.make_optimizer(model, optimizer)
    exporter._iteration(model, *example, loss_fn, opt)  # warm-up, as sfc-export
    return model, opt, example, loss_fn, make


def next_batch(make, batch, seed, it):
    """The batch of iteration `it` (>= 1) under `--data new`: the model's builder called
    again with the seed (seed, it), on a forked random-number generator so that the
    training's own random numbers (dropout, the plan run's and eager PyTorch's alike) do
    not move. Returns its example (inputs, target) on the CPU."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed((seed * 1000003 + it) & 0x7FFFFFFFFFFFFFFF)
        try:
            _model, example, _loss = make(batch)
        except exporter.ExportError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's builder failed: one clear line
            raise TrainError(f"cannot build the batch of iteration {it}: "
                             f"{exporter._one_line(e)}") from e
    return example


def batch_tensors(example):
    """The tensors of an example (inputs, target), in the order the recorder declares them."""
    inputs, target = example
    return [t for t in inputs if isinstance(t, torch.Tensor)] + \
        [t for t in tree_flatten(target)[0] if isinstance(t, torch.Tensor)]


def copy_batch(dst, src, it):
    """Writes example src into example dst's tensors in place (so every reference to
    them, the executor's state included, sees the new batch); the two must have the
    same tensors, shapes and dtypes."""
    a, b = batch_tensors(dst), batch_tensors(src)
    if len(a) != len(b) or any(x.shape != y.shape or x.dtype != y.dtype for x, y in zip(a, b)):
        desc = lambda ts: [f"{tuple(t.shape)} {t.dtype}" for t in ts]  # noqa: E731
        raise TrainError(f"the batch of iteration {it} is not shaped like the first one: "
                         f"{desc(b)} against {desc(a)}")
    with torch.no_grad():
        for x, y in zip(a, b):
            x.copy_(y)


# --------------------------------------------------------------------------- eager
# --------------------------------------------------------------------------- tiles
# Tiled steps (docs/plan-format.md "Tiled execution"): each operand comes with its box
# (the part of its tensor the step touches, and the zeros to supply around an input) and
# what its memory holds (None: the whole tensor in the recorded layout; a box: a per-tile
# buffer holding that box densely, row-major); outputs are written on their box, or added
# into it (accumulated over the tiles of a backward segment, zeroed at the first). A
# windowed op runs on its input box with the zeros made explicit and padding 0: the box
# starts where the op's first output of the tile reads (pad_lo before the tensor), so
# the op's own arithmetic then gives exactly the tile's outputs. sfc-train runs the ops
# a tiled CNN is made of (TILE_OPS); any other op in a tile is an error naming it.
TILE_OPS = ("convolution", "convolution_backward", "relu", "relu_", "threshold_backward",
            "add", "add_", "max_pool2d_with_indices", "max_pool2d_with_indices_backward",
            "detach", "cat", "upsample_nearest2d", "upsample_nearest2d_backward",
            "upsample_bilinear2d", "upsample_bilinear2d_backward", "avg_pool2d",
            "avg_pool2d_backward")


class _Operand:
    __slots__ = ("tid", "addr", "bytes", "shape", "kind", "rec", "box", "held")


def _operand_gids(ex, po, go):
    """The graph tensor of each plan operand in OPS order (inputs, outputs, temps): the
    graph op's own where it lists as many (after `sfc compile --inplace` the plan's op
    lists a dying input where the graph's lists the result), else the plan tensor's."""
    tensors = list(po.inputs) + list(po.outputs) + list(po.temps)
    gids = [ex.tab.tensors[ti].graph_id for ti in tensors]
    if len(go["inputs"]) == len(po.inputs) and len(go["outputs"]) == len(po.outputs):
        gids[:len(po.inputs) + len(po.outputs)] = list(go["inputs"]) + list(go["outputs"])
    return gids


def _tile_operands(ex, step, po, go, call):
    """The step's operands in OPS order (inputs, outputs, temps) with their graph tensor,
    address, recorded geometry, box and held box."""
    recs = {}
    for rec in _recs_in([call["args"], call["kwargs"], call["results"]]):
        recs.setdefault(rec["tensor"], rec)
    ops = []
    addrs = list(step.inputs) + list(step.outputs) + list(step.temps)
    tensors = list(po.inputs) + list(po.outputs) + list(po.temps)
    gids = _operand_gids(ex, po, go)
    for j, (a, ti) in enumerate(zip(addrs, tensors)):
        pt = ex.tab.tensors[ti]
        o = _Operand()
        o.tid, o.addr, o.bytes, o.shape = gids[j], a, pt.bytes, list(pt.shape)
        o.kind = pt.kind  # "workspace", "activation", ... (sfcrt.KINDS)
        o.rec = recs.get(o.tid)
        o.box, o.held = step.boxes[j], step.held[j]
        ops.append(o)
    return ops


def _empty(box):
    return any(box.hi[a] <= box.lo[a] for a in range(box.ndim))


def _channel_slice(rec, shape):
    """The recorded view is a channel slice of a contiguous 4-D tensor of `shape` (a
    cat's gradient read in two parts): sizes equal but on channels, strides the
    tensor's, the offset a whole number of channels."""
    sizes, strides, off = list(rec["sizes"]), list(rec["strides"]), int(rec["offset"])
    if len(sizes) != 4 or len(shape) != 4:
        return False
    full = [shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1]
    return [sizes[a] for a in (0, 2, 3)] == [shape[a] for a in (0, 2, 3)] and \
        strides == full and off % full[1] == 0 and off // full[1] + sizes[1] <= shape[1]


def _memory_of(mem, o, what):
    """All the memory the plan gave operand o: the whole tensor in its recorded layout (or
    the channel slice the call reads of it), or a per-tile buffer holding its held box
    densely."""
    rec = o.rec
    if rec is None or rec["tensor"] is None:
        raise TrainError(f"{what}: its call does not name tensor {o.tid}")
    dtype = DT.get(rec["dtype"])
    if o.held is None:
        whole = alias(o.addr, o.bytes, rec, what, mem)
        if (list(whole.shape) != o.shape or int(rec["offset"]) != 0) and \
                not _channel_slice(rec, o.shape):
            raise TrainError(f"{what}: tensor {o.tid} is read through a view on a tile")
        return whole
    ext = [o.held.hi[a] - o.held.lo[a] for a in range(o.held.ndim)]
    n = 1
    for e in ext:
        n *= e
    buf = mem.raw(o.addr, n * ITEM[dtype], dtype).reshape(ext)
    sizes = list(rec["sizes"])
    if len(o.shape) == 4 and len(sizes) == 4 and sizes[1] != o.shape[1]:
        # a channel slice of a per-tile buffer (a cat's gradient made and read inside
        # the segment): the buffer holds every channel of its box, the call reads its own
        if not _channel_slice(rec, o.shape):
            raise TrainError(f"{what}: tensor {o.tid} is read through a view on a tile")
        c0 = int(rec["offset"]) // (o.shape[2] * o.shape[3]) - o.held.lo[1]
        buf = buf[:, c0:c0 + sizes[1]]
    return buf


def _tile_view(mem, o, what):
    """Operand o's box as a torch view of the memory the plan gave it (a channel slice
    the call reads keeps its own channels: boxes span a tensor's channels)."""
    whole, b = _memory_of(mem, o, what), o.box
    if whole.dim() != 4 or b.ndim != 4:
        return whole
    off = [o.held.lo[a] if o.held is not None else 0 for a in range(4)]
    sl = [slice(b.lo[a] - off[a], b.hi[a] - off[a]) for a in range(4)]
    if whole.shape[1] != o.shape[1]:
        sl[1] = slice(None)  # the channel slice the call reads
    return whole[tuple(sl)]


def _padded(x, box, value=0.0):
    pl, ph = box.pad_lo, box.pad_hi
    if not any(pl[a] or ph[a] for a in range(4)):
        return x
    return torch.nn.functional.pad(x, (pl[3], ph[3], pl[2], ph[2]), value=value)


def _two(v):
    """An H, W pair from a recorded int list (one value: both)."""
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 2 if len(v) == 1 else v


class _Reach:
    """What a window's outputs on box d read (or what a transposed window's inputs on box
    d feed: the same rows i*s - p + j*d), per axis (N, C, H, W) [lo, hi): on H and W
    possibly beyond the tensor (the window's padding); no zeros around it."""

    def __init__(self, d, kernel, stride, padding, dilation):
        k, s, p, dl = _two(kernel), _two(stride), _two(padding), _two(dilation)
        self.lo, self.hi = [d.lo[0], 0, 0, 0], [d.hi[0], 0, 0, 0]
        for a in range(2):
            self.lo[2 + a] = d.lo[2 + a] * s[a] - p[a]
            self.hi[2 + a] = (d.hi[2 + a] - 1) * s[a] - p[a] + (k[a] - 1) * dl[a] + 1
        self.pad_lo = self.pad_hi = [0, 0, 0, 0]


def _on_reach(x, xb, r):
    """The input on reach r: x (the step's box xb of the input) where they meet, zeros
    elsewhere (the window's padding, or values a data gradient does not read)."""
    shape = [r.hi[0] - r.lo[0], x.shape[1], r.hi[2] - r.lo[2], r.hi[3] - r.lo[3]]
    if [xb.lo[a] - xb.pad_lo[a] for a in (2, 3)] == [r.lo[2], r.lo[3]] and \
            [xb.hi[a] + xb.pad_hi[a] for a in (2, 3)] == [r.hi[2], r.hi[3]]:
        return _padded(x, xb)  # the box and its zeros are the reach (masked)
    out = torch.zeros(shape, dtype=x.dtype, device=x.device)
    lo = [max(xb.lo[a], r.lo[a]) for a in (2, 3)]
    hi = [min(xb.hi[a], r.hi[a]) for a in (2, 3)]
    if lo[0] < hi[0] and lo[1] < hi[1]:
        out[:, :, lo[0] - r.lo[2]:hi[0] - r.lo[2], lo[1] - r.lo[3]:hi[1] - r.lo[3]] = \
            x[:, :, lo[0] - xb.lo[2]:hi[0] - xb.lo[2], lo[1] - xb.lo[3]:hi[1] - xb.lo[3]]
    return out


def _from_reach(g, r, box):
    """A gradient computed over reach r, on the output's box (inside it)."""
    if box is None:
        return g
    h0, w0 = box.lo[2] - r.lo[2], box.lo[3] - r.lo[3]
    return g[:, :, h0:h0 + box.hi[2] - box.lo[2], w0:w0 + box.hi[3] - box.lo[3]]


def _to_global(idx, box, width):
    """max-pool indices into the padded input box -> flat indices into the whole plane."""
    wp = box.hi[3] - box.lo[3] + box.pad_lo[3] + box.pad_hi[3]
    h0, w0 = box.lo[2] - box.pad_lo[2], box.lo[3] - box.pad_lo[3]
    return (idx // wp + h0) * width + (idx % wp + w0)


def _to_local(idx, box, width):
    wp = box.hi[3] - box.lo[3] + box.pad_lo[3] + box.pad_hi[3]
    h0, w0 = box.lo[2] - box.pad_lo[2], box.lo[3] - box.pad_lo[3]
    return (idx // width - h0) * wp + (idx % width - w0)


def run_tile(ex, step, po, go, call, check_op=None):
    """One tile step (see the comment above TILE_OPS); returns the output tids written."""
    name = call["overload"].split(".")[1]
    where = f"step {step.index} (op {go['id']} '{go['name']}', tile {step.tile})"
    if not po.outputs:
        return []  # a view (a cat's gradient sliced): nothing to compute on a tile
    if name not in TILE_OPS:
        raise TrainError(f"{where}: sfc-train does not run '{name}' on a tile (it runs "
                         f"{', '.join(TILE_OPS)})")
    mem = ex.mem
    opnds = _tile_operands(ex, step, po, go, call)
    ni, no = len(po.inputs), len(po.outputs)
    by_tid = {}
    for j, o in enumerate(opnds[:ni]):
        by_tid.setdefault(o.tid, j)

    def view(j):
        return _tile_view(mem, opnds[j], f"{where} operand {j}")

    def arg(k):
        """Positional argument k: its operand index when it is a tensor."""
        v = call["args"][k]
        if _is_tensor_rec(v):
            return by_tid[v["tensor"]]
        return v

    results = call["results"] if isinstance(call["results"], list) else [call["results"]]
    out_of = {}
    for j in range(ni, ni + no):
        out_of.setdefault(opnds[j].tid, j)

    def store(k, value):
        """Result k of the call (the output operand naming its tensor): written on its
        box, or added into it."""
        rec = results[k] if k < len(results) else None
        if not _is_tensor_rec(rec) or rec["tensor"] not in out_of:
            return  # a result the graph does not keep (an undefined gradient)
        j = out_of[rec["tensor"]]
        o = opnds[j]
        k = j - ni
        if _empty(o.box):
            return
        dst = view(j)
        if tuple(dst.shape) != tuple(value.shape):
            raise TrainError(f"{where}: output {k} computed as {list(value.shape)}, its box is "
                             f"{list(dst.shape)}")
        mode = step.accumulate[k]
        if mode == sfcrt.WRITE:
            dst.copy_(value)
        else:
            dst.add_(value)

    def computed(output_mask):
        """The recorded output_mask, less the results whose box is empty (the step does
        not compute them)."""
        mask = list(output_mask)
        for k in range(len(mask)):
            box = _out_box(k) if k < len(results) else None
            if box is not None and _empty(box):
                mask[k] = False
        return mask

    def opt(k, key, default):
        """Argument k of the call, given positionally, by name, or its default."""
        return call["args"][k] if len(call["args"]) > k else call["kwargs"].get(key, default)

    def _out_box(k):
        rec = results[k]
        return opnds[out_of[rec["tensor"]]].box if _is_tensor_rec(rec) and \
            rec["tensor"] in out_of else None

    for k in range(no):  # the segment's first write of an accumulated output: zero it
        # all, whether or not this step adds to it (its box may be empty: seed mode's
        # input-gradient step names the weight's gradient without computing it)
        if step.accumulate[k] == sfcrt.ACCUMULATE_FIRST:
            _memory_of(mem, opnds[ni + k], f"{where} output {k}").zero_()
    data = [o for o in opnds[ni:ni + no] if o.kind != "workspace"]
    if data and all(_empty(o.box) for o in data):
        return []  # the step computes none of its outputs (an empty box; scratch aside)
    a = call["args"]
    if name == "convolution" and a[6]:
        # transposed: every input of the box feeds the tile, no zeros; the whole
        # contribution of the box, then the tile's part of it
        jx = arg(0)
        xb, ob = opnds[jx].box, _out_box(0)
        bias = view(arg(2)) if _is_tensor_rec(a[2]) else None
        y = torch.ops.aten.convolution.default(view(jx), view(arg(1)), bias, a[3], [0, 0], a[5],
                                               True, [0, 0], a[8])
        r = _Reach(xb, view(arg(1)).shape[2:], a[3], a[4], a[5])
        store(0, _from_reach(y, r, ob))
    elif name == "convolution":
        x, jx = view(arg(0)), arg(0)
        w = view(arg(1))
        bias = view(arg(2)) if _is_tensor_rec(a[2]) else None
        y = torch.ops.aten.convolution.default(_padded(x, opnds[jx].box), w, bias, a[3], [0, 0],
                                               a[5], False, a[7], a[8])
        store(0, y)
    elif name == "convolution_backward" and a[7]:
        # transposed: the input's gradient on its box reads the output gradient over
        # everything the box feeds (zero outside the step's box of it), and so does the
        # weight's (the tile's part only)
        jd, jx = arg(0), arg(1)
        w = view(arg(2))
        r = _Reach(opnds[jx].box, w.shape[2:], a[4], a[5], a[6])
        mask = computed(a[10])
        gi, gw, gb = torch.ops.aten.convolution_backward.default(
            _on_reach(view(jd), opnds[jd].box, r), view(jx), w, a[3], a[4], [0, 0], a[6], True,
            [0, 0], a[9], mask)
        if mask[0]:
            store(0, gi)
        if mask[1]:
            store(1, gw)
        if mask[2]:
            store(2, gb)
    elif name == "convolution_backward":
        jd, jx = arg(0), arg(1)
        gout, w = view(jd), view(arg(2))
        mask = computed(a[10])
        db = opnds[jd].box
        reach = _Reach(db, w.shape[2:], a[4], a[5], a[6])
        gi, gw, gb = torch.ops.aten.convolution_backward.default(
            gout, _on_reach(view(jx), opnds[jx].box, reach), w, a[3], a[4], [0, 0], a[6], a[7],
            a[8], a[9], mask)
        if mask[0]:
            store(0, _from_reach(gi, reach, _out_box(0)))
        if mask[1]:
            store(1, gw)
        if mask[2]:
            store(2, gb)
    elif name in ("relu", "relu_"):
        x = view(arg(0))
        if name == "relu_":
            x.relu_()
        else:
            store(0, torch.relu(x))
    elif name == "threshold_backward":
        store(0, torch.ops.aten.threshold_backward.default(view(arg(0)), view(arg(1)), a[2]))
    elif name in ("add", "add_"):
        alpha = call["kwargs"].get("alpha", 1)
        out = opnds[ni]
        if name == "add_":
            view(arg(0)).add_(view(arg(1)), alpha=alpha)
        elif not _empty(out.box):
            # the sum on the output's box: each input added on its own box (a gradient is
            # zero outside it), the second scaled by alpha
            res = None
            for k, scale in ((0, 1), (1, alpha)):
                jk = arg(k)
                ob, ib = out.box, opnds[jk].box
                if _empty(ib):
                    continue
                v = view(jk)
                if res is None:
                    res = torch.zeros([ob.hi[i] - ob.lo[i] for i in range(4)], dtype=v.dtype,
                                      device=v.device)
                sl = (slice(ib.lo[0] - ob.lo[0], ib.hi[0] - ob.lo[0]), slice(None),
                      slice(ib.lo[2] - ob.lo[2], ib.hi[2] - ob.lo[2]),
                      slice(ib.lo[3] - ob.lo[3], ib.hi[3] - ob.lo[3]))
                if v.shape[1] != res.shape[1]:
                    raise TrainError(f"{where}: a sum reads a channel slice of an input")
                res[sl] += v if scale == 1 else v * scale
            if res is not None:
                store(0, res)
    elif name == "max_pool2d_with_indices":
        jx = arg(0)
        x = view(jx)
        if opt(5, "ceil_mode", False):
            raise TrainError(f"{where}: ceil_mode pooling cannot run on a tile yet")
        y, idx = torch.ops.aten.max_pool2d_with_indices.default(
            _padded(x, opnds[jx].box, float("-inf")), a[1], opt(2, "stride", []), [0, 0],
            opt(4, "dilation", [1]), False)
        store(0, y)
        store(1, _to_global(idx, opnds[jx].box, ex.tab.tensors[po.inputs[jx]].shape[3]))
    elif name == "max_pool2d_with_indices_backward":
        jd, jx, ji = arg(0), arg(1), arg(7)
        width = ex.tab.tensors[po.inputs[jx]].shape[3]
        stride = a[3] if a[3] else a[2]
        reach = _Reach(opnds[jd].box, a[2], stride, a[4], a[5])
        gi = torch.ops.aten.max_pool2d_with_indices_backward.default(
            view(jd), _on_reach(view(jx), opnds[jx].box, reach), a[2], stride, [0, 0], a[5],
            a[6], _to_local(view(ji), reach, width))
        store(0, _from_reach(gi, reach, _out_box(0)))
    elif name == "detach":
        if no:
            store(0, view(arg(0)))
    elif name == "cat":
        if opt(1, "dim", 0) != 1:
            raise TrainError(f"{where}: a cat along dimension {opt(1, 'dim', 0)} on a tile")
        store(0, torch.cat([view(by_tid[r["tensor"]]) for r in a[0]], dim=1))
    elif name == "upsample_nearest2d":
        # output o reads input floor(o * n_in / n_out): gathered from the input box
        jx = arg(0)
        xb, ob = opnds[jx].box, _out_box(0)
        n_in, n_out = opnds[jx].shape, opnds[ni].shape
        x = view(jx)
        for a2 in (2, 3):
            src = [o * n_in[a2] // n_out[a2] - xb.lo[a2] for o in range(ob.lo[a2], ob.hi[a2])]
            x = x.index_select(a2, torch.tensor(src, dtype=torch.long, device=x.device))
        store(0, x)
    elif name in ("upsample_bilinear2d", "upsample_bilinear2d_backward"):
        # align_corners false: output o reads i0 = floor(src) and the next row, src =
        # max(0, (o + 1/2) * scale - 1/2), weights 1 - frac, frac (PyTorch's); each axis
        # in turn, on the input's box (backward: added into the input gradient's box)
        bwd = name.endswith("_backward")
        jd = arg(0)
        box_in = _out_box(0) if bwd else opnds[jd].box  # the input's side
        box_out = opnds[jd].box if bwd else _out_box(0)
        n_in = list(a[2]) if bwd else opnds[jd].shape
        n_out = opnds[jd].shape if bwd else opnds[ni].shape
        if opt(3 if bwd else 2, "align_corners", False):
            raise TrainError(f"{where}: align_corners bilinear up-sampling on a tile")
        scales = opt(4 if bwd else 3, "scale_factors", None)
        v = view(jd)
        for k2, a2 in enumerate((2, 3)):
            scale = (1.0 / scales[k2]) if scales else n_in[a2] / n_out[a2]
            o = torch.arange(box_out.lo[a2], box_out.hi[a2], dtype=torch.float64)
            src = torch.clamp((o + 0.5) * scale - 0.5, min=0.0)
            i0 = src.floor().long()
            lam1 = (src - i0.double()).to(v.dtype)
            i1 = torch.where(i0 < n_in[a2] - 1, i0 + 1, i0)
            shape = [1, 1, 1, 1]
            shape[a2] = -1
            lam1, lam0 = lam1.reshape(shape), (1 - lam1).reshape(shape)
            if not bwd:
                v = v.index_select(a2, i0 - box_in.lo[a2]) * lam0 + \
                    v.index_select(a2, i1 - box_in.lo[a2]) * lam1
                continue
            size = list(v.shape)
            size[a2] = box_in.hi[a2] - box_in.lo[a2]
            acc = torch.zeros(size, dtype=v.dtype, device=v.device)
            for idx, lam in ((i0, lam0), (i1, lam1)):
                loc = idx - box_in.lo[a2]
                keep = (loc >= 0) & (loc < size[a2])  # seed: only the box's own inputs
                acc.index_add_(a2, loc[keep], (v * lam).index_select(a2, keep.nonzero()[:, 0]))
            v = acc
        store(0, v)
    elif name == "avg_pool2d":
        jx = arg(0)
        if opt(4, "ceil_mode", False) or not opt(5, "count_include_pad", True):
            raise TrainError(f"{where}: ceil_mode or count_include_pad false pooling on a tile")
        store(0, torch.ops.aten.avg_pool2d.default(
            _padded(view(jx), opnds[jx].box), a[1], opt(2, "stride", []), [0, 0], False, True,
            opt(6, "divisor_override", None)))
    elif name == "avg_pool2d_backward":
        jd, jx = arg(0), arg(1)
        if a[5] or not a[6]:
            raise TrainError(f"{where}: ceil_mode or count_include_pad false pooling on a tile")
        stride = a[3] if a[3] else a[2]
        reach = _Reach(opnds[jd].box, a[2], stride, a[4], [1, 1])
        gi = torch.ops.aten.avg_pool2d_backward.default(
            view(jd), _on_reach(view(jx), opnds[jx].box, reach), a[2], stride, [0, 0], False,
            True, a[7])
        store(0, _from_reach(gi, reach, _out_box(0)))
    elif name == "upsample_nearest2d_backward":
        # each output gradient added to the input it read, inside the input's box
        jd = arg(0)
        db, gb = opnds[jd].box, _out_box(0)
        g = view(jd)
        n_in, full_out = list(a[2]), list(opnds[jd].shape)  # input_size; the gradient's
        for a2 in (2, 3):
            src = [o * n_in[a2] // full_out[a2] - gb.lo[a2] for o in range(db.lo[a2], db.hi[a2])]
            shape = list(g.shape)
            shape[a2] = gb.hi[a2] - gb.lo[a2]
            g = torch.zeros(shape, dtype=g.dtype, device=g.device).index_add_(
                a2, torch.tensor(src, dtype=torch.long, device=g.device), g)
        store(0, g)
    return [o.tid for o in opnds[ni:ni + no]]


class EagerRecorder(Recorder):
    """The exporter's recorder, keeping a copy of every op's tensor results (--check)."""

    def __init__(self):
        super().__init__(timing=False, calls=True)
        self.values = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        n = len(self.ops)
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if len(self.ops) == n:  # not an op of the graph (profiler ranges)
            return out
        self.values.append([o.detach().clone() if isinstance(o, torch.Tensor) else None
                            for o in (out if isinstance(out, (list, tuple)) else [out])])
        return out


def micro_batches(example, batch, k):
    """example split into k micro-batches along the batch dimension (tensors whose first
    size is the batch; anything else is shared)."""
    if batch % k:
        raise TrainError(f"--reference accumulate:{k}: the batch {batch} is not a multiple "
                         f"of {k}")
    m = batch // k

    def part(i):
        return tree_map(lambda t: t[i * m:(i + 1) * m]
                        if isinstance(t, torch.Tensor) and t.dim() and t.shape[0] == batch
                        else t, example)
    return [part(i) for i in range(k)]


def accumulated_iteration(model, opt, example, loss_fn, batch, k):
    """The reference of --reference accumulate:K: one in-core iteration as K micro-batches
    whose losses are scaled by 1/K, the gradients summed by autograd, then one optimizer
    step: what a framework does when the batch does not fit. For a loss that is a mean
    over the batch (every built-in model's) it computes the full batch's loss and
    gradients up to rounding, unless the model mixes samples (batch-norm statistics) or
    draws random numbers (dropout). Returns the loss (the micro-batches' mean)."""
    opt.zero_grad(set_to_none=True)
    total = None
    for inputs, target in micro_batches(example, batch, k):
        loss = loss_fn(model(*inputs), target)
        (loss / k).backward()
        total = loss.detach() / k if total is None else total + loss.detach() / k
    opt.step()
    return total


def eager_iteration(model, opt, example, loss_fn):
    """One eager iteration as sfc-export records it; returns (recorder, loss value,
    {param name: grad}, {param name: grad tensor id})."""
    inputs, target = example
    opt.zero_grad(set_to_none=True)
    rec = EagerRecorder()
    exporter._declare_state(rec, model, opt, inputs, target)
    handles = rec.attach_module_names(model)
    try:
        with rec:
            loss = exporter._iteration(model, inputs, target, loss_fn, opt, rec)
    finally:
        for h in handles:
            h.remove()
    grads, grad_ids = {}, {}
    for n, p in model.named_parameters():
        if p.grad is not None:
            grads[n] = p.grad.detach().clone()
            st = untyped(p.grad)
            grad_ids[n] = rec._find(st) if st is not None else None
    value = loss.detach().clone()
    rec.finish(loss)
    return rec, value, grads, grad_ids


# --------------------------------------------------------------------------- the executor
# where an executor's time goes (Executor(profile=True)): seconds per part, summed
PROFILE_PARTS = ("pull", "sync", "state", "alias", "decode", "call", "results", "snapshot",
                 "check", "other")


class Executor:
    """Runs a plan's iterations on `mem` (HOST, FakeCudaMemory or CudaMemory) through a
    session on the runtime's `device` ("host" or "cuda"; session= keyword options).
    profile=True sums perf_counter time per part of a step into .profile (PROFILE_PARTS):
    the pull loop's calls (next/done, begin/end), the stream synchronisation (fake
    driver), persistent-state copies, alias creation, argument decoding (without the
    aliases it makes), the ATen call, copying results into the arena, keeping watched
    tensors' bytes, the --check comparison, and the rest of the step."""

    def __init__(self, graph, plan, model, opt, example, log=None, device="host", mem=None,
                 session=None, profile=False, use_out=True, cache_steps=True):
        self.g, self.plan, self.log = graph, plan, log or (lambda m: None)
        self.model, self.opt, self.example = model, opt, example
        self.mem = mem or HOST
        self.device = None if self.mem.device.type == "cpu" else self.mem.device
        self.tab = plan.tables()
        self.gops = {o["id"]: o for o in graph["ops"]}
        self.gtensors = {t["id"]: t for t in graph["tensors"]}
        self._match_plan()
        self.state, names = _state_tensors(model, opt, example)
        self._match_state(names)
        try:
            self.session = sfcrt.Session(plan, device=device, **(session or {}))
        except sfcrt.Error as e:
            raise TrainError(f"runtime: {device} session: {e}") from e
        self.profile = dict.fromkeys(PROFILE_PARTS, 0.0) if profile else None
        self._fill_homes()
        self.loss_id = next((t["id"] for t in graph["tensors"] if t.get("kind") == "output"), None)
        self.loss_geom = None
        for o in graph["ops"]:
            for r, _ in _pair_results(o["call"]["results"], o["call"]["results"], []):
                if r["tensor"] == self.loss_id and self.loss_id is not None:
                    self.loss_geom = r
        # graph tensor ids whose bytes are kept after each write: the loss, and with
        # --check the gradients (run() adds them)
        self.watch = {self.loss_id} - {None}
        self.snap = {}
        # graph op id -> (ATen overload, tensor ids its call reads, its out= variant or None)
        self.prepared = {}
        self.use_out = use_out
        # step index -> (its operand addresses, decoded args, kwargs, out= aliases, result
        # aliases): the aliases of one iteration reused by the next (cache_steps=False:
        # made anew at every step)
        self.step_cache = {}
        self.tiled_ops = {}  # op type -> tile steps run (run_tile)
        self.cache_steps = cache_steps
        self.out_fallbacks = set()  # out= overloads that failed once (no kernel here)
        self.step_us = []
        self.steps = 0

    def _match_plan(self):
        t = self.tab
        g = self.g
        if t.graph_op_count != len(g["ops"]) or t.graph_tensor_count != len(g["tensors"]):
            raise TrainError(f"the plan is not compiled from this graph: it was compiled from "
                             f"{t.graph_op_count} ops and {t.graph_tensor_count} tensors, the "
                             f"graph has {len(g['ops'])} and {len(g['tensors'])}")
        for pt in t.tensors:
            if pt.graph_id < 0:
                continue
            gt = self.gtensors.get(pt.graph_id)
            if gt is None or gt["bytes"] != pt.bytes:
                raise TrainError(
                    f"the plan is not compiled from this graph at its batch: tensor "
                    f"{pt.graph_id} '{pt.name}' has {pt.bytes} bytes in the plan, "
                    f"{gt['bytes'] if gt else 'none'} in the graph (a plan compiled with "
                    f"--batch or --image-size cannot replay the recorded calls)")
        for po in t.ops:
            go = self.gops.get(po.graph_id)
            if go is None or go["type"] != po.type:
                raise TrainError(f"the plan is not compiled from this graph: its op {po.index} "
                                 f"is '{po.type}' (graph op {po.graph_id}), the graph's is "
                                 f"'{go['type'] if go else 'missing'}'")

    def _match_state(self, names):
        for tid, name, nbytes, kind in names:
            gt = self.gtensors.get(tid)
            if gt is None or gt["name"] != name or gt["bytes"] != nbytes or gt["kind"] != kind:
                got = f"'{gt['name']}' ({gt['kind']}, {gt['bytes']} bytes)" if gt else "nothing"
                raise TrainError(f"the graph does not belong to this model: tensor {tid} is "
                                 f"{got} in the graph, the model's is '{name}' ({kind}, "
                                 f"{nbytes} bytes): same MODEL, --batch and builder options "
                                 f"as the export?")
        declared = {tid for tid, *_ in names}
        for t in self.g["tensors"]:
            if t["kind"] in PERSISTENT_KINDS and t["id"] not in declared:
                raise TrainError(f"graph tensor {t['id']} '{t['name']}' is a constant the "
                                 f"model made from Python data; the executor cannot replay "
                                 f"it")

    def _fill_homes(self, only=None):
        """Every persistent tensor starts in its home (the device arena, or pinned host
        memory when the plan moves it off the device between uses): the model's values
        are written there before the first iteration, as any framework does (only: these
        graph tensor ids alone)."""
        for pt in self.tab.tensors:
            if pt.graph_id not in self.state or (only is not None and pt.graph_id not in only):
                continue
            try:
                addr, where = self.session.home(pt.index)
            except sfcrt.Error:
                continue  # no block (no step uses it): nothing to fill
            if not addr:
                continue
            value = self.state[pt.graph_id]
            if where == "host":  # pinned host memory, whatever the device
                write_host(addr, value, pt.bytes)
            else:
                self.mem.copy(addr, untyped(value).data_ptr(), pt.bytes)

    def feed(self, example, it):
        """A new batch between iterations: written into the batch tensors in place and
        into their homes, where the plan's next iteration reads it (a framework's data
        loader writing into the bound input tensors)."""
        copy_batch(self.example, example, it)
        ids = {id(t) for t in batch_tensors(self.example)}
        self._fill_homes({tid for tid, t in self.state.items() if id(t) in ids})

    # -- one step ---------------------------------------------------------------------
    def _operands(self, step):
        """The plan's op, the graph's op and {graph tensor id: (address, bytes)}."""
        po = self.tab.ops[step.op]
        go = self.gops[po.graph_id]
        where = {}
        for addrs, idx, gids in ((step.inputs, po.inputs, go["inputs"]),
                                 (step.outputs, po.outputs, go["outputs"])):
            for a, ti in zip(addrs, idx):
                pt = self.tab.tensors[ti]
                if pt.graph_id >= 0:
                    where[pt.graph_id] = (a, pt.bytes)
            # `sfc compile --inplace` moved an elementwise result into a dying input: the
            # plan's op lists that input where the graph's lists the result, at the same
            # place; the call record names the result, so it resolves to the input's memory
            if len(gids) == len(idx):
                for a, ti, gid in zip(addrs, idx, gids):
                    if gid not in where:
                        where[gid] = (a, self.tab.tensors[ti].bytes)
        return po, go, where

    def run_step(self, step, check_op=None):
        if step.tile is not None:
            return self.run_tile_step(step)
        prof, clock = self.profile, time.perf_counter
        if prof is not None:
            t0 = clock()
        mem = self.mem
        mem.sync(step)
        if prof is not None:
            t1 = clock()
            prof["sync"] += t1 - t0
        po, go, where = self._operands(step)
        call = go["call"]
        if prof is not None:
            t2 = clock()  # mapping the operands to graph tensors falls in "other"
            aliasing = [0.0]

        def resolve(rec):
            if prof is not None:
                ta = clock()
            tid = rec["tensor"]
            if tid is None:
                r = alias(0, 0, rec, f"op {go['id']}", mem)
            elif tid not in where:
                raise TrainError(f"step {step.index} (op {go['id']} '{go['name']}'): its call "
                                 f"reads tensor {tid}, which the plan's op does not list")
            else:
                a, n = where[tid]
                r = alias(a, n, rec, f"op {go['id']} tensor {tid}", mem)
            if prof is not None:
                aliasing[0] += clock() - ta
            return r

        prep = self.prepared.get(go["id"])
        if prep is None:  # the overload, the tensors the call reads, its out=: once per op
            reads = _tensor_ids(call["args"], set())
            reads = _tensor_ids(call["kwargs"], reads)
            func = _overload(call["overload"])
            variant = None
            if self.use_out and call["overload"].split(".")[1] not in UNINITIALISED:
                results = call["results"] if isinstance(call["results"], list) \
                    else [call["results"]]
                variant = _out_variant(func, results)
                if variant is not None and any(r["tensor"] is None or r["tensor"] in reads
                                               for r in results):
                    variant = None  # a result the op also reads, or one the plan does not hold
            prep = self.prepared[go["id"]] = (func, reads, variant)
        func, reads, variant = prep
        # the decoded call, kept per step: the plan puts every operand at the same address
        # in every iteration, so the aliases made once serve them all (rebuilt when the
        # addresses differ, never kept for an op that changes a tensor's metadata)
        addrs = (tuple(step.inputs), tuple(step.outputs))
        cached = self.step_cache.get(step.index)
        if cached is not None and cached[0] == addrs:
            _, args, kwargs, outs, dsts = cached
        else:
            dev = self.device
            args = _decode(call["args"], resolve, dev)
            kwargs = {k: _decode(v, resolve, dev) for k, v in call["kwargs"].items()}
            outs, dsts = None, {}
            if variant is not None:  # the results' aliases: the op writes the arena itself
                results = call["results"] if isinstance(call["results"], list) \
                    else [call["results"]]
                outs = [resolve(r) for r in results]
                kwargs.update(zip(variant[1], outs))
            if self.cache_steps and call["overload"].split(".")[1] not in RESTRIDES:
                self.step_cache[step.index] = (addrs, args, kwargs, outs, dsts)
        if prof is not None:
            t3 = clock()
            prof["decode"] += t3 - t2 - aliasing[0]
            prof["alias"] += aliasing[0]
            aliasing[0] = 0.0
        if outs is not None:
            ptrs = [t.data_ptr() for t in outs]
            try:
                out = variant[0](*args, **kwargs)
            except (NotImplementedError, RuntimeError):
                # no kernel for this backend (native_batch_norm.out on the CPU), or one
                # that refuses these out tensors: the functional overload from now on
                # (the results were not read: any partial write is overwritten below)
                self.prepared[go["id"]] = (func, reads, None)
                self.out_fallbacks.add(str(variant[0]))
                self.step_cache.pop(step.index, None)
                kwargs = {k: v for k, v in kwargs.items() if k not in variant[1]}
                outs, variant = None, None
        if outs is not None:
            got = list(out) if isinstance(out, (tuple, list)) else [out]
            if len(got) != len(outs) or any(
                    not isinstance(g, torch.Tensor) or g.data_ptr() != p or g.shape != t.shape
                    for g, p, t in zip(got, ptrs, outs)):
                raise TrainError(f"step {step.index} (op {go['id']} '{go['name']}'): "
                                 f"{variant[0]} did not write its results where the plan put "
                                 f"them (resized or reallocated); run with --no-out")
            out = out if isinstance(call["results"], list) else got[0]
        else:
            out = func(*args, **kwargs)
        if prof is not None:
            t4 = clock()
            prof["call"] += t4 - t3
        pairs = _pair_results(call["results"], out, []) if outs is None else []
        for k, (rec, val) in enumerate(pairs):
            tid = rec["tensor"]
            if tid is None or tid in reads or not isinstance(val, torch.Tensor):
                continue
            dst = dsts.get(k)
            if dst is None:
                dst = dsts[k] = resolve(rec)
            if dst.shape != val.shape or dst.dtype != val.dtype:
                raise TrainError(f"step {step.index} (op {go['id']} '{go['name']}'): result {k} is "
                                 f"{list(val.shape)} {val.dtype}, recorded "
                                 f"{list(dst.shape)} {dst.dtype}")
            dst.copy_(val)
        if prof is not None:
            t5 = clock()
            prof["results"] += t5 - t4 - aliasing[0]
            prof["alias"] += aliasing[0]
        if check_op is not None:
            check_op(go, out)
        if prof is not None:
            t6 = clock()
            prof["check"] += t6 - t5
        snapping = 0.0
        for tid in go["outputs"]:
            if tid in self.state and tid in where:
                a, n = where[tid]
                mem.copy(untyped(self.state[tid]).data_ptr(), a, n)
            if tid in self.watch and tid in where:
                a, n = where[tid]
                if prof is not None:
                    ta = clock()
                self.snap[tid] = mem.raw(a, n).clone()
                if prof is not None:
                    snapping += clock() - ta
        if prof is not None:
            prof["state"] += clock() - t6 - snapping
            prof["snapshot"] += snapping

    def run_tile_step(self, step):
        """A tiled step: the op on its boxes (run_tile); no --check of its own results
        (a tile computes part of them); persistent and watched outputs kept as below."""
        self.mem.sync(step)
        po, go, where = self._operands(step)
        self.tiled_ops[step.type] = self.tiled_ops.get(step.type, 0) + 1
        with torch.no_grad():
            written = run_tile(self, step, po, go, go["call"])
        held = {gid for gid, h in zip(_operand_gids(self, po, go), step.held) if h is not None}
        for tid in written:
            if tid in held:
                continue  # a per-tile buffer: not the tensor's memory
            if tid in self.state and tid in where:
                a, n = where[tid]
                self.mem.copy(untyped(self.state[tid]).data_ptr(), a, n)
            if tid in self.watch and tid in where:
                a, n = where[tid]
                self.snap[tid] = self.mem.raw(a, n).clone()

    def result_paths(self):
        """How the ops run so far landed their results: through an out= overload, copied
        from PyTorch's result, or neither (in place, views, no tensor result)."""
        n = {"ops_out_variant": 0, "ops_copied": 0, "ops_in_place": 0}
        for oid, (_, reads, variant) in self.prepared.items():
            fresh = [r for r, _ in _pair_results(self.gops[oid]["call"]["results"],
                                                 self.gops[oid]["call"]["results"], [])
                     if r["tensor"] is not None and r["tensor"] not in reads]
            key = "ops_out_variant" if variant else "ops_copied" if fresh else "ops_in_place"
            n[key] += 1
        return n

    def iteration(self, check_op=None):
        self.snap = {}
        prof, clock = self.profile, time.perf_counter
        with torch.no_grad():
            t_pull = clock()
            for step in self.session.iteration():
                t0 = time.perf_counter_ns()
                if prof is not None:
                    prof["pull"] += clock() - t_pull
                    before = sum(prof.values())
                    ts = clock()
                self.run_step(step, check_op)
                self.step_us.append((time.perf_counter_ns() - t0) / 1e3)
                self.steps += 1
                if prof is not None:
                    t_pull = clock()
                    prof["other"] += (t_pull - ts) - (sum(prof.values()) - before)
            if prof is not None:
                prof["pull"] += clock() - t_pull
        return self.loss()

    def tensor_value(self, tid, geom):
        raw = self.snap.get(tid)
        if raw is None:
            return None
        dtype = DT[geom["dtype"]]
        if _extent(geom, ITEM[dtype]) > raw.numel():
            raise TrainError(f"tensor {tid}: the view needs more bytes than the tensor has")
        return _view(raw, geom, dtype).clone()

    def loss(self):
        if self.loss_id is None or self.loss_geom is None:
            return None
        return self.tensor_value(self.loss_id, self.loss_geom)


# --------------------------------------------------------------------------- the check
def _geom_of(t):
    return {"sizes": list(t.shape), "strides": list(t.stride()), "offset": 0,
            "dtype": exporter_dtype(t.dtype)}


def exporter_dtype(d):
    for k, v in DT.items():
        if v == d:
            return k
    raise TrainError(f"dtype {d} is not supported")


def _strip(call, any_device=False):
    s = json.dumps(call, sort_keys=True)
    return re.sub(r'\{"device": "[^"]*"\}', '{"device": "*"}', s) if any_device else s


def compare_sequences(graph, rec, iteration, any_device=False):
    """The eager iteration's ops and calls must be the graph's."""
    gops = graph["ops"]
    for k, op in enumerate(rec.ops):
        if k >= len(gops):
            raise Mismatch(f"iteration {iteration}: the model ran op {k} '{op['call']['overload']}' "
                           f"past the graph's last op ({len(gops)} ops): the model diverges "
                           f"from the graph the plan was compiled from")
        a, b = gops[k]["call"], op["call"]
        if a["overload"] != b["overload"] or _strip(a, any_device) != _strip(b, any_device):
            what = (f"the graph expects '{a['overload']}', the model ran '{b['overload']}'"
                    if a["overload"] != b["overload"] else
                    f"'{a['overload']}' with other arguments or tensors than the graph's")
            raise Mismatch(f"iteration {iteration}: op {k} ('{gops[k]['name']}'): {what}: the "
                           f"model diverges from the graph the plan was compiled from")
    if len(rec.ops) != len(gops):
        raise Mismatch(f"iteration {iteration}: the model ran {len(rec.ops)} ops, the graph has "
                       f"{len(gops)}")


class Comparer:
    """--check's comparison: bitwise, or with tolerance > 0 (--tolerance) a float tensor
    whose scaled difference max|plan - eager| / max|eager| is at most the tolerance
    counts as equal and its difference is kept (.max_rel, .iteration_max)."""

    def __init__(self, tolerance):
        self.tolerance = tolerance
        self.max_rel = self.iteration_max = 0.0

    def differs(self, a, b):
        """None when plan value a equals eager value b; else what differs (one phrase)."""
        if _bits_equal(a, b):
            return None
        if self.tolerance > 0 and a.shape == b.shape and a.dtype == b.dtype and \
                a.dtype.is_floating_point:
            x, y = a.detach().double(), b.detach().double()
            if bool((torch.isnan(x) == torch.isnan(y)).all()):
                both = torch.isnan(x)
                d = float((x - y).abs().masked_fill(both, 0).max())
                scale = float(y.abs().masked_fill(both, 0).max())
                r = d / scale if scale > 0 else math.inf
                if r <= self.tolerance:
                    self.max_rel = max(self.max_rel, r)
                    self.iteration_max = max(self.iteration_max, r)
                    return None
        return _difference(a, b)


def device_setup(args):
    """(runtime device, memory, session options) from --device, --cuda-mode and
    --fake-driver."""
    device = args.device or ("cuda" if args.fake_driver else "host")
    if device not in ("host", "cuda"):
        raise TrainError(f"--device {device}: sfc-train runs on host or cuda")
    if device == "host":
        if args.fake_driver:
            raise TrainError("--fake-driver runs the cuda device: give --device cuda")
        if args.cuda_mode is not None:
            raise TrainError(f"--cuda-mode {args.cuda_mode} applies to --device cuda only")
        return device, HOST, {}
    mode = args.cuda_mode or "arena"
    if mode not in ("arena", "va", "paged"):
        raise TrainError(f"--cuda-mode {mode}: arena, va or paged")
    if args.fake_driver:
        path = os.path.abspath(args.fake_driver)
        if not os.path.isfile(path):
            raise TrainError(f"--fake-driver {args.fake_driver}: no such file")
        os.environ["SFCRT_CUDA_LIBRARY"] = path  # the driver the runtime loads
        return device, FakeCudaMemory(path), {"cuda_mode": mode}
    if not torch.cuda.is_available():
        raise TrainError("--device cuda: this PyTorch sees no CUDA device (give --fake-driver "
                         "LIB to run the cuda device on the test suite's fake driver)")
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    mem = CudaMemory()
    # PyTorch's current stream is the session's compute stream (0: the default stream)
    return device, mem, {"cuda_mode": mode, "stream": torch.cuda.current_stream().cuda_stream}


def to_device(model, opt, example, dev):
    """Moves the model, its optimizer state and the example batch to dev (in place for
    the module and the optimizer); returns the example."""
    model.to(dev)
    for st in opt.state.values():
        for k, v in list(st.items()):
            if isinstance(v, torch.Tensor):
                st[k] = v.to(dev)
    return tree_map(lambda t: t.to(dev) if isinstance(t, torch.Tensor) else t, example)


def _rng_state(cuda):
    return torch.get_rng_state(), (torch.cuda.get_rng_state() if cuda else None)


def _set_rng_state(st):
    torch.set_rng_state(st[0])
    if st[1] is not None:
        torch.cuda.set_rng_state(st[1])


def _rng_equal(a, b):
    return torch.equal(a[0], b[0]) and (a[1] is None or torch.equal(a[1], b[1]))


def prepare(args):
    """Checks the options, loads graph and plan, builds the model (on the device):
    returns (graph, plan, model, opt, example, loss_fn, batch, device, mem, session
    options)."""
    torch.set_num_threads(args.threads)
    graph = load_graph(args.graph)
    src = graph.get("call_source") if isinstance(graph.get("call_source"), dict) else {}
    for key in ("model", "batch", "image_size", "seq_len", "seed", "optimizer"):
        if getattr(args, key, None) is None:
            setattr(args, key, src.get(key))
    if args.model is None:
        raise TrainError("no MODEL given and the graph does not record one")
    if args.seed is None:
        args.seed = 0
    batch = args.batch if args.batch is not None else graph.get("batch")
    if batch is None:
        raise TrainError("the graph has no batch: give --batch")
    optimizer = args.optimizer or graph.get("optimizer", "sgd")
    device, mem, sopts = device_setup(args)
    try:
        plan = sfcrt.Plan(args.plan)
    except sfcrt.Error as e:
        raise TrainError(f"plan: {e}") from e
    except OSError as e:
        raise TrainError(f"cannot load libsfcrt: {e}") from e
    model, opt, example, loss_fn, make = build(args.model, batch, args.image_size,
                                               args.seq_len, optimizer, args.seed)
    if mem.device.type != "cpu":
        example = to_device(model, opt, example, mem.device)
    args.make_batch = make
    return graph, plan, model, opt, example, loss_fn, batch, device, mem, sopts


def run(args, log):
    """sfc-train: args from tools/sfc-train; returns the report dict."""
    graph, plan, model, opt, example, loss_fn, batch, device, mem, sopts = prepare(args)
    on_gpu = mem.device.type == "cuda"
    tolerance = getattr(args, "tolerance", None) or 0.0
    cmp = Comparer(tolerance)
    accumulate = getattr(args, "accumulate", None)  # --reference accumulate:K
    eager = copy.deepcopy((model, opt, example)) if args.check else None
    ex = Executor(graph, plan, model, opt, example, log, device=device, mem=mem, session=sopts,
                  use_out=not getattr(args, "no_out", False))
    losses = []
    report = {"iterations": [], "ops_checked": 0}
    new_data = getattr(args, "data", "new") == "new"
    for it in range(args.iterations):
        check_op = None
        cmp.iteration_max = 0.0
        if new_data and it > 0:  # a new batch, as training does; the same one for eager
            fresh = next_batch(args.make_batch, batch, args.seed, it)
            ex.feed(fresh, it)
            if eager is not None:
                copy_batch(eager[2], fresh, it)
        if eager is not None and accumulate:
            rng = _rng_state(on_gpu)
            eloss = accumulated_iteration(*eager, loss_fn, batch, accumulate)
            egrads, rng_after = {}, _rng_state(on_gpu)  # gradients: see the updated state
            _set_rng_state(rng)
        elif eager is not None:
            rng = _rng_state(on_gpu)
            rec, eloss, egrads, grad_ids = eager_iteration(*eager, loss_fn)
            rng_after = _rng_state(on_gpu)
            compare_sequences(graph, rec, it, any_device=on_gpu)
            _set_rng_state(rng)
            ex.watch |= {g for g in grad_ids.values() if g is not None}

            def check_op(go, out, _rec=rec, _it=it):
                if go["type"] in UNINITIALISED:  # whatever bytes the memory held
                    return
                want = _rec.values[go["id"]]
                got = [o if isinstance(o, torch.Tensor) else None
                       for o in (out if isinstance(out, (list, tuple)) else [out])]
                for j, (a, b) in enumerate(zip(got, want)):
                    if a is None or b is None:
                        continue
                    d = cmp.differs(a, b)
                    if d is not None:
                        raise Mismatch(f"iteration {_it}: op {go['id']} ('{go['name']}', "
                                       f"{go['call']['overload']}) result {j}: {d}")
                report["ops_checked"] += 1
        try:
            loss = ex.iteration(check_op)
        except sfcrt.Error as e:
            raise TrainError(f"runtime: {e}") from e
        losses.append(float(loss) if loss is not None else float("nan"))
        log(f"sfc-train: iteration {it}: loss {losses[-1]!r}")
        if eager is not None:
            if not accumulate and not _rng_equal(_rng_state(on_gpu), rng_after):
                raise Mismatch(f"iteration {it}: the plan run drew other random numbers than "
                               f"eager PyTorch")
            if loss is None or cmp.differs(loss.reshape(eloss.shape), eloss) is not None:
                raise Mismatch(f"iteration {it}: loss: plan {losses[-1]!r}, "
                               f"{'accumulated' if accumulate else 'eager'} {float(eloss)!r}")
            for n, gval in egrads.items():
                tid = grad_ids[n]
                got = ex.tensor_value(tid, _geom_of(gval)) if tid is not None else None
                if got is None:
                    raise Mismatch(f"iteration {it}: the gradient of {n} (tensor {tid}) was "
                                   f"never written by the plan run")
                d = cmp.differs(got, gval)
                if d is not None:
                    raise Mismatch(f"iteration {it}: gradient of {n}: {d}")
            em, eo, _ = eager
            # every parameter, buffer and optimizer state tensor is compared before the
            # first difference is raised: the message names it and counts the others
            # (which ones differ localises a fault: only the swapped ones, say)
            bad = []
            for (n, a), (_, b) in zip(list(model.named_parameters()) + list(model.named_buffers()),
                                      list(em.named_parameters()) + list(em.named_buffers())):
                d = cmp.differs(a.detach(), b.detach())
                if d is not None:
                    bad.append((f"parameter {n} after the update", n, d))
            names = {id(p): n for n, p in model.named_parameters()}
            for (p, st), (_q, st2) in zip(opt.state.items(), eo.state.items()):
                for key in sorted(st):
                    if isinstance(st[key], torch.Tensor):
                        d = cmp.differs(st[key], st2[key])
                        if d is not None:
                            n = f"{names.get(id(p))}.{key}"
                            bad.append((f"optimizer state {n}", n, d))
            if bad:
                what, _, d = bad[0]
                more = "" if len(bad) == 1 else (
                    f" (and {len(bad) - 1} more differ: "
                    f"{', '.join(n for _, n, _ in bad[1:13])}{', ...' if len(bad) > 13 else ''})")
                raise Mismatch(f"iteration {it}: {what}: {d}{more}")
            report["iterations"].append({"loss": losses[-1], "reference_loss": float(eloss),
                                         "bitwise": cmp.iteration_max == 0.0,
                                         "max_relative_difference": cmp.iteration_max,
                                         "gradients": len(egrads)})
    if on_gpu:
        torch.cuda.synchronize()
    st = ex.session.stats()
    us = sorted(ex.step_us)
    report.update({
        "model": args.model, "batch": batch, "plan": args.plan, "losses": losses,
        "data": "new" if new_data else "fixed",
        "device": mem.name, "cuda_mode": sopts.get("cuda_mode"),
        "steps": ex.steps, "swaps_in": st.swaps_in, "swaps_out": st.swaps_out,
        "bytes_swapped_in": st.bytes_swapped_in, "bytes_swapped_out": st.bytes_swapped_out,
        "arena_bytes": st.arena_bytes,
        "step_us_median": us[len(us) // 2] if us else None,
        "step_us_p99": percentile(us, 0.99),
        "checked": bool(args.check), "tolerance": tolerance,
        "reference": f"accumulate:{accumulate}" if accumulate else "eager",
        "max_relative_difference": cmp.max_rel, "iterations_run": len(losses),
        **ex.result_paths(), "out_fallbacks": sorted(ex.out_fallbacks),
        "tiled_steps": sum(ex.tiled_ops.values()), "tiled_ops": ex.tiled_ops})
    ex.session.close()
    problems = mem.problems()
    if problems:
        raise TrainError(f"the fake CUDA driver saw misuse by the runtime: {problems}")
    return report


def percentile(sorted_values, q):
    """The q-quantile (nearest rank) of an ascending list; None when empty."""
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1,
                             max(0, int(math.ceil(q * len(sorted_values))) - 1))]
