"""Hostile kernel files for `roofcalc kernels FILE`: ptxas logs, cuobjdump output, cubins and
CUDA binaries, Triton cache entries and folders, Nsight Compute CSV exports.

The contract each case checks: a bad input gives exactly one line on stderr, starting 'Error:'
and naming the file, exit code 2 (malformed input), nothing on stdout, and quickly; never a
traceback or an internal error (exit 70), never a hang, never a MemoryError. The classes:
numbers too long or absurd; patterns that could backtrack; files, records and folders over
their limits (sparse files, FIFOs, devices); truncated and corrupt ELF files; ncu exports with
a BOM, huge fields and non-finite or out-of-range figures; wrong JSON types in Triton metadata.

Every file is generated here (tmp_path) from the real files in tests/data/kernels. The limits
are the named constants of roofcalc.kernelfiles.limits; a few cases lower one with monkeypatch
to stay fast, the rest build files past the real limit (sparse files cost nothing).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import random
import re
import shutil
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from roofcalc.cli import cli
from roofcalc.errors import InputError
from roofcalc.kernelfiles import detect, limits, load_kernel_file
from roofcalc.kernelfiles import triton as triton_reader
from roofcalc.kernelfiles.cubin import FATBIN_MAGIC

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "tests" / "data" / "kernels" / "h200"
SAMPLES = ROOT / "tests" / "data" / "kernels" / "samples"
# seconds: a ceiling against a hang or a read that grows with the square of the input, not a timing:
# most refusals take milliseconds, a cubin of 60,000 symbols about 1 s, 2.1 s with the suite and a
# CI run sharing this machine's two cores (twentieth session)
FAST = 4.0
NCU = SAMPLES / "ncu-scaled-units.csv"
ADD_ENTRY = next((H200 / "triton-cache").glob("*/add_kernel.json")).parent


def invoke(*args: str | Path) -> Any:
    t0 = time.perf_counter()
    res = CliRunner().invoke(
        cli,
        ["kernels", *map(str, args)],
        env={"NO_COLOR": "1", "ROOFCALC_DEBUG": "", "ROOFCALC_HW": None, "COLUMNS": "100"},
    )
    res.elapsed = time.perf_counter() - t0
    return res


def refused(res: Any, name: str, *needles: str) -> str:
    """Exit 2, nothing on stdout, one 'Error:' line naming ``name`` and holding every needle, fast."""
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 2, (res.exit_code, res.output[-600:])
    assert "Traceback" not in res.output and "internal error" not in res.output
    assert res.stdout == "", res.stdout[:300]
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:"), res.stderr[-600:]
    line: str = lines[0]
    assert name in line, (name, line)
    for n in needles:
        assert n in line, (n, line)
    assert len(line) < 700, line  # never echoes a 5,000-digit number or a 100 kB line
    assert res.elapsed < FAST, res.elapsed
    return line


def _finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj) and abs(obj) < 1e30
    if isinstance(obj, dict):
        return all(_finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(_finite(v) for v in obj)
    return True


def accepted(res: Any) -> str:
    """Exit 0, fast, and no non-finite or absurd figure: in the JSON rows (--json), or as a word in
    the table. Returns stdout and stderr (the notes)."""
    assert res.exit_code == 0, (res.exit_code, res.output[-600:])
    assert "Traceback" not in res.output
    out: str = res.stdout
    if out.startswith("["):
        rows = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON output"))
        assert _finite(rows), out[-600:]
    else:
        assert not re.search(r"\b(inf|nan)\b|nan%|[0-9]{25}", out, re.I), out[-600:]
    assert res.elapsed < FAST, res.elapsed
    return out + res.stderr


def write(tmp: Path, name: str, data: str | bytes) -> Path:
    p = tmp / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


@pytest.fixture(scope="module")
def cubin_bytes() -> bytes:
    return gzip.decompress((H200 / "kernels.sm_90.cubin.gz").read_bytes())


# ------------------------------------------------------------------ a small ELF writer

EM_CUDA, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 190, 1, 2, 3, 8


def elf(
    sections: list[tuple[str, int, bytes | int, int, int]],
    machine: int = EM_CUDA,
    flags: int = 90 << 8,
    shstrndx: int | None = None,
) -> bytes:
    """A 64-bit little-endian ELF file (CUDA ABI 8, sm_90 by default) with these sections:
    (name, type, data or NOBITS size, link, info). Section 0 is the null section; the names
    table comes last."""
    names = b"\0"
    name_at = []
    for name, *_ in [*sections, (".shstrtab",)]:
        name_at.append(len(names))
        names += name.encode() + b"\0"
    body = bytearray(b"\0" * 64)
    rows = [(0, 0, 0, 0, 0, 0)]  # name, type, offset, size, link, info
    for (_name, typ, data, link, info), at in zip(sections, name_at, strict=False):
        if isinstance(data, int):
            rows.append((at, typ, len(body), data, link, info))
        else:
            rows.append((at, typ, len(body), len(data), link, info))
            body += data
    rows.append((name_at[-1], SHT_STRTAB, len(body), len(names), 0, 0))
    body += names
    shoff = len(body)
    for at, typ, off, size, link, info in rows:
        body += struct.pack("<IIQQQQIIQQ", at, typ, 0, 0, off, size, link, info, 1, 24 if typ == SHT_SYMTAB else 0)
    ident = b"\x7fELF\x02\x01\x01\x41\x08" + bytes(7)
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH",
        2,
        machine,
        1,
        0,
        0,
        shoff,
        flags,
        64,
        0,
        0,
        64,
        len(rows),
        len(rows) - 1 if shstrndx is None else shstrndx,
    )
    body[:64] = header
    return bytes(body)


def sym(name_at: int, info: int = 0x12, other: int = 0x10, shndx: int = 1) -> bytes:
    return struct.pack("<IBBHQQ", name_at, info, other, shndx, 0, 0)


def cubin(
    kernel: str = "k",
    regcount: int = 32,
    info_records: bytes | None = None,
    shared: int | None = 4096,
    symbols: bytes | None = None,
    strtab: bytes | None = None,
) -> bytes:
    """One kernel ``kernel`` with REGCOUNT ``regcount``, a .nv.info.<kernel> of ``info_records``
    and a .nv.shared.<kernel> of ``shared`` bytes; or the symbols and string table given."""
    strtab = strtab if strtab is not None else b"\0" + kernel.encode() + b"\0"
    symbols = symbols if symbols is not None else bytes(24) + sym(1)
    glob = struct.pack("<BBHII", 4, 0x2F, 8, 1, regcount)
    secs: list[tuple[str, int, bytes | int, int, int]] = [
        (".strtab", SHT_STRTAB, strtab, 0, 0),
        (".symtab", SHT_SYMTAB, symbols, 1, 0),
        (".nv.info", SHT_PROGBITS, glob, 0, 0),
        (f".nv.info.{kernel}", SHT_PROGBITS, info_records if info_records is not None else b"", 0, 0),
        (f".text.{kernel}", SHT_PROGBITS, b"\0" * 16, 0, 0),
    ]
    if shared is not None:
        secs.append((f".nv.shared.{kernel}", SHT_NOBITS, shared, 0, 0))
    return elf(secs)


def test_the_elf_writer_makes_a_cubin_roofcalc_reads(tmp_path: Path) -> None:
    res = invoke(write(tmp_path, "k.cubin", cubin()), "--threads", "128", "--json")
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)[0]
    assert (row["kernel"], row["registers"], row["static_smem_bytes"]) == ("k", 32, 4096)


# ------------------------------------------------------------------ 1. numbers

PTXAS_ENTRY = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
PTXAS_PROPS = "ptxas info    : Function properties for k\n"
PTXAS_FRAME = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
PTXAS_USED = "ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 364 bytes cmem[0]\n"
HUGE = "9" * 5000


def _ptxas(entry: str = PTXAS_ENTRY, frame: str = PTXAS_FRAME, used: str = PTXAS_USED, cap: str = "") -> str:
    return cap + entry + PTXAS_PROPS + frame + used


PTXAS_NUMBERS = {
    "regs-5000-digits": (_ptxas(used=f"ptxas info    : Used {HUGE} registers\n"), "register count has 5,000 digits"),
    "regs-21-digits": (_ptxas(used="ptxas info    : Used 123456789012345678901 registers\n"), "21 digits"),
    "regs-300": (_ptxas(used="ptxas info    : Used 300 registers\n"), "register count 300 is over 255"),
    "regs-2**64": (_ptxas(used=f"ptxas info    : Used {2**64} registers\n"), "register count"),
    "smem-5000-digits": (_ptxas(used=f"ptxas info    : Used 10 registers, {HUGE} bytes smem\n"), "shared memory"),
    "smem-2**40": (_ptxas(used=f"ptxas info    : Used 10 registers, {2**40} bytes smem\n"), "shared memory"),
    "smem-plus-form": (_ptxas(used=f"ptxas info    : Used 10 registers, {HUGE}+0 bytes smem\n"), "shared memory"),
    "lmem": (_ptxas(used=f"ptxas info    : Used 10 registers, {HUGE}+0 bytes lmem\n"), "local memory"),
    "barriers": (_ptxas(used=f"ptxas info    : Used 10 registers, used {HUGE} barriers\n"), "barrier count"),
    "barriers-17": (_ptxas(used="ptxas info    : Used 10 registers, used 17 barriers\n"), "barrier count 17"),
    "stack": (
        _ptxas(frame="", used=f"ptxas info    : Used 10 registers, {HUGE} bytes cumulative stack size\n"),
        "stack",
    ),
    "frame": (
        _ptxas(frame=f"    {HUGE} bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"),
        "stack frame",
    ),
    "spill-stores": (
        _ptxas(frame=f"    0 bytes stack frame, {2**33} bytes spill stores, 0 bytes spill loads\n"),
        "spill",
    ),
    "spill-loads": (
        _ptxas(frame=f"    0 bytes stack frame, 0 bytes spill stores, {HUGE} bytes spill loads\n"),
        "spill",
    ),
    "arch": (_ptxas(entry=f"ptxas info    : Compiling entry function 'k' for 'sm_{HUGE}'\n"), "architecture"),
    "arch-1000": (_ptxas(entry="ptxas info    : Compiling entry function 'k' for 'sm_1000'\n"), "architecture"),
    "cap": (
        _ptxas(cap=f"ptxas info    : Overriding maximum register limit 256 for 'k' with  {HUGE}\n"),
        "register limit",
    ),
    "jit-log": (PTXAS_PROPS + PTXAS_FRAME + f"ptxas info    : Used {HUGE} registers\n", "register count"),
}


@pytest.mark.parametrize("case", sorted(PTXAS_NUMBERS))
def test_ptxas_numbers(case: str, tmp_path: Path) -> None:
    text, needle = PTXAS_NUMBERS[case]
    refused(invoke(write(tmp_path, "hostile.log", text), "--threads", "128"), "hostile.log", needle)


CUOBJ_HEAD = "Fatbin elf code:\n================\narch = sm_90\n\nResource usage:\n Function k:\n"
CUOBJ_LINE = "  REG:{reg} STACK:{stack} SHARED:{shared} LOCAL:{local} CONSTANT[0]:540 TEXTURE:0\n"


def _cuobj(reg: object = 10, stack: object = 0, shared: object = 0, local: object = 0, head: str = CUOBJ_HEAD) -> str:
    return head + CUOBJ_LINE.format(reg=reg, stack=stack, shared=shared, local=local)


CUOBJ_NUMBERS = {
    "reg-5000-digits": (_cuobj(reg=HUGE), "REG has 5,000 digits"),
    "reg-256": (_cuobj(reg=256), "REG 256 is over 255"),
    "reg-text": (_cuobj(reg="ten"), "REG 'ten' is not a whole number"),
    "reg-negative": (_cuobj(reg=-1), "REG '-1' is not a whole number"),
    "reg-unicode-digits": (_cuobj(reg="١٠"), "not a whole number"),
    "reg-empty": (_cuobj(reg=""), "not a whole number"),
    "stack": (_cuobj(stack=HUGE), "STACK"),
    "shared-5000-digits": (_cuobj(shared=HUGE), "SHARED"),
    "shared-2**40": (_cuobj(shared=2**40), "SHARED 1,099,511,627,776 is over"),
    "local": (_cuobj(local=HUGE), "LOCAL"),
    "arch": (_cuobj(head=CUOBJ_HEAD.replace("sm_90", "sm_" + HUGE)), "architecture"),
    "arch-1000": (_cuobj(head=CUOBJ_HEAD.replace("sm_90", "sm_1000")), "architecture 1,000"),
}


@pytest.mark.parametrize("case", sorted(CUOBJ_NUMBERS))
def test_cuobjdump_numbers(case: str, tmp_path: Path) -> None:
    text, needle = CUOBJ_NUMBERS[case]
    refused(invoke(write(tmp_path, "res.txt", text), "--threads", "128"), "res.txt", needle)


def test_the_real_files_still_read() -> None:
    for f in ("ptxas-sm90.log", "cuobjdump-res-usage-program.txt", "ncu-program.csv", "ncu-torch.csv"):
        accepted(invoke(H200 / f, "--hw", "h200", "--threads", "128"))
    accepted(invoke(H200 / "triton-cache", "--hw", "h200"))


# ------------------------------------------------------------------ 2. linear-time parsing

BLOWUPS = {
    # each took seconds to minutes with patterns whose \s* spans lines or whose \d+ restarts at every digit
    "blank-lines": "\n" * 30_000 + "x\n",
    "blank-lines-then-ptxas": "\n" * 30_000 + "ptxas info : nothing\n",
    "spaces-then-newlines": " \n" * 15_000 + "x",
    "tabs-and-crlf": "\t\r\n" * 10_000 + "Function x",
    "form-feeds": "\x0c\n" * 15_000 + "x",
    "indented-function-lines": "   Function\n" * 10_000,
    "function-colons": "Function " + ":" * 100_000 + "x\n  REG:1\n",
    "function-spaces": "Function a" + " " * 100_000 + "x\n  REG:1\n",
    "ptxas-no-error": "ptxas " * 50_000 + "info :\n",
    "ptxas-error-late": "ptxas info : x\n" + "ptxas " * 40_000 + "\n",
    "digit-run-frame": "ptxas info : Function properties for k\n" + "1" * 200_000 + " bytes stack fram\n",
    "entry-quote-unclosed": "ptxas info : Compiling entry function '" + "a" * 200_000 + "\n",
    "entry-repeated": "ptxas info : " + "Compiling entry function '" * 10_000 + "\n",
    "props-long-name": "ptxas info : Function properties for " + "a" * 200_000 + " b\n",
    "props-repeated": "ptxas info : " + "Function properties for a " * 10_000 + "\n",
    "cuobj-upper-run": "Resource usage:\n Function k:\n  " + "A" * 200_000 + " REG:1\n",
    "cuobj-brackets": "Resource usage:\n Function k:\n  REG:1 " + "CONSTANT[" * 20_000 + "\n",
    "cuobj-colons": "Resource usage:\n Function k:\n  REG" + ":" * 200_000 + "\n",
    "used-digits": "ptxas info : Function properties for k\nptxas info : Used " + "1" * 200_000 + "x registers\n",
    "cap-digits": "ptxas info : Overriding maximum register limit " + "1" * 200_000 + " for\n",
    "csv-commas": "a," * 100_000 + "\n",
    "long-line": "x" * 2_000_000,
    "many-short-lines": "x\n" * 500_000,
}


@pytest.mark.parametrize("case", sorted(BLOWUPS))
def test_no_pattern_backtracks(case: str, tmp_path: Path) -> None:
    """Refused (these are no kernel files) in linear time: through the CLI, and timed directly."""
    path = write(tmp_path, "blowup.log", BLOWUPS[case])
    refused(invoke(path, "--threads", "128"), "blowup.log")
    t0 = time.perf_counter()
    with pytest.raises(InputError):
        load_kernel_file(path)
    assert time.perf_counter() - t0 < FAST


READ_FAST = {
    # kernels whose lines hold runs that a pattern starting at every digit would try again and again
    "digit-run-smem": PTXAS_ENTRY + "ptxas info : Used 1 registers, " + "1" * 200_000 + " bytes sme\n",
    "plus-runs-smem": PTXAS_ENTRY + "ptxas info : Used 1 registers, " + "1+" * 100_000 + " bytes smem\n",
    "digit-runs-lmem": PTXAS_ENTRY + "ptxas info : Used 1 registers, " + "12 " * 100_000 + "x bytes lmem\n",
    "stack-digits": PTXAS_ENTRY + "ptxas info : Used 1 registers, " + "7" * 200_000 + " stac\n",
    "cuobj-long-name": "Resource usage:\n Function " + "k:" * 100_000 + ":\n  REG:1 CONSTANT[0]:4\n",
    "cuobj-many-fields": "Resource usage:\n Function k:\n  REG:1 CONSTANT[0]:4" + " X:1" * 100_000 + "\n",
}


@pytest.mark.parametrize("case", sorted(READ_FAST))
def test_long_lines_in_valid_files_read_fast(case: str, tmp_path: Path) -> None:
    path = write(tmp_path, "long.log", READ_FAST[case])
    t0 = time.perf_counter()
    assert len(load_kernel_file(path).kernels) == 1
    assert time.perf_counter() - t0 < FAST
    accepted(invoke(path, "--threads", "128"))


@pytest.mark.parametrize("lines", [1_000, 20_000])
def test_a_long_valid_log_is_linear(lines: int, tmp_path: Path) -> None:
    text = "".join(
        f"ptxas info    : Compiling entry function 'k{i}' for 'sm_90'\n"
        f"ptxas info    : Function properties for k{i}\n{PTXAS_FRAME}"
        f"ptxas info    : Used {i % 200 + 1} registers, used 0 barriers, {i % 4000} bytes smem\n"
        for i in range(lines // 4)
    )
    t0 = time.perf_counter()
    kf = load_kernel_file(write(tmp_path, "long.log", text))
    assert len(kf.kernels) == lines // 4 and time.perf_counter() - t0 < FAST


# ------------------------------------------------------------------ 3. sizes, records, kernels


def _sparse(tmp: Path, name: str, head: bytes, size: int) -> Path:
    p = tmp / name
    with p.open("wb") as f:
        f.write(head)
        f.truncate(size)
    return p


SPARSE = {
    "zeros-1.9GB": (b"", 1_900_000_000, "over the 536,870,912-byte limit"),
    "elf-600MB": (b"\x7fELF\x02\x01\x01", 600 * 1024**2, "limit"),
    "fatbin-513MiB": (FATBIN_MAGIC, 513 * 1024**2, "limit"),
    "text-65MiB": (b"ptxas info : Used 1 registers\n" * 400, 65 * 1024**2, "limit for a text kernel file"),
    "binary-not-elf-1GB": (b"\x89PNG\r\n\x1a\n", 1024**3, "over the 536,870,912-byte limit"),
    "binary-not-elf-100MB": (b"\x89PNG\r\n\x1a\n", 100 * 1024**2, "not ELF"),
    "json-2MB": (b'{"name": "k", "num_warps": 4}' + b" " * 9000, 2_000_000, "Triton metadata file"),
}


@pytest.mark.parametrize("case", sorted(SPARSE))
def test_sparse_files_are_refused_before_reading(case: str, tmp_path: Path) -> None:
    head, size, needle = SPARSE[case]
    refused(invoke(_sparse(tmp_path, "big.bin", head, size), "--threads", "128"), "big.bin", needle)


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("lines.log", "x\n" * (limits.MAX_LINES + 1), "line limit"),
        ("crlf-lines.log", "x\r\n" * (limits.MAX_LINES + 1), "line limit"),
    ],
)
def test_text_limits(name: str, text: str, needle: str, tmp_path: Path) -> None:
    refused(invoke(write(tmp_path, name, text), "--threads", "128"), name, needle)


@pytest.mark.parametrize("kind", ["ptxas", "json"])
def test_a_text_file_over_its_limit_is_refused(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the limit lowered to keep the file small: read for real (not a sparse file), refused by size
    monkeypatch.setattr(detect, "MAX_TEXT_BYTES", 100_000)
    monkeypatch.setattr(detect, "MAX_JSON_BYTES", 100_000)
    text = PTXAS_ENTRY * 5_000 if kind == "ptxas" else '{"name": "k", "num_warps": 4, "x": "' + "x" * 200_000 + '"}'
    refused(invoke(write(tmp_path, "big.txt", text), "--threads", "128"), "big.txt", "over the 100,000-byte limit")


def test_the_size_limits_are_stated() -> None:
    assert limits.MAX_BINARY_BYTES == 512 * 1024**2 and limits.MAX_TEXT_BYTES == 64 * 1024**2
    assert limits.MAX_JSON_BYTES == 1_000_000 and limits.MAX_KERNELS == 10_000
    assert limits.MAX_LINES == 2_000_000 and limits.MAX_NCU_ROWS == 50_000


@pytest.mark.parametrize("fmt", ["ptxas", "cuobjdump", "cubin", "ncu", "triton"])
def test_too_many_kernels(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_KERNELS", 1)
    if fmt == "ptxas":
        path = H200 / "ptxas-sm90.log"
    elif fmt == "cuobjdump":
        path = H200 / "cuobjdump-res-usage-program.txt"
    elif fmt == "ncu":
        path = H200 / "ncu-program.csv"
    elif fmt == "triton":
        path = H200 / "triton-cache"
    else:
        path = write(tmp_path, "two.cubin", cubin(symbols=bytes(24) + sym(1) + sym(1)))
    refused(invoke(path, "--threads", "128"), path.name, "more than 1 kernels")


def _symbols_cubin(n: int, distinct_names: bool, kind: int = 0x12) -> bytes:
    if distinct_names:  # every symbol starts one byte later in one long name: overlapping suffixes
        strtab = b"\0" + b"a" * 60_000 + b"\0"
        symbols = bytes(24) + b"".join(sym(1 + i % 60_000, info=kind) for i in range(n))
    else:
        strtab = b"\0k\0"
        symbols = bytes(24) + sym(1, info=kind) * n
    return cubin(strtab=strtab, symbols=symbols)


@pytest.mark.parametrize(
    ("n", "distinct", "kind", "needle"),
    [
        (30_000, False, 0x12, "more than 10,000 kernels"),
        (60_000, False, 0x12, "more than 10,000 kernels"),
        (30_000, False, 0x11, "no kernels"),  # 30,000 data symbols: read quickly, no kernel among them
        (30_000, True, 0x12, "names add up to more than 128 MiB"),
        (60_000, True, 0x11, "names add up to more than 128 MiB"),
    ],
)
def test_cubins_with_many_symbols(n: int, distinct: bool, kind: int, needle: str, tmp_path: Path) -> None:
    path = write(tmp_path, "symbols.cubin", _symbols_cubin(n, distinct, kind))
    refused(invoke(path, "--threads", "128"), "symbols.cubin", needle)


def test_elf_record_budget(tmp_path: Path) -> None:
    # one .nv.info.k of 1.1M four-byte records: over the budget before any is parsed
    data = cubin(info_records=b"\x01\x02\x00\x00" * (limits.MAX_ELF_RECORDS + 100_000))
    refused(invoke(write(tmp_path, "records.cubin", data), "--threads", "128"), "records.cubin", "ELF section")


def _host(tmp: Path, payload: bytes) -> Path:
    x86 = bytearray(64)
    x86[:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HH", x86, 16, 2, 62)
    return write(tmp, "app", bytes(x86) + payload)


def _cuda_header(shoff: int = 0, shnum: int = 0) -> bytes:
    h = bytearray(64)
    h[:9] = b"\x7fELF\x02\x01\x01\x41\x08"
    struct.pack_into("<HHIQQQIHHHHHH", h, 16, 2, EM_CUDA, 1, 0, 0, shoff, 90 << 8, 64, 0, 0, 64, shnum, 0)
    return bytes(h)


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("50k-cuda-headers", "more than 10,000 cubins embedded"),
        ("150k-elf-magics", "more than 100,000 ELF headers"),
        ("overlapping-section-tables", "ELF section headers, symbols"),
        ("5k-damaged-headers", "embedded CUDA ELF images are damaged"),
        ("5k-damaged-headers-no-fatbin", "(and 4,999 more)"),
    ],
)
def test_host_binaries_with_many_embedded_headers(case: str, needle: str, tmp_path: Path) -> None:
    if case == "50k-cuda-headers":
        payload = _cuda_header() * 50_000
    elif case == "150k-elf-magics":
        payload = b"\x7fELF" * 150_000
    elif case == "overlapping-section-tables":
        # 5,000 headers whose 65,535 section headers all lie on the same 4 MiB of zeros
        table = 64 + 5_000 * 64
        payload = b"".join(_cuda_header(shoff=table - 64 * i, shnum=65_535) for i in range(1, 5_001)) + bytes(
            64 * 65_535
        )
    else:
        payload = _cuda_header(shoff=2**40, shnum=3) * 5_000 + (FATBIN_MAGIC if "no-fatbin" not in case else b"")
    refused(invoke(_host(tmp_path, payload), "--threads", "128"), "app", needle)


# ------------------------------------------------------------------ 4. special files, folders


def _special(tmp: Path, kind: str, name: str) -> Path:
    p = tmp / name
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev-zero-link":
        p.symlink_to("/dev/zero")
    elif kind == "dev-null-link":
        p.symlink_to("/dev/null")
    elif kind == "dangling-link":
        p.symlink_to(tmp / "nowhere")
    elif kind == "link-loop":
        p.symlink_to(p)
    elif kind == "sparse-2GB":
        _sparse(tmp, name, b"{", 2 * 1024**3)
    return p


SPECIAL_KINDS = ["fifo", "dev-zero-link", "dev-null-link", "dangling-link", "link-loop", "sparse-2GB"]


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
@pytest.mark.parametrize("name", ["k.cubin", "k.json", "prof.csv"])
def test_special_files_are_never_read(kind: str, name: str, tmp_path: Path) -> None:
    refused(invoke(_special(tmp_path, kind, name), "--threads", "128"), name)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_devices(device: str) -> None:
    refused(invoke(device, "--threads", "128"), device, "not a regular file")


def _entry(tmp: Path, meta: dict[str, Any] | str | None = None, name: str = "add_kernel") -> Path:
    """A copy of the real add_kernel cache entry, its metadata replaced where given."""
    d = tmp / "cache" / "ENTRY"
    shutil.copytree(ADD_ENTRY, d)
    if meta is not None:
        text = meta if isinstance(meta, str) else json.dumps(meta)
        (d / "add_kernel.json").write_text(text)
    return d / f"{name}.json"


def _meta() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ADD_ENTRY / "add_kernel.json").read_text())
    return data


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_special_json_in_a_cache_folder_is_skipped(kind: str, tmp_path: Path) -> None:
    meta = _entry(tmp_path)
    _special(meta.parent, kind, "zz_special.json")
    out = accepted(invoke(tmp_path / "cache", "--hw", "h200", "--json"))
    assert "add_kernel" in out and "skipped" in out


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_a_folder_of_special_json_only(kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    _special(folder, kind, "k.json")
    refused(invoke(folder, "--hw", "h200"), "cache", "without Triton cache entries")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "dangling-link", "link-loop"])
def test_special_cubin_beside_metadata(kind: str, tmp_path: Path) -> None:
    meta = _entry(tmp_path)
    (meta.parent / "add_kernel.cubin").unlink()
    _special(meta.parent, kind, "add_kernel.cubin")
    refused(invoke(meta, "--hw", "h200"), "add_kernel")


@pytest.mark.parametrize("depth", [limits.MAX_WALK_DEPTH + 1, 60])
def test_deep_folders(depth: int, tmp_path: Path) -> None:
    d = tmp_path / "cache"
    deep = d.joinpath(*["d"] * depth)
    deep.mkdir(parents=True)
    refused(invoke(d, "--hw", "h200"), "cache", "nested more than 8 levels")


def test_a_folder_at_the_depth_limit_is_read(tmp_path: Path) -> None:
    meta = _entry(tmp_path)
    deep = tmp_path / "top"
    target = deep.joinpath(*["d"] * (limits.MAX_WALK_DEPTH - 1))
    target.mkdir(parents=True)
    shutil.move(str(meta.parent), str(target / "ENTRY"))
    assert "add_kernel" in accepted(invoke(deep, "--hw", "h200"))


def test_too_many_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(triton_reader, "MAX_WALK_ENTRIES", 50)
    d = tmp_path / "cache"
    d.mkdir()
    for i in range(60):
        (d / f"f{i}.txt").write_text("x")
    refused(invoke(d, "--hw", "h200"), "cache", "more than 50 files and folders")


def test_too_many_json_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(triton_reader, "MAX_KERNELS", 5)
    d = tmp_path / "cache"
    d.mkdir()
    for i in range(6):
        (d / f"f{i}.json").write_text("{}")
    refused(invoke(d, "--hw", "h200"), "cache", "more than 5 JSON files")


def test_symlinked_folders_are_not_followed(tmp_path: Path) -> None:
    meta = _entry(tmp_path)
    (meta.parent / "loop").symlink_to(meta.parent)
    (meta.parent / "up").symlink_to(tmp_path)
    out = accepted(invoke(tmp_path / "cache", "--hw", "h200"))
    assert out.count("add_kernel") == 1


# ------------------------------------------------------------------ 5. truncated and corrupt ELF


@pytest.mark.parametrize("fraction", [i / 30 for i in range(30)])
def test_truncated_cubins(fraction: float, cubin_bytes: bytes, tmp_path: Path) -> None:
    cut = cubin_bytes[: max(1, int(len(cubin_bytes) * fraction))]
    refused(invoke(write(tmp_path, "cut.cubin", cut), "--threads", "128"), "cut.cubin")


@pytest.mark.parametrize("size", [1, 4, 5, 6, 16, 20, 63, 64, 65, 100])
def test_tiny_elf_files(size: int, cubin_bytes: bytes, tmp_path: Path) -> None:
    refused(invoke(write(tmp_path, "tiny.cubin", cubin_bytes[:size]), "--threads", "128"), "tiny.cubin")


def _patch(data: bytes, offset: int, fmt: str, *values: int) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, offset, *values)
    return bytes(b)


def _section_header(data: bytes, index: int) -> int:
    shoff = struct.unpack_from("<Q", data, 40)[0]
    return int(shoff + 64 * index)


def _find_section(data: bytes, name: str) -> int:
    (shoff,) = struct.unpack_from("<Q", data, 40)
    shnum, shstrndx = struct.unpack_from("<HH", data, 60)
    names_off = struct.unpack_from("<Q", data, shoff + 64 * shstrndx + 24)[0]
    for i in range(shnum):
        at = struct.unpack_from("<I", data, shoff + 64 * i)[0]
        end = data.index(b"\0", names_off + at)
        if data[names_off + at : end].decode() == name:
            return i
    raise KeyError(name)


CORRUPTIONS: dict[str, Callable[[bytes], bytes]] = {
    "shoff-huge": lambda d: _patch(d, 40, "<Q", 2**63),
    "shoff-past-end": lambda d: _patch(d, 40, "<Q", len(d) - 10),
    "shnum-max": lambda d: _patch(d, 60, "<H", 0xFFFF),
    "shnum-zero": lambda d: _patch(d, 60, "<H", 0),
    "shentsize-zero": lambda d: _patch(d, 58, "<H", 0),
    "shentsize-huge": lambda d: _patch(d, 58, "<H", 0xFFFF),
    "shstrndx-max": lambda d: _patch(d, 62, "<H", 0xFFFF),
    "shstrndx-symtab": lambda d: _patch(d, 62, "<H", 0),
    "sm-unknown": lambda d: _patch(d, 48, "<I", 0xEE << 8),
    "class-32": lambda d: _patch(d, 4, "<B", 1),
    "big-endian": lambda d: _patch(d, 5, "<B", 2),
    "machine-x86": lambda d: _patch(d, 18, "<H", 62),
}


def _section_patch(name: str, field_offset: int, fmt: str, value: int) -> Callable[[bytes], bytes]:
    return lambda d: _patch(d, _section_header(d, _find_section(d, name)) + field_offset, fmt, value)


for _sec in (".shstrtab", ".strtab", ".symtab", ".nv.info"):
    CORRUPTIONS[f"{_sec}-offset-huge"] = _section_patch(_sec, 24, "<Q", 2**62)
    CORRUPTIONS[f"{_sec}-size-huge"] = _section_patch(_sec, 32, "<Q", 2**62)
    CORRUPTIONS[f"{_sec}-offset-end"] = _section_patch(_sec, 24, "<Q", 2**20)
    CORRUPTIONS[f"{_sec}-type-nobits"] = _section_patch(_sec, 4, "<I", SHT_NOBITS)
CORRUPTIONS["symtab-link-huge"] = _section_patch(".symtab", 40, "<I", 0xFFFF)
CORRUPTIONS["symtab-link-self"] = _section_patch(".symtab", 40, "<I", 0)
CORRUPTIONS["section-name-huge"] = _section_patch(".strtab", 0, "<I", 0xFFFFFFFF)
CORRUPTIONS["shstrtab-size-1"] = _section_patch(".shstrtab", 32, "<Q", 1)
CORRUPTIONS["strtab-size-1"] = _section_patch(".strtab", 32, "<Q", 1)


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_corrupt_real_cubin(case: str, cubin_bytes: bytes, tmp_path: Path) -> None:
    """Each damage gives one Error line (exit 2), or where it leaves a readable cubin, exit 0."""
    res = invoke(write(tmp_path, "bad.cubin", CORRUPTIONS[case](cubin_bytes)), "--threads", "128", "--json")
    if res.exit_code == 0:
        accepted(res)
    else:
        refused(res, "bad.cubin")


SYNTHETIC = {
    "regcount-300": (cubin(regcount=300), "register count 300 is over 255"),
    "regcount-2**32-1": (cubin(regcount=2**32 - 1), "register count"),
    "shared-2**63": (cubin(shared=2**63), "static shared memory"),
    "empty-barrier-record": (cubin(info_records=struct.pack("<BBH", 4, 0x4C, 0)), "empty barrier count"),
    "barriers-200": (cubin(info_records=struct.pack("<BBH", 3, 0x4C, 200)), "named barrier count 200"),
    "short-maxreg": (cubin(info_records=struct.pack("<BBHB", 4, 0x1B, 1, 7)), "register cap"),
    "record-past-end": (cubin(info_records=struct.pack("<BBH", 4, 0x05, 400)), "runs past its end"),
    "launch-bounds-huge": (
        cubin(info_records=struct.pack("<BBHIII", 4, 0x05, 12, 2**32 - 1, 2**32 - 1, 2**32 - 1)),
        "__launch_bounds__ thread count",
    ),
    "name-without-nul": (cubin(strtab=b"\0" + b"k" * 100), "runs past the end of its string table"),
    "name-too-long": (cubin(strtab=b"\0" + b"k" * (limits.MAX_NAME_BYTES + 10) + b"\0"), "longer than 65,536"),
    "symbol-name-out-of-table": (cubin(symbols=bytes(24) + sym(10_000)), "points past the end"),
    "symtab-odd-size": (cubin(symbols=bytes(24) + sym(1) + b"\1\2\3"), ""),
    "machine-x86": (elf([(".text", SHT_PROGBITS, b"x", 0, 0)], machine=62), "no CUDA device code"),
    "no-sections": (elf([])[:60] + b"\0\0\0\0", "without section headers"),
}


@pytest.mark.parametrize("case", sorted(SYNTHETIC))
def test_corrupt_synthetic_cubin(case: str, tmp_path: Path) -> None:
    data, needle = SYNTHETIC[case]
    res = invoke(write(tmp_path, "syn.cubin", data), "--threads", "128")
    if case == "symtab-odd-size":  # the partial last symbol is ignored, as readelf does
        accepted(res)
        return
    refused(res, "syn.cubin", needle)


@pytest.mark.parametrize("seed", range(40))
def test_random_damage_to_a_real_cubin(seed: int, cubin_bytes: bytes, tmp_path: Path) -> None:
    """Bytes overwritten at random (a fixed seed each): exit 0 or one Error line, never a crash."""
    rng = random.Random(seed)
    data = bytearray(cubin_bytes)
    shoff = struct.unpack_from("<Q", data, 40)[0]
    for _ in range(8):  # the headers and section table are where damage reaches the reader
        at = rng.choice([rng.randrange(0, 64), rng.randrange(shoff, len(data)), rng.randrange(0, len(data))])
        data[at] = rng.randrange(256)
    res = invoke(write(tmp_path, "rnd.cubin", bytes(data)), "--threads", "128", "--json")
    if res.exit_code == 0:
        accepted(res)
    else:
        refused(res, "rnd.cubin")


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.99])
def test_truncated_cubin_inside_a_fatbin(fraction: float, cubin_bytes: bytes, tmp_path: Path) -> None:
    cut = cubin_bytes[: int(len(cubin_bytes) * fraction)]
    path = write(tmp_path, "cut.fatbin", FATBIN_MAGIC + bytes(76) + cut)
    refused(invoke(path, "--threads", "128"), "cut.fatbin", "damaged", "truncated ELF file")


def test_one_damaged_cubin_beside_a_good_one(cubin_bytes: bytes, tmp_path: Path) -> None:
    bad = _patch(cubin_bytes, 48, "<I", 0xEE << 8)
    path = write(tmp_path, "two.fatbin", FATBIN_MAGIC + bytes(76) + cubin_bytes + bytes(8) + bad)
    res = invoke(path, "--threads", "128", "--hw", "h200")
    assert "skipped" in accepted(res)


# ------------------------------------------------------------------ 6. Nsight Compute CSV


def _ncu_rows(path: Path = NCU) -> tuple[list[str], list[list[str]]]:
    lines = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID",'))
    return lines[:start], list(csv.reader(lines[start:]))


def _ncu_text(prefix: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return "\n".join(prefix) + "\n" + buf.getvalue()


def _ncu_with(column: str, value: str, row: int = 0) -> str:
    prefix, rows = _ncu_rows()
    rows[2 + row][rows[0].index(column)] = value
    return _ncu_text(prefix, rows)


NCU_COLUMNS = [
    "gpu__time_duration.sum",
    "dram__bytes.sum",
    "launch__block_size",
    "launch__grid_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_config_size",
    "launch__occupancy_limit_warps",
    "launch__waves_per_multiprocessor",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
]
NCU_VALUES = {
    "5000-digits": "1" * 5000,
    "inf": "inf",
    "minus-inf": "-inf",
    "nan": "nan",
    "negative": "-5",
    "subnormal": "1e-309",
    "overflow": "1e400",
    "absurd": "1e40",
    "text": "abc",
    "hex": "0x10",
    "underscores": "1_000",
    "two-dots": "1.2.3",
}


@pytest.mark.parametrize("value", sorted(NCU_VALUES))
@pytest.mark.parametrize("column", NCU_COLUMNS)
def test_ncu_figures(column: str, value: str, tmp_path: Path) -> None:
    path = write(tmp_path, "prof.csv", _ncu_with(column, NCU_VALUES[value]))
    line = refused(invoke(path, "--hw", "h200"), "prof.csv", column)
    prefix, _ = _ncu_rows()
    assert f"prof.csv:{len(prefix) + 3}: " in line  # the line of the first profiled launch


@pytest.mark.parametrize(
    ("column", "value", "needle"),
    [
        ("gpu__time_duration.sum", "0", "outside"),
        ("gpu__time_duration.sum", "0.0000001", "outside"),
        ("gpu__time_duration.sum", "1e-300", "outside"),
        ("gpu__time_duration.sum", "1e300", "outside"),
        ("dram__bytes.sum", "1e-300", "outside"),
        ("dram__bytes.sum", "999999", "B/s"),  # 1 TB in 10.5 us: not a measurement
        ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "1e20", "FLOP/s"),
        ("launch__registers_per_thread", "257", "outside"),
        ("launch__block_size", "2000000", "outside"),
        ("launch__occupancy_limit_warps", "1e12", "outside"),
        ("sm__maximum_warps_per_active_cycle_pct", "100.5", "outside"),
        ("launch__shared_mem_per_block_static", "1e10", "outside"),
        ("Block Size", "(1, 2, 3, 4)", "one to three"),
        ("Grid Size", "(" + "9" * 5000 + ", 1, 1)", "5,000 digits"),
        ("ID", "x", "launch ID"),
        ("ID", "9" * 5000, "launch ID"),
        ("CC", "9.x", "not a compute capability"),
        ("CC", "9" * 5000 + ".0", "not a compute capability"),
        ("Kernel Name", "", "without a Kernel Name"),
    ],
)
def test_ncu_out_of_range(column: str, value: str, needle: str, tmp_path: Path) -> None:
    text = _ncu_with(column, value)
    if column in ("Block Size", "Grid Size"):  # read only where the launch__ metric is missing
        text = text.replace('"256","4,096"', '"n/a","n/a"', 1)
    refused(invoke(write(tmp_path, "prof.csv", text), "--hw", "h200"), "prof.csv", needle)


@pytest.mark.parametrize(
    "column",
    [
        "dram__bytes.sum",
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
        "launch__waves_per_multiprocessor",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
    ],
)
@pytest.mark.parametrize("value", ["0", "n/a", "(!) n/a", ""])
def test_ncu_zero_and_missing_figures_are_read(column: str, value: str, tmp_path: Path) -> None:
    out = accepted(invoke(write(tmp_path, "prof.csv", _ncu_with(column, value)), "--hw", "h200", "--json"))
    assert "k_static32k" in out


@pytest.mark.parametrize("name", ["ncu-program.csv", "ncu-torch.csv", "ncu-scaled-units.csv"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_ncu_bom_is_accepted(name: str, newline: str, tmp_path: Path) -> None:
    src = (H200 / name) if (H200 / name).exists() else SAMPLES / name
    text = src.read_text().replace("\n", newline)
    plain = invoke(write(tmp_path, "plain.csv", text), "--hw", "h200", "--json")
    bom = invoke(write(tmp_path, "bom.csv", "\ufeff" + text), "--hw", "h200", "--json")
    assert plain.exit_code == bom.exit_code == 0, bom.output[-400:]
    assert json.loads(plain.stdout) == json.loads(bom.stdout)


@pytest.mark.parametrize("size", [200_000, 50_000_000])
def test_ncu_field_over_the_csv_limit(size: int, tmp_path: Path) -> None:
    text = NCU.read_text().replace(',"k_static32k",', ',"' + "k" * size + '",', 1)
    refused(invoke(write(tmp_path, "prof.csv", text), "--hw", "h200"), "prof.csv", "unreadable CSV")


def test_ncu_unclosed_quote_field(tmp_path: Path) -> None:
    text = _ncu_with("Kernel Name", "x").replace('"x"', '"' + "x" * 200_000, 1)
    refused(invoke(write(tmp_path, "prof.csv", text), "--hw", "h200"), "prof.csv")


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("2M-rows", "line limit"),
        ("200k-kernels", "more than 50,000 profiled launches"),
        ("50k-plus-one-launches", "more than 50,000 profiled launches"),
        ("20001-columns", "a header of 20,001 columns"),
        ("wide-row", "a row of more than 40,000 fields"),
        ("short-row", "truncated Nsight Compute export"),
        ("no-units-row", "not a time unit"),
        ("time-unit-bytes", "not a time unit"),
    ],
)
def test_ncu_shapes(case: str, needle: str, tmp_path: Path) -> None:
    head = '"ID","Kernel Name"\n'
    if case == "2M-rows":
        text = head + "1,k\n" * 2_000_000
    elif case == "200k-kernels":
        text = head + "".join(f"{i},k{i}\n" for i in range(200_000))
    elif case == "50k-plus-one-launches":
        text = head + '"",""\n' + "1,k\n" * (limits.MAX_NCU_ROWS + 1)
    elif case == "20001-columns":
        text = '"ID","Kernel Name"' + ",x" * 19_999 + "\n1,k\n"
    elif case == "wide-row":
        text = head + "1,k" + "," * 50_000 + "\n"
    else:
        prefix, rows = _ncu_rows()
        if case == "short-row":
            rows[3] = rows[3][:5]
        elif case == "no-units-row":
            del rows[1]
        else:
            rows[1][rows[0].index("gpu__time_duration.sum")] = "byte"
        text = _ncu_text(prefix, rows)
    refused(invoke(write(tmp_path, "prof.csv", text), "--hw", "h200"), "prof.csv", needle)


# ------------------------------------------------------------------ 7. Triton metadata types

TRITON_BAD: dict[str, tuple[dict[str, Any], str]] = {
    "num_warps-text": ({"num_warps": "x"}, "'num_warps' is 'x'"),
    "num_warps-list": ({"num_warps": [4]}, "'num_warps' is [4]"),
    "num_warps-dict": ({"num_warps": {"n": 4}}, "'num_warps'"),
    "num_warps-float": ({"num_warps": 4.5}, "'num_warps' is 4.5"),
    "num_warps-whole-float": ({"num_warps": 4.0}, "'num_warps' is 4.0"),
    "num_warps-zero": ({"num_warps": 0}, "'num_warps' is 0"),
    "num_warps-negative": ({"num_warps": -4}, "'num_warps' is -4"),
    "num_warps-bool": ({"num_warps": True}, "'num_warps' is True"),
    "num_warps-null": ({"num_warps": None}, "'num_warps' is null"),
    "num_warps-huge": ({"num_warps": 10**30}, "'num_warps'"),
    "shared-negative": ({"shared": -1}, "'shared' is -1"),
    "shared-text": ({"shared": "0"}, "'shared' is '0'"),
    "shared-float": ({"shared": 1.5}, "'shared' is 1.5"),
    "shared-list": ({"shared": [0]}, "'shared' is [0]"),
    "shared-huge": ({"shared": 2**40}, "'shared'"),
    "num_ctas-zero": ({"num_ctas": 0}, "'num_ctas' is 0"),
    "num_ctas-text": ({"num_ctas": "1"}, "'num_ctas'"),
    "maxnreg-300": ({"maxnreg": 300}, "'maxnreg' is 300"),
    "maxnreg-list": ({"maxnreg": [1]}, "'maxnreg'"),
    "warp_size-text": ({"target": {"backend": "cuda", "arch": 90, "warp_size": "x"}}, "'warp_size' is 'x'"),
    "warp_size-zero": ({"target": {"backend": "cuda", "arch": 90, "warp_size": 0}}, "'warp_size' is 0"),
    "warp_size-list": ({"target": {"backend": "cuda", "arch": 90, "warp_size": [32]}}, "'warp_size'"),
    "warp_size-huge": ({"target": {"warp_size": 10**20}}, "'warp_size'"),
    "name-slash": ({"name": "../add_kernel"}, "not a kernel name"),
    "name-backslash": ({"name": "a\\b"}, "not a kernel name"),
    "name-nul": ({"name": "add\0kernel"}, "not a kernel name"),
    "name-empty": ({"name": ""}, "not a kernel name"),
    "name-dots": ({"name": ".."}, "not a kernel name"),
    "name-long": ({"name": "k" * 5000}, "not a kernel name"),
    "name-other-kernel": ({"name": "other_kernel"}, "without its cubin"),
    "name-number": ({"name": 5}, "not Triton kernel metadata"),
    "name-list": ({"name": ["add_kernel"]}, "not Triton kernel metadata"),
    "no-num_warps": ({"num_warps": "DELETE"}, "not Triton kernel metadata"),
}


def _bad_meta(change: dict[str, Any]) -> dict[str, Any]:
    meta = _meta()
    for k, v in change.items():
        if v == "DELETE":
            del meta[k]
        else:
            meta[k] = v
    return meta


@pytest.mark.parametrize("case", sorted(TRITON_BAD))
@pytest.mark.parametrize("via", ["file", "folder"])
def test_triton_metadata_types(case: str, via: str, tmp_path: Path) -> None:
    change, needle = TRITON_BAD[case]
    meta = _entry(tmp_path, _bad_meta(change))
    res = invoke(meta if via == "file" else tmp_path / "cache", "--hw", "h200")
    if via == "folder" and ("not Triton kernel metadata" in needle or case == "name-other-kernel"):
        # in a folder, JSON that is no Triton metadata (or no CUDA entry) is skipped: no entries remain
        refused(res, "cache", "without Triton cache entries")
    else:
        refused(res, "add_kernel.json", needle)


TRITON_JSON: dict[str, tuple[str, str]] = {
    "nested-100k": ('{"name": "add_kernel", "num_warps": 4, "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
    "nested-65": ('{"name": "add_kernel", "num_warps": 4, "x": ' + "[" * 65 + "]" * 65 + "}", "nested"),
    "digits-5000": ('{"name": "add_kernel", "num_warps": ' + "4" * 5000 + "}", "5000 digits"),
    "shared-1e400": ('{"name": "add_kernel", "num_warps": 4, "shared": 1e400}', "out of range"),
    "shared-subnormal": ('{"name": "add_kernel", "num_warps": 4, "shared": 1e-309}', "subnormal"),
    "nan": ('{"name": "add_kernel", "num_warps": NaN}', "not a finite number"),
    "infinity": ('{"name": "add_kernel", "num_warps": 4, "shared": -Infinity}', "not a finite number"),
    "truncated": ('{"name": "add_kernel", "num_warps": 4', "not JSON"),
    "top-level-list": ('[{"name": "add_kernel", "num_warps": 4}]', "not Triton kernel metadata"),
    "top-level-string": ('  ["add_kernel"]', "not Triton kernel metadata"),
    "not-utf8": ('{"name": "add_kernel", "num_warps": 4, "x": "\udcff"}', ""),
}


@pytest.mark.parametrize("case", sorted(TRITON_JSON))
def test_triton_json(case: str, tmp_path: Path) -> None:
    text, needle = TRITON_JSON[case]
    meta = _entry(tmp_path)
    if case == "not-utf8":
        meta.write_bytes(b'{"name": "add_kernel", "num_warps": 4, "x": "\xff"}')
    else:
        meta.write_text(text)
    refused(invoke(meta, "--hw", "h200"), "add_kernel.json", needle)
    # in a folder the file is skipped, and the reason shown with the refusal (no other entry)
    refused(invoke(tmp_path / "cache", "--hw", "h200"), "cache", "without Triton cache entries")


def test_triton_bom_is_accepted(tmp_path: Path) -> None:
    meta = _entry(tmp_path)
    meta.write_text("\ufeff" + meta.read_text())
    assert "add_kernel" in accepted(invoke(meta, "--hw", "h200"))
    assert "add_kernel" in accepted(invoke(tmp_path / "cache", "--hw", "h200"))


def test_triton_cubin_that_is_no_cubin(tmp_path: Path) -> None:
    meta = _entry(tmp_path)
    (meta.parent / "add_kernel.cubin").write_bytes(b"\x7fELF" + bytes(10))
    refused(invoke(meta, "--hw", "h200"), "add_kernel.cubin", "not an ELF file")


def test_triton_cubin_over_the_limit(tmp_path: Path) -> None:
    meta = _entry(tmp_path)
    _sparse(meta.parent, "add_kernel.cubin", b"\x7fELF", limits.MAX_BINARY_BYTES + 1)
    refused(invoke(meta, "--hw", "h200"), "add_kernel.cubin", "limit for a cubin")


def test_ncu_registers_at_the_limit_launch(tmp_path: Path) -> None:
    # ncu counts a 255-register kernel's allocation: 256, which is the same registers as 255
    text = _ncu_with("launch__registers_per_thread", "256")
    res = invoke(write(tmp_path, "prof.csv", text), "--hw", "h200", "--json")
    row = json.loads(accepted(res).split("\nnote:")[0])[0]
    assert row["registers"] == 256 and row["launchable"] is True and row["blocks_per_sm"] == 1


# ------------------------------------------------------------------ what a file says, echoed

CONTROLS = ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\x1b[2J", "\x7f", "\r"]


@pytest.mark.parametrize("char", CONTROLS)
@pytest.mark.parametrize("fmt", ["ptxas", "cuobjdump"])
def test_names_echoed_in_an_error_stay_on_one_line(char: str, fmt: str, tmp_path: Path) -> None:
    name = f"k{char}x"
    if fmt == "ptxas":  # an entry function without its 'Used' line: the message names it
        text = f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\n"
    else:
        text = f"Resource usage:\n Function {name}:\n"
    line = refused(invoke(write(tmp_path, "names.log", text), "--threads", "128"), "names.log", "truncated")
    assert char not in line


@pytest.mark.parametrize("char", ["\n", "\x0b", "\u2028", "\x1b"])
def test_file_names_echoed_stay_on_one_line(char: str, tmp_path: Path) -> None:
    path = write(tmp_path, f"a{char}b.log", "not a kernel file\n")
    line = refused(invoke(path, "--threads", "128"), "b.log", "not a kernel file")
    assert char not in line.removeprefix("Error: ")


@pytest.mark.parametrize("char", ["\x0b", "\u2028"])
def test_kernel_names_listed_when_none_matches(char: str, tmp_path: Path) -> None:
    path = write(tmp_path, "prof.csv", _ncu_with("Kernel Name", f"k{char}x"))
    refused(invoke(path, "--hw", "h200", "--kernel", "nothing"), "", "no kernel matches")


def test_cubins_of_a_folder_add_up_to_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_BINARY_BYTES", 20_000)  # the folder's budget (each file keeps its own limit)
    refused(invoke(H200 / "triton-cache", "--hw", "h200"), "matmul_kernel.cubin", "add up to more than 20,000 bytes")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="no procfs")
def test_a_regular_file_whose_size_says_zero_is_still_read_to_its_limit() -> None:
    # procfs files are regular files whose st_size is 0: what is read is bounded, not what stat says
    refused(invoke("/proc/self/status", "--threads", "128"), "/proc/self/status", "not a kernel file")
