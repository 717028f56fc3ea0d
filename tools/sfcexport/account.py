"""account.py — make the graph's memory account equal PyTorch's (docs/exporter.md,
"Memory accounting").

The recorder (record.py) sees storages at the dispatch level: what an op returns and
reads. PyTorch's allocator also hands out memory the dispatch level never sees, and it
frees storages when Python drops the last reference, not at their last use. During the
recorded iteration torch.profiler (profile_memory=True) reports every allocation and
free of the device's allocator, with its address and size; the recorder runs each op
inside a profiler range "sfc::K", so every event falls inside op K or in the gap after
some op. From those events:

* PyTorch's peak = bytes of the persistent tensors that existed before the iteration
  (params, buffers, optimizer state, the batch, older tensors an op reads) + the highest
  total of the blocks allocated during the iteration and not yet freed.
* An allocation freed inside the op that made it (a kernel's scratch, a temporary that
  never surfaces as an output) is that op's workspace: workspace_bytes = the op's
  highest running total of events minus the bytes it allocates that outlive it.
* An allocation that outlives its slot but no op ever produces or reads as a storage
  (the RNG states torch.utils.checkpoint saves) becomes a tensor of its own, "hidden",
  produced by the op it was allocated in (or the op after the gap), shape [bytes],
  dtype u8, held until it was freed. One that lives only while one op runs (a Python
  scalar wrapped into a tensor just before the op) is part of that op's workspace.
* A storage first read by an op but allocated during the iteration (the recorder calls
  it an external) is produced by the op it was allocated in (or the op before the
  gap), not persistent.
* A storage PyTorch holds past its last use (a list of views a Python loop keeps, the
  parameter gradients until the next zero_grad, the engine's seed gradient) stays live
  in the graph until the last op during which PyTorch held it: that op lists it in
  `inputs` and in its own field `held` (ignored by sfc: nothing reads it there).

Slots: 0 before the first op, 2k+1 inside op k, 2k+2 in the gap after op k.
"""
import bisect

PERSISTENT = ("input", "param", "optimizer")
MAX_INPUTS = 4096  # docs/graph-format.md: an op lists at most 4096 inputs
PHASE_KIND = {"forward": "activation", "loss": "activation", "backward": "grad",
              "update": "workspace"}


def allocation_events(prof, device_type):
    """The profiled region's allocation events on device_type, in time order: a list of
    (slot, ptr, bytes), bytes < 0 for a free."""
    tree = prof.profiler.kineto_results.experimental_event_tree()
    markers, allocs = [], []
    stack = [(n, None) for n in sorted(tree, key=lambda n: n.start_time_ns, reverse=True)]
    while stack:
        node, k = stack.pop()
        name = node.name
        if k is None and name.startswith("sfc::"):
            k = int(name[5:])
            markers.append((node.start_time_ns, node.end_time_ns, k))
        if str(node.tag).endswith("Allocation"):
            ef = node.extra_fields
            dev = getattr(ef, "device", None)
            if dev is None or dev.type == device_type:
                allocs.append((node.start_time_ns, len(allocs), k, int(ef.ptr), int(ef.alloc_size)))
        stack.extend((c, k) for c in sorted(node.children, key=lambda c: c.start_time_ns,
                                              reverse=True))
    markers.sort()
    starts = [m[0] for m in markers]
    out = []
    for t, _seq, k, ptr, size in sorted(allocs):
        if k is None:  # another thread's event, or between two ops: place it by time
            i = bisect.bisect_right(starts, t) - 1
            if i >= 0 and t <= markers[i][1]:
                k = markers[i][2]
            else:
                out.append((0 if i < 0 else 2 * markers[i][2] + 2, ptr, size))
                continue
        out.append((2 * k + 1, ptr, size))
    return out


class _Block:
    __slots__ = ("ptr", "size", "born", "died", "tid")

    def __init__(self, ptr, size, born):
        self.ptr, self.size, self.born, self.died, self.tid = ptr, size, born, None, None


def _blocks(events):
    """Pair allocations with their frees. Frees of blocks allocated before the profiled
    region have no allocation here and are ignored."""
    blocks, live, by_ptr = [], {}, {}
    for slot, ptr, size in events:
        if size > 0:
            b = _Block(ptr, size, slot)
            blocks.append(b)
            live[ptr] = b
            by_ptr.setdefault(ptr, []).append(b)
        elif size < 0:
            b = live.pop(ptr, None)
            if b is not None:
                b.died = slot
    return blocks, by_ptr


