"""sfcrt.py — a ctypes binding of the sfc runtime, libsfcrt (issue 14 item 2).

No compiled extension: the structs below mirror runtime/include/sfcrt.h and
sfc/plan_format.h field for field, and every call returns through the runtime's status,
turned into an exception carrying its one-line message.

    import sfcrt
    plan = sfcrt.Plan("model.plan")                  # validates everything once
    with sfcrt.Session(plan, device="host") as s:     # "host", "sim" or "cuda"
        s.bind("fc.weight", address, nbytes)          # every external tensor, once
        for it in range(3):
            for step in s.iteration():                # begin, next/done ..., end
                # launch step.type on step.inputs / step.outputs (integer addresses);
                # step.boxes[j] is operand j's tile (None when untiled), step.held[j]
                # what its memory holds (None: the whole tensor), step.accumulate[i]
                # how to store output i (WRITE, ACCUMULATE, ACCUMULATE_FIRST)
                pass
        print(s.stats().steps)

The library is found through $SFCRT_LIBRARY, then build/runtime/libsfcrt.so next to this
checkout, then the system's library path. Errors: sfcrt.Error (status name, status code,
message); a step not marked done before the next is the runtime's SFC_ERR_STATE, raised
the same way.
"""
import ctypes
import ctypes.util
import os
import struct

BOX_DIMS = 4
NONE = 0xFFFFFFFF
WRITE, ACCUMULATE, ACCUMULATE_FIRST = 0, 1, 2
STEP_TIMED, STEP_RECOMPUTE = 0x1, 0x2

STATUS = ["OK", "INVALID_ARGUMENT", "BAD_INPUT", "VERSION", "OUT_OF_MEMORY", "IO",
          "DOES_NOT_FIT", "VERIFY", "STATE", "DEVICE", "UNAVAILABLE", "INTEGRITY", "LIMIT",
          "INTERNAL"]


class Error(Exception):
    """A runtime call failed: .status (e.g. "STATE"), .code, .message (the runtime's)."""

    def __init__(self, code, message):
        self.code = code
        self.status = STATUS[code] if 0 <= code < len(STATUS) else str(code)
        self.message = message
        super().__init__(f"{message} (SFC_ERR_{self.status})")


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class Box(ctypes.Structure):
    """sfc_plan_box_t: [lo, hi) per axis (N, C, H, W), zeros to supply around it."""
    _fields_ = [("tensor", ctypes.c_uint32), ("ndim", ctypes.c_uint32),
                ("lo", ctypes.c_int64 * BOX_DIMS), ("hi", ctypes.c_int64 * BOX_DIMS),
                ("pad_lo", ctypes.c_uint32 * BOX_DIMS), ("pad_hi", ctypes.c_uint32 * BOX_DIMS)]

    def ranges(self):
        return [(self.lo[a], self.hi[a]) for a in range(self.ndim)]

    def __repr__(self):
        return f"Box(tensor={self.tensor}, {self.ranges()})"


class _Host(ctypes.Structure):
    _fields_ = [("integrity", ctypes.c_int), ("delay_us", ctypes.c_uint32 * 3),
                ("lag", ctypes.c_int)]


class _Sim(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in ("h2d_bytes_per_s", "d2h_bytes_per_s",
                                               "duplex_factor", "copy_latency_s",
                                               "flops_per_s", "default_op_us", "page_map_s")
                ] + [("paged", ctypes.c_int)]


class _Cuda(ctypes.Structure):
    _fields_ = [("device_ordinal", ctypes.c_int), ("mode", ctypes.c_int),
                ("va_chunk_bytes", ctypes.c_uint64), ("context", ctypes.c_void_p),
                ("stream", ctypes.c_void_p), ("has_stream", ctypes.c_int),
                ("blocking_sync", ctypes.c_int)]


class _Options(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char_p), ("alloc", ctypes.c_void_p), ("host", _Host),
                ("sim", _Sim), ("cuda", _Cuda)]


class _Step(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint32), ("op", ctypes.c_uint32), ("op_id", ctypes.c_int64),
                ("name", ctypes.c_char_p), ("type", ctypes.c_char_p),
                ("segment", ctypes.c_uint32), ("tile", ctypes.c_uint32),
                ("boxes", ctypes.POINTER(Box)), ("inputs", ctypes.POINTER(ctypes.c_void_p)),
                ("outputs", ctypes.POINTER(ctypes.c_void_p)),
                ("temps", ctypes.POINTER(ctypes.c_void_p)), ("input_count", ctypes.c_uint32),
                ("output_count", ctypes.c_uint32), ("temp_count", ctypes.c_uint32),
                ("stream", ctypes.c_void_p), ("flags", ctypes.c_uint32),
                ("held", ctypes.POINTER(ctypes.POINTER(Box))),
                ("accumulate", ctypes.POINTER(ctypes.c_uint8))]


