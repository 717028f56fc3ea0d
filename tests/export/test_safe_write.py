"""test_safe_write.py — how sfc-export writes -o and --trace (tools/sfcexport/safe_write.py):
the rules of sfc's own writers (docs/cli.md#output-files). Needs no PyTorch, except the
last group, which goes through exporter.write_graph / write_trace and skips without it.

Nothing depends on timing: the FIFO case blocks until the reader thread opens the FIFO,
and the join timeout only bounds a broken writer. As root, the device cases run in a
child that first drops to nobody, so a broken writer could not replace /dev/null.
"""
import errno
import gzip
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import unittest

ROOT = os.environ.get("SFC_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from sfcexport import safe_write  # noqa: E402

EXPORT = os.path.join(ROOT, "tools", "sfc-export")
PREDICTABLE = ["{}.tmp", ".{}.tmp", "{}~", "{}.new", ".{}.swp", "{}.part", ".#{}", ".{}"]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def put(path, data):
    with open(path, "wb") as f:
        f.write(data)


class Scratch(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="sfc-safe-write-")
        self.victim = self.p("victim")
        put(self.victim, b"precious\n")

    def tearDown(self):
        shutil.rmtree(self.d)

    def p(self, *names):
        return os.path.join(self.d, *names)

    def entries(self, sub=""):
        return sorted(os.listdir(self.p(sub) if sub else self.d))

    def assertVictimUntouched(self):
        self.assertEqual(read(self.victim), b"precious\n")


class Writer(Scratch):
    def test_new_and_replace_mode_follows_umask(self):
        out = self.p("g.json")
        old = os.umask(0o027)
        try:
            safe_write.write_bytes(out, b"one\n")
            self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o640)
            os.chmod(out, 0o600)
            safe_write.write_bytes(out, b"two\n")
            self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o640)  # like a fresh create
        finally:
            os.umask(old)
        self.assertEqual(read(out), b"two\n")
        self.assertEqual(self.entries(), ["g.json", "victim"])

    def test_predictable_names_are_never_followed(self):
        out = self.p("g.json")
        links = [self.p(n.format("g.json")) for n in PREDICTABLE]
        for link in links:
            os.symlink(self.victim, link)
        for data in (b"new\n", b"again\n"):  # out missing, then out existing
            safe_write.write_bytes(out, data)
            self.assertEqual(read(out), data)
            self.assertVictimUntouched()
            for link in links:
                self.assertEqual(os.readlink(link), self.victim)
        self.assertEqual(len(self.entries()), len(links) + 2)

    def _seeded(self, seed):
        state = [seed]

        def token():
            state[0] += 1
            return f"{state[0]:016x}"
        return token

    def test_links_at_the_names_it_will_try(self):
        out, ghost = self.p("t.csv"), self.p("ghost")
        saved = safe_write._token
        try:
            safe_write._token = self._seeded(100)
            names = [safe_write.temp_name(out) for _ in range(5)]
            for i, n in enumerate(names):  # the last one dangles: O_CREAT would create ghost
                os.symlink(self.victim if i < 4 else ghost, n)
            safe_write._token = self._seeded(100)
            safe_write.write_bytes(out, b"trace\n")
            self.assertEqual(read(out), b"trace\n")
            self.assertVictimUntouched()
            self.assertFalse(os.path.lexists(ghost))
            for n in names:
                os.unlink(n)

            out2 = self.p("t2.csv")
            safe_write._token = self._seeded(5000)
            names = [safe_write.temp_name(out2) for _ in range(safe_write.TRIES)]
            for n in names:
                os.symlink(self.victim, n)
            safe_write._token = self._seeded(5000)
            with self.assertRaises(OSError) as cm:
                safe_write.write_bytes(out2, b"x")
            self.assertEqual(safe_write.describe(cm.exception),
                             f"{out2}: cannot create: {os.strerror(errno.EEXIST)}")
            self.assertFalse(os.path.lexists(out2))
            self.assertVictimUntouched()
            self.assertEqual(len(self.entries()), 2 + safe_write.TRIES)
        finally:
            safe_write._token = saved

    def test_failed_write_keeps_the_old_file_and_no_temporary(self):
        out = self.p("g.json")
        put(out, b"old\n")
        old = resource.getrlimit(resource.RLIMIT_FSIZE)
        prev = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8, old[1]))
        try:
            with self.assertRaises(OSError) as cm:
                safe_write.write_bytes(out, b"much more than eight bytes\n")
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, old)
            signal.signal(signal.SIGXFSZ, prev)
        self.assertEqual(safe_write.describe(cm.exception),
                         f"{out}: write failed: {os.strerror(errno.EFBIG)}")
        self.assertEqual(read(out), b"old\n")
        self.assertEqual(self.entries(), ["g.json", "victim"])

    def test_devices_are_written_in_place(self):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                if os.geteuid() == 0:
                    os.setgroups([])
                    os.setgid(65534)
                    os.setuid(65534)
                safe_write.write_bytes("/dev/null", b"x" * 100)
                try:
                    safe_write.write_bytes("/dev/full", b"x" * 100)
                except OSError as e:
                    full = safe_write.describe(e)
                else:
                    full = "no error"
                ok = (full == f"/dev/full: write failed: {os.strerror(errno.ENOSPC)}"
                      and stat.S_ISCHR(os.stat("/dev/null").st_mode)
                      and stat.S_ISCHR(os.stat("/dev/full").st_mode))
                if not ok:
                    print("device case:", full, file=sys.stderr)
                code = 0 if ok else 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)

    def test_fifo_is_written_in_place(self):
        fifo = self.p("pipe")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(read(fifo)), daemon=True)
        reader.start()
        try:
            safe_write.write_bytes(fifo, b"through the pipe\n")
        finally:
            if reader.is_alive() and not got:  # a failed writer: let the reader see EOF
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass
            reader.join(120)
        self.assertEqual(got, [b"through the pipe\n"])
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_links_folders_and_missing_folders(self):
        os.mkdir(self.p("real"))
        put(self.p("real", "target.json"), b"old\n")
        os.symlink("real/target.json", self.p("link.json"))
        safe_write.write_bytes(self.p("link.json"), b"new\n")
        self.assertEqual(os.readlink(self.p("link.json")), "real/target.json")
        self.assertEqual(read(self.p("real", "target.json")), b"new\n")
        self.assertEqual(self.entries("real"), ["target.json"])

        os.symlink(self.p("nowhere"), self.p("dangle"))
        cases = {self.p("dangle"): "is a dangling symbolic link; not following it",
                 self.p("real"): f"cannot create: {os.strerror(errno.EISDIR)}",
                 self.p("no-dir", "x.csv"): f"cannot create: {os.strerror(errno.ENOENT)}"}
        for path, why in cases.items():
            with self.assertRaises(OSError) as cm:
                safe_write.write_bytes(path, b"x")
            self.assertEqual(safe_write.describe(cm.exception), f"{path}: {why}")
        self.assertFalse(os.path.lexists(self.p("nowhere")))