def _op_of_slot(slot, n, after_gap):
    """The op a slot is attributed to: inside op k -> k; the gap after op j -> j (or
    j + 1 with after_gap, when that op exists); before the first op -> -1 (or 0)."""
    if slot % 2 == 1:
        return (slot - 1) // 2
    j = slot // 2 - 1
    if after_gap:
        return min(j + 1, n - 1)
    return j


def account(rec, events, attribute=True, name_prefix="op"):
    """Apply the profiler's allocation events to the recording `rec` (after
    rec.finish). Adds workspace_bytes, hidden tensors, produced externals and held
    operands; returns a dict of numbers, among them torch_net_peak (bytes above the
    persistent state at PyTorch's peak) and claimed (ids of the persistent tensors whose
    storage was allocated during the iteration). attribute=False (no op ranges in the
    events) measures PyTorch's peak only and applies PyTorch's frees."""
    ops, tensors = rec.ops, rec.tensors
    n = len(ops)
    stats = {"workspace_ops": 0, "workspace_bytes": 0, "hidden_tensors": 0, "hidden_bytes": 0,
             "externals_produced": 0, "held_tensors": 0, "held_bytes": 0, "gap_bytes": 0,
             "held_early": 0, "unmatched_storages": 0, "torch_net_peak": 0}
    blocks, by_ptr = _blocks(events) if events is not None else ([], {})

    # the running total of the iteration's blocks, its peak, and each op's peak in it
    running = top = 0
    op_top = {}
    cur, base = None, 0
    live = {}
    gap_top = 0
    for slot, ptr, size in (events or ()):
        if size > 0:
            live[ptr] = size
        elif size < 0:
            if live.pop(ptr, None) is None:
                continue
        if slot != cur:
            cur, base = slot, running
        running += size
        top = max(top, running)
        if slot % 2 == 1:
            k = (slot - 1) // 2
            op_top[k] = max(op_top.get(k, 0), running - base)
        else:
            gap_top = max(gap_top, running - base)
    stats["torch_net_peak"] = top
    stats["gap_bytes"] = gap_top
    if not attribute:
        blocks, by_ptr, op_top = [], {}, {}

    # claim: which block is each recorded storage?
    def claim(ptr, ok):
        cands = [b for b in by_ptr.get(ptr, ()) if b.tid is None and ok(b)]
        return cands[-1] if cands else None

    claimed = set()
    for t in tensors:
        tid = t["id"]
        p = rec.ptr.get(tid)
        if p is None:
            continue
        k = rec.alloc_op.get(tid, -1)
        if k >= 0:  # a fresh output of op k: allocated inside it, outliving it
            b = claim(p, lambda b, s=2 * k + 1: b.born == s and b.died != s)
            if b is None and events is not None and attribute:
                stats["unmatched_storages"] += 1  # not from this device's allocator?
        elif tid in rec.first_read:  # an external: allocated in an earlier slot?
            s = 2 * rec.first_read[tid] + 1
            b = claim(p, lambda b, s=s: b.born < s and (b.died is None or b.died >= s))
        else:
            b = None  # declared before the iteration
        if b is None:
            continue
        b.tid = tid
        if k < 0:
            j = _op_of_slot(b.born, n, after_gap=False)
            if j >= 0:  # produced during the iteration: by the op it was made in / after
                t["kind"] = PHASE_KIND[ops[j]["phase"]]
                rec.alloc_op[tid] = j
                ops[j]["outputs"].append(tid)
                stats["externals_produced"] += 1
            else:
                claimed.add(tid)  # allocated before op 0: persistent, counted in events

    # hidden blocks: outlive their slot, never a recorded storage. One that lives only
    # while one op runs (a Python scalar wrapped into a tensor just before the op and
    # dropped after it) is part of that op's workspace; a longer one is a tensor.
    held_until = dict(rec.held_until)
    pre_single = {}  # op -> bytes of one-op blocks made before it started
    hidden = []
    for b in blocks:
        if b.tid is not None or b.died == b.born:
            continue
        k = _op_of_slot(b.born, n, after_gap=True)
        end = n - 1 if b.died is None else max(_op_of_slot(b.died, n, after_gap=False), k)
        if end == k and b.died is not None:
            if b.born % 2 == 0:
                pre_single[k] = pre_single.get(k, 0) + b.size
            b.tid = -1  # counted in the workspace, below
            continue
        hidden.append((b, k, end))

    # workspaces: each op's own peak minus what it allocates that outlives it as a
    # graph tensor, plus the one-op blocks made before it started
    survives = {}
    for b in blocks:
        if b.born % 2 == 1 and b.died != b.born and b.tid != -1:
            k = (b.born - 1) // 2
            survives[k] = survives.get(k, 0) + b.size
    for k in sorted(set(op_top) | set(pre_single)):
        ws = op_top.get(k, 0) - survives.get(k, 0) + pre_single.get(k, 0)
        if ws > 0:
            ops[k]["workspace_bytes"] = ws
            stats["workspace_ops"] += 1
            stats["workspace_bytes"] = max(stats["workspace_bytes"], ws)

    for b, k, end in hidden:
        tid = len(tensors)
        op = ops[k]
        tensors.append({"id": tid, "name": f"{name_prefix}{k}.{op['type']}.hidden{tid}",
                        "bytes": b.size, "kind": PHASE_KIND[op["phase"]], "shape": [b.size],
                        "dtype": "u8"})
        rec.alloc_op[tid] = k
        op["outputs"].append(tid)
        held_until[tid] = end
        b.tid = tid
        stats["hidden_tensors"] += 1
        stats["hidden_bytes"] += b.size

    # held: a storage lives until PyTorch freed it, not only until its last use
    last = {}
    for k, op in enumerate(ops):
        for x in op["inputs"]:
            last[x] = k
        for x in op["outputs"]:
            last[x] = k
    for t in tensors:
        tid = t["id"]
        if t["kind"] in PERSISTENT or t["kind"] == "output" or tid not in last:
            continue
        h = held_until.get(tid)
        if h is None or h <= last[tid]:
            continue
        while h > last[tid] and len(ops[h]["inputs"]) >= MAX_INPUTS:
            h -= 1  # a full op (thousands of gradients held to the end): the one before
        if h > last[tid]:
            if h != held_until[tid]:
                stats["held_early"] += 1
            ops[h]["inputs"].append(tid)
            ops[h].setdefault("held", []).append(tid)
            stats["held_tensors"] += 1
            stats["held_bytes"] += t["bytes"]
    rec.held_until = held_until
    stats["claimed"] = claimed
    return stats