class Stats(ctypes.Structure):
    """sfcrt_stats_t (docs/runtime.md): counters, and the sim device's predictions."""
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "iterations", "steps", "swaps_in", "swaps_out", "bytes_swapped_in",
        "bytes_swapped_out", "arena_bytes", "host_arena_bytes", "peak_device_bytes",
        "stalls")] + [(n, ctypes.c_double) for n in (
            "stall_us", "predicted_iteration_us", "compute_us", "h2d_busy_us",
            "d2h_busy_us")] + [("step_stall_us", ctypes.POINTER(ctypes.c_double)),
                               ("step_count", ctypes.c_uint32)] + [
        (n, ctypes.POINTER(ctypes.c_double)) for n in (
            "step_start_us", "step_us", "copy_start_us", "copy_end_us")] + [
        ("swap_count", ctypes.c_uint32)] + [
        (n, ctypes.c_uint64) for n in ("chunks_mapped", "chunks_unmapped", "unmap_waits")]


def _find_library():
    env = os.environ.get("SFCRT_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "..", "build", "runtime", "libsfcrt.so")
    if os.path.exists(built):
        return built
    found = ctypes.util.find_library("sfcrt")
    if not found:
        raise OSError("libsfcrt not found: build it (cmake --build build) or set SFCRT_LIBRARY")
    return found


_lib = None


def library():
    """The loaded libsfcrt (loaded on first use), with argument and result types set."""
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(_find_library())
    E = ctypes.POINTER(_Error)
    P, S = ctypes.c_void_p, ctypes.c_void_p
    sig = {
        "sfcrt_plan_load_file": (ctypes.c_int, [ctypes.c_char_p, P, ctypes.POINTER(P), E]),
        "sfcrt_plan_load_buffer": (ctypes.c_int,
                                   [ctypes.c_char_p, ctypes.c_size_t, P, ctypes.POINTER(P), E]),
        "sfcrt_plan_destroy": (None, [P]),
        "sfcrt_options_init": (None, [ctypes.POINTER(_Options)]),
        "sfcrt_session_create": (ctypes.c_int, [P, ctypes.POINTER(_Options), ctypes.POINTER(S),
                                                E]),
        "sfcrt_session_destroy": (None, [S]),
        "sfcrt_session_bind": (ctypes.c_int, [S, ctypes.c_uint32, P, ctypes.c_uint64, E]),
        "sfcrt_session_home": (ctypes.c_int, [S, ctypes.c_uint32, ctypes.POINTER(P),
                                              ctypes.POINTER(ctypes.c_int), E]),
        "sfcrt_session_find_tensor": (ctypes.c_uint32, [S, ctypes.c_char_p]),
        "sfcrt_iteration_begin": (ctypes.c_int, [S, E]),
        "sfcrt_step_next": (ctypes.c_int, [S, ctypes.POINTER(ctypes.POINTER(_Step)), E]),
        "sfcrt_step_done": (ctypes.c_int, [S, E]),
        "sfcrt_iteration_end": (ctypes.c_int, [S, E]),
        "sfcrt_session_run": (ctypes.c_int, [S, ctypes.c_uint64, E]),
        "sfcrt_session_stats": (None, [S, ctypes.POINTER(Stats)]),
        "sfcrt_session_device": (ctypes.c_char_p, [S]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def _check(status, err):
    if status != 0:
        raise Error(status, err.message.decode("utf-8", "replace"))


class Plan:
    """A validated plan (sfcrt_plan_load_file / _buffer). path, or data= bytes."""

    def __init__(self, path=None, data=None):
        lib, err, self._p = library(), _Error(), ctypes.c_void_p()
        if data is not None:
            self._data = bytes(data)
            _check(lib.sfcrt_plan_load_buffer(self._data, len(self._data), None,
                                              ctypes.byref(self._p), ctypes.byref(err)), err)
        else:
            _check(lib.sfcrt_plan_load_file(os.fsencode(path), None, ctypes.byref(self._p),
                                            ctypes.byref(err)), err)

        self._path = path
        self._tables = None

    def tables(self):
        """The plan's tensors and ops as Python records (PlanTables), read from the same
        bytes the runtime validated: which graph tensor each operand of a step is."""
        if self._tables is None:
            data = getattr(self, "_data", None)
            if data is None:
                with open(self._path, "rb") as f:
                    data = f.read()
            self._tables = PlanTables(data)
        return self._tables

    def close(self):
        if self._p:
            library().sfcrt_plan_destroy(self._p)
            self._p = ctypes.c_void_p()

    def __del__(self):
        self.close()


class PlanTensor:
    """A TENSORS record: graph_id, bytes, name, kind (KINDS), dtype index, shape, flags."""
    __slots__ = ("index", "graph_id", "bytes", "name", "kind", "shape", "flags")

    def __repr__(self):
        return f"PlanTensor({self.index}: {self.name!r} graph {self.graph_id}, {self.bytes} B)"


class PlanOp:
    """An OPS record: graph_id, name, type and its operands as tensor indices."""
    __slots__ = ("index", "graph_id", "name", "type", "inputs", "outputs", "temps")


KINDS = ["input", "param", "optimizer", "activation", "grad", "workspace", "output"]
TENSOR_PERSISTENT, TENSOR_EXTERNAL, TENSOR_SYNTHETIC, TENSOR_UNUSED = 0x1, 0x2, 0x4, 0x8


class PlanTables:
    """The parts of a plan file (docs/plan-format.md) a framework maps its own tensors
    with: META's graph counts, TENSORS and OPS with their operands. Parse only bytes the
    runtime has validated (Plan.tables())."""

    def __init__(self, data):
        def sect(kind):
            for k, eb, off, nbytes, count in secs:
                if k == kind:
                    return eb, off, count
            raise Error(2, f"plan: no section {kind}")

        table, count, entry = struct.unpack_from("<QII", data, 40)
        secs = []
        for i in range(count):
            k, eb, off, nbytes, n = struct.unpack_from("<IIQQI", data, table + i * entry)
            secs.append((k, eb, off, nbytes, n))
        _, soff, scount = sect(1)
        blob = data[soff:soff + scount]

        def string(ref):
            end = blob.index(b"\0", ref)
            return blob[ref:end].decode("utf-8", "replace")

        _, moff, _ = sect(2)
        self.graph_op_count, self.graph_tensor_count = struct.unpack_from("<II", data, moff + 12)
        eb, off, n = sect(3)
        self.tensors = []
        for i in range(n):
            r = off + i * eb
            gid, nbytes, name, kind, _dt, ndim, _ax, flags = struct.unpack_from("<qQIBBBbI", data, r)
            t = PlanTensor()
            t.index, t.graph_id, t.bytes, t.name = i, gid, nbytes, string(name)
            t.kind = KINDS[kind] if kind < len(KINDS) else str(kind)
            t.shape = list(struct.unpack_from(f"<{ndim}q", data, r + 32))
            t.flags = flags
            self.tensors.append(t)
        _, ooff, ocount = sect(5)
        operands = struct.unpack_from(f"<{ocount}I", data, ooff)
        eb, off, n = sect(4)
        self.ops = []
        for i in range(n):
            gid, name, typ, _ph, _f, begin, ni, no, nt = struct.unpack_from("<qIIB3xIIHHH", data,
                                                                           off + i * eb)
            o = PlanOp()
            o.index, o.graph_id, o.name, o.type = i, gid, string(name), string(typ)
            o.inputs = list(operands[begin:begin + ni])
            o.outputs = list(operands[begin + ni:begin + ni + no])
            o.temps = list(operands[begin + ni + no:begin + ni + no + nt])
            self.ops.append(o)


class Step:
    """One step as the runtime hands it out; valid until the step is done."""

    def __init__(self, raw):
        s = raw.contents
        self.index, self.op, self.op_id = s.index, s.op, s.op_id
        self.name = s.name.decode("utf-8", "replace") if s.name else ""
        self.type = s.type.decode("utf-8", "replace") if s.type else ""
        self.segment = None if s.segment == NONE else s.segment
        self.tile = None if s.tile == NONE else s.tile
        self.flags = s.flags
        self.stream = s.stream  # the CUstream to launch on (cuda; None on host and sim)
        self.recompute = bool(s.flags & STEP_RECOMPUTE)
        n = s.input_count + s.output_count + s.temp_count
        self.inputs = [s.inputs[i] for i in range(s.input_count)]
        self.outputs = [s.outputs[i] for i in range(s.output_count)]
        self.temps = [s.temps[i] for i in range(s.temp_count)]
        self.boxes = [s.boxes[j] for j in range(n)] if s.boxes else [None] * n
        self.held = [s.held[j].contents if s.held and s.held[j] else None for j in range(n)]
        self.accumulate = ([s.accumulate[i] for i in range(s.output_count)] if s.accumulate
                           else [WRITE] * s.output_count)

    def __repr__(self):
        tile = f" tile {self.tile} of segment {self.segment}" if self.tile is not None else ""
        return f"Step({self.index}: {self.name} [{self.type}]{tile})"


class Session:
    """A replay session of a Plan on "host", "sim" or "cuda" (sfcrt_session_create).
    Keyword options map onto sfcrt_options_t: integrity=1 (host), cuda_mode="va" or "paged",
    stream=<CUstream int> (cuda, sets has_stream), device_ordinal=N."""

    def __init__(self, plan, device="host", integrity=False, cuda_mode="arena", stream=None,
                 device_ordinal=0):
        lib, err = library(), _Error()
        self._plan = plan  # the plan must outlive the session
        self._opt = _Options()
        lib.sfcrt_options_init(ctypes.byref(self._opt))
        self._device = device.encode()
        self._opt.device = self._device
        self._opt.host.integrity = 1 if integrity else 0
        modes = {"arena": 0, "va": 1, "paged": 2}  # sfcrt_cuda_mode_t
        if cuda_mode not in modes:
            raise ValueError(f"cuda_mode {cuda_mode!r}: arena, va or paged")
        self._opt.cuda.mode = modes[cuda_mode]
        self._opt.cuda.device_ordinal = device_ordinal
        if stream is not None:
            self._opt.cuda.stream = stream
            self._opt.cuda.has_stream = 1
        self._s = ctypes.c_void_p()
        _check(lib.sfcrt_session_create(plan._p, ctypes.byref(self._opt), ctypes.byref(self._s),
                                        ctypes.byref(err)), err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._s:
            library().sfcrt_session_destroy(self._s)
            self._s = ctypes.c_void_p()

    def __del__(self):
        self.close()

    @property
    def device(self):
        return library().sfcrt_session_device(self._s).decode()

    def find_tensor(self, name):
        """The plan's index of tensor `name`, or None."""
        t = library().sfcrt_session_find_tensor(self._s, name.encode())
        return None if t == NONE else t

    def bind(self, tensor, address, nbytes):
        """Binds framework memory (an integer address) to an external tensor (index or
        name)."""
        if isinstance(tensor, str):
            name, tensor = tensor, self.find_tensor(tensor)
            if tensor is None:
                raise Error(1, f"bind: the plan has no tensor called '{name}'")
        err = _Error()
        _check(library().sfcrt_session_bind(self._s, tensor, ctypes.c_void_p(address), nbytes,
                                            ctypes.byref(err)), err)

    def home(self, tensor):
        """Where a persistent tensor (index or name) keeps its value between iterations:
        (address, "device" or "host"); the address is None on sim. Write its initial
        value there before the first iteration, read the trained value after one."""
        if isinstance(tensor, str):
            name, tensor = tensor, self.find_tensor(tensor)
            if tensor is None:
                raise Error(1, f"home: the plan has no tensor called '{name}'")
        err, ptr, where = _Error(), ctypes.c_void_p(), ctypes.c_int()
        _check(library().sfcrt_session_home(self._s, tensor, ctypes.byref(ptr),
                                            ctypes.byref(where), ctypes.byref(err)), err)
        return ptr.value, ("host" if where.value == 1 else "device")

    def begin(self):
        err = _Error()
        _check(library().sfcrt_iteration_begin(self._s, ctypes.byref(err)), err)

    def next(self):
        """The next Step, or None after the last one of the iteration."""
        err, raw = _Error(), ctypes.POINTER(_Step)()
        _check(library().sfcrt_step_next(self._s, ctypes.byref(raw), ctypes.byref(err)), err)
        return Step(raw) if raw else None

    def done(self):
        err = _Error()
        _check(library().sfcrt_step_done(self._s, ctypes.byref(err)), err)

    def end(self):
        err = _Error()
        _check(library().sfcrt_iteration_end(self._s, ctypes.byref(err)), err)

    def iteration(self):
        """Yields every step of one iteration (begin .. end); each is marked done when the
        loop asks for the next. An exception in the loop body propagates."""
        self.begin()
        while True:
            step = self.next()
            if step is None:
                break
            yield step
            self.done()
        self.end()

    def run(self, iterations=1):
        """Runs iterations with nothing launched (the runtime's own loop, as `sfc run`)."""
        err = _Error()
        _check(library().sfcrt_session_run(self._s, iterations, ctypes.byref(err)), err)

    def stats(self):
        st = Stats()
        library().sfcrt_session_stats(self._s, ctypes.byref(st))
        return st
