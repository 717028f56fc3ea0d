"""cli_check.py — what the CLI check scripts (timeline_check.py, trace_check.py) share:
a failure counter and a runner for the sfc binary under test."""
import subprocess
import sys

failures = 0


def check(cond, what):
    """Counts and prints a failed check; the script goes on."""
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}")


def runner(binary):
    """sfc(*args, ok=(0,)): runs the binary, stops the script on an unexpected exit."""
    def sfc(*args, ok=(0,)):
        p = subprocess.run([binary, *args], capture_output=True, text=True)
        if p.returncode not in ok:
            sys.exit(f"sfc {' '.join(args)}: exit {p.returncode}: {p.stderr}")
        return p
    return sfc
