"""safe_write.py — how sfc-export writes its files (-o, --trace): the rules of sfc's own
writers (compiler/src/outfile.h, docs/cli.md#output-files), restated in Python. No torch.

    safe_write.check(out, inputs=())        # before the export: not an input, writable
    safe_write.check_distinct(out, trace)   # -o and --trace are two files
    safe_write.write_bytes(out, data)       # after it

By what the path names:
  - nothing, or a regular file: the bytes go to a fresh temporary in the same folder,
    created with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0666 & ~umask under an unpredictable
    name (".NAME.<16 hex>.tmp"; a file or symlink already there makes the create fail and
    another name is tried, so a planted link is never followed), fsync'ed and renamed over
    the path; every failure removes it;
  - an existing file that is not regular (/dev/null, a FIFO): written in place;
  - a symlink to a regular file: the file it points to is replaced, the link stays; a
    dangling link or a folder is refused.
Errors are OSError with filename = the path as given (never the temporary) and strerror
"cannot create: ...", "write failed: ...", ...; same-file refusals are SameFileError.
"""
import errno
import os
import secrets
import stat

TRIES = 100
_token = lambda: secrets.token_hex(8)  # noqa: E731 - tests replace it to plant links


class SameFileError(ValueError):
    """An output names an input, or both outputs name one file."""


def _error(e, what, path):
    return OSError(e, f"{what}: {os.strerror(e)}" if what else os.strerror(e), path)


def _resolve(path):
    """(name to write, in place?) by the rules above."""
    if not path:
        raise OSError(errno.EINVAL, "empty output path", path)
    try:
        ls = os.lstat(path)
    except FileNotFoundError:
        if path.endswith("/"):
            raise _error(errno.EISDIR, "cannot create", path) from None
        return path, False
    except OSError as e:
        raise _error(e.errno, "cannot create", path) from None
    st = ls
    if stat.S_ISLNK(ls.st_mode):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise OSError(errno.ENOENT, "is a dangling symbolic link; not following it",
                          path) from None
        except OSError as e:
            raise _error(e.errno, "cannot open", path) from None
    if stat.S_ISDIR(st.st_mode):
        raise _error(errno.EISDIR, "cannot create", path)
    if not stat.S_ISREG(st.st_mode):
        return path, True
    if stat.S_ISLNK(ls.st_mode):
        return os.path.realpath(path), False
    return path, False


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:1 << 30])
        view = view[n:]


def temp_name(name):
    """The next temporary name a write to `name` (no links) tries."""
    folder, base = os.path.split(name)
    return os.path.join(folder or ".", f".{base[:200]}.{_token()}.tmp")


def write_bytes(path, data):
    """Writes data (bytes) to path by the rules above."""
    name, in_place = _resolve(path)
    if in_place:
        try:
            fd = os.open(name, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as e:
            raise _error(e.errno, "cannot open", path) from None
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EAGAIN, "changed while being opened; not writing", path)
            _write_all(fd, data)
        except OSError as e:
            if e.filename == path:
                raise
            raise _error(e.errno, "write failed", path) from None
        finally:
            os.close(fd)
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(TRIES):
        tmp = temp_name(name)
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
        except OSError as e:
            raise _error(e.errno, "cannot create", path) from None
    else:
        raise _error(errno.EEXIST, "cannot create", path)
    what = "write failed"
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        what = "cannot replace"
        os.rename(tmp, name)
    except BaseException as e:
        try:
            os.unlink(tmp)  # never leave a partial file behind
        except OSError:
            pass
        if isinstance(e, OSError):
            raise _error(e.errno, what, path) from None
        raise


def check(path, inputs=()):
    """Before the work: refuses (SameFileError) a path that is the same regular file as an
    input (by st_dev, st_ino: hard links and symlinks count), then checks that it can be
    written (OSError), creating nothing."""
    try:
        out = os.stat(path)
    except OSError:
        out = None
    if out is not None and stat.S_ISREG(out.st_mode):
        for i in inputs:
            try:
                s = os.stat(i)
            except OSError:
                continue
            if (s.st_dev, s.st_ino) == (out.st_dev, out.st_ino):
                raise SameFileError(f"{path}: is the same file as the input {i}; "
                                    "not overwriting it")
    name, in_place = _resolve(path)
    if in_place:
        if not os.access(name, os.W_OK):
            raise _error(errno.EACCES, "cannot open", path)
        return
    folder = os.path.dirname(name) or "."
    try:
        d = os.stat(folder)
    except OSError as e:
        raise _error(e.errno, "cannot create", path) from None
    if not stat.S_ISDIR(d.st_mode):
        raise _error(errno.ENOTDIR, "cannot create", path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _error(errno.EACCES, "cannot create", path)


def _identity(path):
    try:
        s = os.stat(path)
        return ("file", s.st_dev, s.st_ino, stat.S_ISREG(s.st_mode))
    except FileNotFoundError:
        pass
    except OSError:
        return None
    if os.path.islink(path):
        return None
    folder, base = os.path.split(path)
    try:
        d = os.stat(folder or ".")
    except OSError:
        return None
    return ("new", d.st_dev, d.st_ino, base) if base else None


def check_distinct(a, b):
    """Refuses (SameFileError) two outputs that name one file: the same existing regular
    file, or the same name in the same folder when it does not exist yet."""
    if not a or not b:
        return
    x, y = _identity(a), _identity(b)
    if x is None or x != y or (x[0] == "file" and not x[3]):
        return
    raise SameFileError(f"{b}: is the same file as the output {a}; "
                        "give each output its own file")


def describe(e):
    """One line for an error of this module: 'PATH: why'."""
    if isinstance(e, OSError) and e.filename is not None:
        return f"{e.filename}: {e.strerror}"
    return str(e)