class Checks(Scratch):
    def test_output_that_is_an_input(self):
        model = self.p("model.py")
        put(model, b"# a model\n")
        os.link(model, self.p("hard.py"))
        os.symlink("model.py", self.p("sym.py"))
        for out in (model, self.p("hard.py"), self.p("sym.py")):
            with self.assertRaises(safe_write.SameFileError) as cm:
                safe_write.check(out, [self.victim, model])
            self.assertEqual(str(cm.exception),
                             f"{out}: is the same file as the input {model}; not overwriting it")
        safe_write.check(self.p("new.json"), [model])
        safe_write.check("/dev/null", ["/dev/null"])  # devices are nobody's copy
        self.assertEqual(read(model), b"# a model\n")
        self.assertFalse(os.path.exists(self.p("new.json")))  # a check creates nothing

    def test_check_refuses_unwritable_places(self):
        with self.assertRaises(OSError) as cm:
            safe_write.check(self.p("missing_dir", "out.json"))
        self.assertEqual(safe_write.describe(cm.exception),
                         f"{self.p('missing_dir', 'out.json')}: cannot create: "
                         f"{os.strerror(errno.ENOENT)}")
        with self.assertRaises(OSError):
            safe_write.check(self.d)

    def test_two_outputs_one_file(self):
        a, dot = self.p("g.json"), os.path.join(self.d, ".", "g.json")
        with self.assertRaises(safe_write.SameFileError):
            safe_write.check_distinct(a, dot)  # not there yet: same name, same folder
        safe_write.check_distinct(a, self.p("t.csv"))
        safe_write.check_distinct(a, None)
        put(a, b"{}")
        os.link(a, self.p("hard.csv"))
        os.symlink("g.json", self.p("sym.csv"))
        for other in (self.p("hard.csv"), self.p("sym.csv")):
            with self.assertRaises(safe_write.SameFileError) as cm:
                safe_write.check_distinct(a, other)
            self.assertEqual(str(cm.exception), f"{other}: is the same file as the output {a}; "
                             "give each output its own file")
        safe_write.check_distinct("/dev/null", "/dev/null")

    def test_sfc_export_refuses_before_the_export(self):
        """-o and --trace naming one file: one line, exit 2, nothing written, no torch."""
        put(self.p("g.json"), b"keep\n")
        os.symlink("g.json", self.p("g-link.csv"))
        cases = [
            (["-o", self.p("g.json"), "--trace", self.p("g.json")],
             f"{self.p('g.json')}: is the same file as the output {self.p('g.json')}; "
             "give each output its own file"),
            (["-o", self.p("g.json"), "--trace", self.p("g-link.csv")],
             f"{self.p('g-link.csv')}: is the same file as the output {self.p('g.json')}; "
             "give each output its own file"),
            (["-o", self.p("new.json"), "--trace", self.p("new.json")],
             f"{self.p('new.json')}: is the same file as the output {self.p('new.json')}; "
             "give each output its own file"),
            (["-o", self.p("no-dir", "g.json")],
             f"{self.p('no-dir', 'g.json')}: cannot create: {os.strerror(errno.ENOENT)}"),
            (["-o", self.p("x.json"), "--trace", self.p("no-dir", "t.csv")],
             f"{self.p('no-dir', 't.csv')}: cannot create: {os.strerror(errno.ENOENT)}"),
        ]
        env = dict(os.environ, SFC_EXPORT_REEXEC="1")
        for args, want in cases:
            p = subprocess.run([sys.executable, EXPORT, "no-such-model", *args],
                               capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr, f"sfc-export: error: {want}\n")
        self.assertEqual(read(self.p("g.json")), b"keep\n")
        self.assertEqual(self.entries(), ["g-link.csv", "g.json", "victim"])


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


