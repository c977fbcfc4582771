"""Everything roofcalc writes: the JSON schema version, and files written atomically.

One place for both: every JSON object carries ``version: SCHEMA_VERSION``, and every
file (charts, calibrations, reports) is written to a temporary file in the target's
folder and renamed over it, so a failure never leaves a half-written file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .errors import InputError

SCHEMA_VERSION = 1


def check_output_path(path: str | Path) -> Path:
    """Refuse, before any work, an output path that cannot or should not be replaced."""
    p = Path(path)
    name = p.name
    if not name:
        raise InputError(f"{str(path)[:80]}: not a file name")
    if len(os.fsencode(name)) > 255:
        raise InputError(f"{str(path)[:60]}...: file name too long ({len(os.fsencode(name))} bytes; at most 255)")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{path}: folder {parent} is not writable")
    if p.is_symlink():
        raise InputError(f"{path}: is a symbolic link; give the path of a regular file (it would be replaced)")
    if p.is_dir():
        raise InputError(f"{path}: is a folder")
    if p.exists():
        if not p.is_file():
            raise InputError(f"{path}: exists and is not a regular file")
        if not os.access(p, os.W_OK) or p.stat().st_mode & 0o222 == 0:  # root may write anything: ask the mode
            raise InputError(f"{path}: exists and is read-only; not replacing it")
    return p


def write_atomic(path: str | Path, data: str | bytes | Callable[[str], None]) -> None:
    """Write ``data`` (text, bytes, or a function that writes a given temporary path) to ``path``,
    after check_output_path has refused what should not be replaced."""
    replace_file(check_output_path(path), data, label=str(path))


def replace_file(target: Path, data: str | bytes | Callable[[str], None], label: str | None = None) -> None:
    """The atomic write itself: a temporary file in the target's folder, renamed over it; any
    failure leaves nothing behind and is one InputError ('cannot write')."""
    path = label if label is not None else str(target)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        import tempfile  # only when a file is written (start-up)

        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".roofcalc-", suffix=target.suffix)
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror}") from None
    try:
        if callable(data):
            os.close(fd)
            data(tmp)
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write: {e.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["SCHEMA_VERSION", "check_output_path", "replace_file", "write_atomic"]