def trace_rows(rec):
    """The DSA trace (docs/exporter.md, "Allocation trace"): every storage of the graph
    with PyTorch's lifetime; time t = op index + 1, persistent ones from 0."""
    n = len(rec.ops)
    rows = []
    for t in rec.tensors:
        tid = t["id"]
        k = rec.alloc_op.get(tid, -1)
        h = rec.held_until.get(tid, n - 1)
        lo = 0 if t["kind"] in PERSISTENT or k < 0 else k + 1
        rows.append((tid, lo, max(h + 2, lo + 1), t["bytes"]))
    return rows


def rows_peak(rows):
    """Max over time of the bytes of the rows alive ([lower, upper))."""
    ev = {}
    for _tid, lo, hi, size in rows:
        ev[lo] = ev.get(lo, 0) + size
        ev[hi] = ev.get(hi, 0) - size
    cur = top = 0
    for t in sorted(ev):
        cur += ev[t]
        top = max(top, cur)
    return top


def in_core_peak(graph):
    """sfc's in-core peak of a graph dict, computed as compiler/src/pass_liveness.c does:
    persistent tensors live over every op, others from the first op that lists them to
    the last (an output to the end), each op's workspace_bytes while it runs; the peak
    is the highest total over the ops."""
    ops = graph["ops"]
    n = len(ops)
    first, last = {}, {}
    for k, op in enumerate(ops):
        for x in op["inputs"] + op["outputs"]:
            first.setdefault(x, k)
            last[x] = k
    diff = [0] * (n + 1)
    for t in graph["tensors"]:
        tid = t["id"]
        if t["kind"] in PERSISTENT:
            a, b = 0, n - 1
        elif tid in first:
            a, b = first[tid], (n - 1 if t["kind"] == "output" else last[tid])
        else:
            continue
        diff[a] += t["bytes"]
        diff[b + 1] -= t["bytes"]
    live = top = 0
    for k in range(n):
        live += diff[k]
        top = max(top, live + ops[k].get("workspace_bytes", 0))
    return top
