"""What a kernel file may hold, and the checked reading and number parsing every reader shares.

Kernel files come from anywhere (a colleague's log, a downloaded binary, a cache folder), so
nothing in them is trusted: a file is opened only if it is a regular file (a FIFO or a device
named ``k.cubin`` is refused without a read, so it cannot hang or fill memory), and read up to
its format's limit (``st_size`` can lie, so never more than the limit plus one byte); text is
split into at most ``MAX_LINES`` lines before any line is looked at; every number is checked for
length before ``int()`` (which stops at 4,300 digits) and against the largest value the field can
have; and the readers of binary files spend a :class:`Budget` of records and name bytes, so a
crafted file of overlapping headers costs at most a fixed amount of work.

Each refusal is an :class:`InputError` (exit code 2) of one line naming the file and, where
there is one, the line or the place in the file. :class:`LimitError`, a file over one of these
limits, is never swallowed by a reader that skips one damaged part of a file to read the others.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from ..specfile import _kind_of
from ..units import clip

# sizes of the files themselves
MAX_BINARY_BYTES = 512 * 1024**2  # a cubin, fatbin or CUDA program or library (larger ones: run cuobjdump)
MAX_TEXT_BYTES = 64 * 1024**2  # a ptxas log, cuobjdump output or Nsight Compute export
MAX_JSON_BYTES = 1_000_000  # a Triton metadata file (real ones are a few kB)
MAX_LINES = 2_000_000  # lines of one text file
MAX_KERNELS = 10_000  # kernels in one file or folder (each is solved and printed)

# Nsight Compute exports
MAX_NCU_ROWS = 50_000  # profiled launches (ncu replays each one: 50,000 take hours)
MAX_NCU_COLUMNS = 20_000  # metrics (a --set full export has about 2,000)

# ELF files (cubins, fatbins, host binaries)
MAX_EMBEDDED_CUBINS = 10_000  # CUDA ELF headers found inside one fatbin or host binary
MAX_ELF_MAGICS = 100_000  # ELF magic numbers looked at inside one file
MAX_ELF_RECORDS = 1_000_000  # section headers, symbols and .nv.info records read from one file
MAX_NAME_BYTES = 64 * 1024  # one section or symbol name (CUTLASS names run to a few kB)
MAX_NAME_TOTAL_BYTES = 128 * 1024**2  # all the names read from one file

# Triton cache folders
MAX_WALK_DEPTH = 8  # folder levels below the one given (a torch.compile cache uses 4)
MAX_WALK_ENTRIES = 100_000  # directory entries looked at

# numbers
MAX_DIGITS = 20  # digits of one integer (2**64 has 20)
MAX_REGISTERS = 255  # registers per thread: the most any CUDA architecture allows
MAX_BARRIERS = 16  # named barriers per block
MAX_KERNEL_BYTES = 2**32 - 1  # one kernel's shared, local, stack or spill bytes
MAX_THREADS = 1 << 20  # threads per block (every GPU so far allows 1,024)
MAX_ARCH = 999  # the SM version (sm_120 is 120)

HEAD_BYTES = 8192  # read first to tell a text file from a binary one
_LABEL_CHARS = 160


def printable(text: str) -> str:
    """``text`` with each character that is not printable (a line break, an escape) written as a
    Python escape: what a file says can neither split a message into lines nor reach the
    terminal as a control sequence."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(text: object, width: int = 80) -> str:
    """Content of a file quoted in a message: cut to ``width`` characters, made printable."""
    return printable(clip(text, width))


def short(label: str) -> str:
    """A file name as messages print it: printable, and a very long one keeps its start and its end."""
    label = printable(label)
    return label if len(label) <= _LABEL_CHARS else label[:80] + "..." + label[-70:]


class LimitError(InputError):
    """A file over one of the limits above: ends the reading of the whole file."""