@unittest.skipUnless(have_torch(), "PyTorch is not installed")
class ExporterWriters(Scratch):
    def test_write_graph_and_trace_go_through_safe_write(self):
        from sfcexport.exporter import write_graph, write_trace
        graph = {"format": "sfc-graph", "version": 1, "name": "w", "tensors": [], "ops": []}
        for name in ("g.json", "g.json.gz", "t.csv"):
            for n in PREDICTABLE:
                os.symlink(self.victim, self.p(n.format(name)))
        write_graph(graph, self.p("g.json"))
        write_graph(graph, self.p("g.json.gz"))
        write_trace([(0, 0, 1, 64)], self.p("t.csv"))
        self.assertVictimUntouched()
        self.assertEqual(gzip.decompress(read(self.p("g.json.gz"))), read(self.p("g.json")))
        self.assertEqual(read(self.p("t.csv")), b"id,lower,upper,size\nt0,0,1,64\n")
        self.assertEqual(len(self.entries()), 1 + 3 + 3 * len(PREDICTABLE))
        os.symlink(self.p("nowhere"), self.p("dangle.csv"))
        with self.assertRaises(OSError) as cm:
            write_trace([], self.p("dangle.csv"))
        self.assertEqual(cm.exception.filename, self.p("dangle.csv"))
        self.assertFalse(os.path.lexists(self.p("nowhere")))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=1)
