"""progress_check.py — sfc compile's progress on stderr (--progress, and on a terminal).

Usage: progress_check.py SFC PROJECT_SOURCE_DIR WORKDIR

small_cnn at 1.8 MB (in core 2.4 MB: window: auto runs its candidates, the late-homes
ones too, and the rounds pack) is compiled
  - with --progress: every stderr line is "sfc compile: ..."; the tuner's candidates come
    in order, each "candidate C (C+1 of N)"; the packing rounds and the time bound follow;
  - without it, stderr a pipe: nothing on stderr (scripts and tests see no change);
  - with stderr on a pseudo-terminal: the status line is rewritten in place ("\\r" and
    erase-line) and erased before the compile ends; nothing else is written there;
  - with -q and with -v on a terminal: no status line;
and every plan is byte-identical (progress changes nothing but stderr). Each plan goes
through sfc verify.
"""
import os
import pty
import re
import subprocess
import sys

from cli_check import check, runner
import cli_check

sfc_bin, root, work = sys.argv[1], sys.argv[2], sys.argv[3]
sfc = runner(sfc_bin)
graph = os.path.join(root, "tests", "data", "graphs", "small_cnn.json")
ERASE = "\r\x1b[K"


def plan(name):
    return os.path.join(work, name)


def on_terminal(*args):
    """Runs sfc with stderr on a pseudo-terminal (stdout a pipe): (exit, stdout, stderr)."""
    master, slave = pty.openpty()  # OSError where the machine has no pseudo-terminals
    p = subprocess.Popen([sfc_bin, *args], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other end closed and drained
            break
        if not chunk:
            break
        err += chunk
    out = p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out.decode(), err.decode()


args = [graph, "--budget", "1800000"]

# --progress: a log of lines
p = sfc("compile", *args, "-o", plan("line.plan"), "--progress")
lines = p.stderr.splitlines()
check(lines and all(l.startswith("sfc compile: ") for l in lines),
      f"--progress: every stderr line starts 'sfc compile: ': {lines[:3]}")
cands = [l for l in lines if "window: auto: candidate" in l]
check(len(cands) >= 17, f"--progress: the tuner's candidates ({len(cands)} lines)")
for i, l in enumerate(cands):
    m = re.search(r"candidate (\d+) \((\d+) of (\d+)\)", l)
    check(m and int(m.group(1)) == i and int(m.group(2)) == i + 1 and
          int(m.group(3)) in (21, 34), f"--progress: candidate line {i}: {l!r}")
packs = [i for i, l in enumerate(lines) if re.search(r"packing: window candidate \d+ "
                                                    r"\(final 1\), round 1$", l)]
check(packs and packs[0] > lines.index(cands[-1]),
      "--progress: the first final's first packing round after the candidates")
check(any(l.endswith("time bound") for l in lines), "--progress: the time bound")

# a pipe, no --progress: stderr untouched
p = sfc("compile", *args, "-o", plan("quiet.plan"))
check(p.stderr == "", f"no --progress, stderr a pipe: nothing on stderr: {p.stderr[:200]!r}")

# a terminal: one line, rewritten in place, erased at the end
try:
    for fd in os.openpty():
        os.close(fd)
    have_pty = True
except OSError as e:
    have_pty = False
    print(f"no pseudo-terminal here ({e}): the terminal checks are skipped")
    for n in ("tty.plan", "q.plan", "v.plan"):
        sfc("compile", *args, "-o", plan(n))
if have_pty:
    rc, out, err = on_terminal("compile", *args, "-o", plan("tty.plan"))
    check(rc == 0, f"on a terminal: exit {rc}")
    check("sfc compile: small-cnn" in out, "on a terminal: the summary on stdout")
    check(err.startswith(ERASE + "sfc compile: window: auto: candidate 0 (1 of 21)"),
          f"on a terminal: the status line starts in place: {err[:60]!r}")
    check(err.endswith(ERASE), f"on a terminal: the status line erased at the end: {err[-40:]!r}")
    check("\n" not in err, f"on a terminal: no line breaks: {err[:200]!r}")
    check(err.count(ERASE) == len(lines) + 1,
          f"on a terminal: one rewrite per --progress line and the erase "
          f"({err.count(ERASE)} against {len(lines) + 1})")

    # -q and -v on a terminal: no status line
    rc, out, err = on_terminal("compile", *args, "-o", plan("q.plan"), "-q")
    check(rc == 0 and err == "", f"-q on a terminal: nothing on stderr: {err[:80]!r}")
    rc, out, err = on_terminal("compile", *args, "-o", plan("v.plan"), "-v")
    check(rc == 0 and "\x1b[K" not in err and "sfc: pass" in err,
          f"-v on a terminal: the pass lines, no status line: {err[:80]!r}")

# the same plan every way, and a verified one
data = [open(plan(n), "rb").read() for n in ("line.plan", "quiet.plan", "tty.plan", "q.plan",
                                             "v.plan")]
check(all(d == data[0] for d in data), "the plan does not depend on the progress output")
for n in ("line.plan", "tty.plan"):
    v = sfc("verify", plan(n))
    check("ok" in v.stdout, f"sfc verify {n}: {v.stdout.strip()}")

if cli_check.failures:
    sys.exit(f"{cli_check.failures} check(s) failed")
print("progress: --progress lines, a terminal's status line, the plans unchanged: ok")