class Budget:
    """The records and name bytes the readers may still parse for one file (or one folder)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.records = MAX_ELF_RECORDS
        self.name_bytes = MAX_NAME_TOTAL_BYTES
        self.file_bytes = MAX_BINARY_BYTES  # bytes read from the cubins beside Triton metadata

    def spend_records(self, n: int) -> None:
        self.records -= n
        if self.records < 0:
            raise LimitError(
                f"{short(self.label)}: more than {MAX_ELF_RECORDS:,} ELF section headers, symbols and "
                "attribute records; roofcalc reads no more from one file"
            )

    def spend_name(self, n: int) -> None:
        self.name_bytes -= n
        if self.name_bytes < 0:
            raise LimitError(
                f"{short(self.label)}: its section and symbol names add up to more than "
                f"{MAX_NAME_TOTAL_BYTES // 1024**2} MiB; roofcalc reads no more from one file"
            )

    def spend_file(self, n: int, label: str) -> None:
        self.file_bytes -= n
        if self.file_bytes < 0:
            raise LimitError(
                f"{short(label)}: the cubins read for {short(self.label)} add up to more than "
                f"{MAX_BINARY_BYTES:,} bytes"
            )


# ------------------------------------------------------------------ reading


def file_kind(path: Path | str) -> tuple[str, int]:
    """('dir' | 'file' | a special file's kind, size) of a path, following symlinks; InputError
    for a path that does not exist or cannot be looked at."""
    label = short(str(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{label}: no such file or folder") from None
    except (OSError, ValueError) as e:  # a name too long, a loop of symlinks, a NUL byte
        raise InputError(f"{label}: cannot open: {getattr(e, 'strerror', None) or clip(e, 80)}") from None
    if stat.S_ISDIR(st.st_mode):
        return "dir", 0
    if stat.S_ISREG(st.st_mode):
        return "file", st.st_size
    return _kind_of(st.st_mode), 0


def read_regular(
    path: Path | str, limit: int, what: str, choose: Callable[[bytes], tuple[int, str]] | None = None
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or InputError.

    The path is stat'ed before it is opened and the open descriptor checked again (opened
    non-blocking, so a FIFO swapped in between cannot hang the read); at most ``limit + 1``
    bytes are read whatever st_size says. ``choose``, given the first HEAD_BYTES, can lower
    the limit (and rename the kind of file) once the content shows the format.
    """
    label = short(str(path))
    kind, size = file_kind(path)
    if kind == "dir":
        raise InputError(f"{label}: a folder, not a {what}")
    if kind != "file":
        raise InputError(f"{label}: not a regular file (a {kind})")
    if size > limit:
        raise LimitError(f"{label}: {size:,} bytes is over the {limit:,}-byte limit for a {what}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as e:
        raise InputError(f"{label}: cannot read: {getattr(e, 'strerror', None) or clip(e, 80)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{label}: not a regular file (a {_kind_of(st.st_mode)})")
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            data = b""
            if choose is not None:
                data = f.read(HEAD_BYTES)
                limit, what = choose(data)
                if st.st_size > limit:
                    raise LimitError(f"{label}: {st.st_size:,} bytes is over the {limit:,}-byte limit for a {what}")
            data += f.read(limit + 1 - len(data))
    except OSError as e:
        raise InputError(f"{label}: cannot read: {e.strerror or e}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:  # grew while being read, or st_size said less than there is
        raise LimitError(f"{label}: over the {limit:,}-byte limit for a {what}")
    return data


def split_lines(text: str, label: str) -> list[str]:
    """The lines of a text file (``\\n`` or ``\\r\\n``), refused past MAX_LINES before splitting."""
    n = text.count("\n")
    if n > MAX_LINES:
        raise LimitError(f"{short(label)}: {n:,} lines is over the {MAX_LINES:,}-line limit for a kernel file")
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def check_kernel_count(n: int, label: str) -> None:
    if n > MAX_KERNELS:
        raise LimitError(
            f"{short(label)}: more than {MAX_KERNELS:,} kernels; roofcalc reads at most that many from one "
            "file (split it: one cubin, one architecture, or fewer profiled launches)"
        )


# ------------------------------------------------------------------ numbers


def count(digits: str, where: str, what: str, most: int, least: int = 0) -> int:
    """A run of ASCII digits as an int in least..most; InputError('{where}: {what} ...') otherwise."""
    if not digits.isascii() or not digits.isdigit():
        raise InputError(f"{where}: {what} {clip(digits, 30)!r} is not a whole number")
    if len(digits) > MAX_DIGITS:
        raise InputError(f"{where}: {what} has {len(digits):,} digits; at most {MAX_DIGITS} make sense")
    return checked(int(digits), where, what, most, least)


def checked(value: int, where: str, what: str, most: int, least: int = 0) -> int:
    """``value`` if it lies in least..most, else InputError naming the place and the field."""
    if value > most:
        raise InputError(f"{where}: {what} {value:,} is over {most:,}, more than any kernel can have")
    if value < least:
        raise InputError(f"{where}: {what} {value:,} is below {least:,}")
    return value
