"""A small reader of 64-bit little-endian ELF files: the header, section headers and symbols.

CUDA cubins need nothing more (no relocations, no DWARF); a reader of our own keeps the
package free of a binary-format dependency and turns every malformed offset into one
readable line instead of an exception from deep inside a library.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import InputError
from .limits import MAX_NAME_BYTES, Budget

MAGIC = b"\x7fELF"
EM_CUDA = 190
SHT_SYMTAB = 2
SHT_NOBITS = 8
STT_FUNC = 2

_MACHINES = {3: "x86", 62: "x86-64", 40: "ARM", 183: "AArch64", 243: "RISC-V", 20: "PowerPC", 21: "PowerPC64"}


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int


@dataclass(frozen=True)
class Symbol:
    name: str
    info: int
    other: int
    shndx: int
    value: int
    size: int

    @property
    def type(self) -> int:
        return self.info & 0xF


class Elf:
    """Parses eagerly and checks every offset against the data; raises InputError on damage.

    Every section header, symbol and name read is spent from ``budget`` (one per file, shared by
    the cubins embedded in it), so overlapping crafted headers cost a bounded amount of work."""

    def __init__(self, data: bytes, label: str, base: int = 0, budget: Budget | None = None) -> None:
        self.data = data
        self.label = label
        self.base = base
        self.budget = budget if budget is not None else Budget(label)
        self._names: dict[tuple[int, int], str] = {}
        if len(data) < base + 64 or data[base : base + 4] != MAGIC:
            raise InputError(f"{label}: not an ELF file")
        if data[base + 4] != 2 or data[base + 5] != 1:
            raise InputError(f"{label}: a 32-bit or big-endian ELF file; CUDA cubins are 64-bit little-endian")
        self.osabi, self.abiversion = data[base + 7], data[base + 8]
        (self.type, self.machine, _, _, _, shoff, self.flags, _, _, _, shentsize, shnum, shstrndx) = struct.unpack_from(
            "<HHIQQQIHHHHHH", data, base + 16
        )
        size = len(data) - base
        if shnum == 0 or shentsize < 64:
            raise InputError(f"{label}: ELF file without section headers")
        if shoff + shnum * shentsize > size:
            raise InputError(
                f"{label}: truncated ELF file: its section headers end at byte "
                f"{shoff + shnum * shentsize:,}, the file has {size:,}"
            )
        self.budget.spend_records(shnum)
        start = base + shoff
        if shentsize == 64:  # as every ELF writer makes them: one unpack over the whole table
            raw = list(struct.iter_unpack("<IIQQQQIIQQ", data[start : start + 64 * shnum]))
        else:
            raw = [struct.unpack_from("<IIQQQQIIQQ", data, start + i * shentsize) for i in range(shnum)]
        past = next((r for r in raw if r[4] + r[5] > size and r[1] != SHT_NOBITS), None)
        if past is not None:
            raise InputError(
                f"{label}: truncated ELF file: a section ends at byte {past[4] + past[5]:,}, the file has {size:,}"
            )
        if shstrndx >= shnum or raw[shstrndx][1] == SHT_NOBITS:
            raise InputError(f"{label}: damaged ELF file: no section-name table")
        names = raw[shstrndx]
        self.sections = [
            Section(self._str(names[4], names[5], r[0], "section"), r[1], r[2], r[4], r[5], r[6], r[7]) for r in raw
        ]
        self.by_name = {s.name: s for s in self.sections}
        self.symbols: list[Symbol] = []
        symtab = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if symtab is not None:
            if symtab.link >= len(self.sections) or self.sections[symtab.link].type == SHT_NOBITS:
                raise InputError(f"{label}: damaged ELF file: the symbol table names no string table")
            strtab = self.sections[symtab.link]
            n = symtab.size // 24
            self.budget.spend_records(n)
            start = base + symtab.offset
            for st_name, st_info, st_other, st_shndx, st_value, st_size in struct.iter_unpack(
                "<IBBHQQ", data[start : start + 24 * n]
            ):
                name = self._str(strtab.offset, strtab.size, st_name, "symbol")
                self.symbols.append(Symbol(name, st_info, st_other, st_shndx, st_value, st_size))

    def _str(self, table: int, table_size: int, index: int, what: str) -> str:
        """The NUL-terminated name at ``index`` of the string table at ``table`` (file offsets)."""
        key = (table, index)
        cached = self._names.get(key)
        if cached is not None:
            return cached
        if index >= table_size:
            raise InputError(
                f"{self.label}: damaged ELF file: a {what} name points past the end of its string table "
                f"(index {index:,}, table of {table_size:,} bytes)"
            )
        start = self.base + table + index
        stop = min(self.base + table + table_size, start + MAX_NAME_BYTES + 1)
        end = self.data.find(b"\0", start, stop)
        if end < 0:
            if stop - start > MAX_NAME_BYTES:
                raise InputError(
                    f"{self.label}: damaged ELF file: a {what} name at byte {start:,} is longer than "
                    f"{MAX_NAME_BYTES:,} bytes"
                )
            raise InputError(f"{self.label}: damaged ELF file: a {what} name runs past the end of its string table")
        self.budget.spend_name(end - start)
        name = self.data[start:end].decode("utf-8", "replace")
        self._names[key] = name
        return name

    def section_data(self, section: Section) -> bytes:
        if section.type == SHT_NOBITS:
            return b""
        start = self.base + section.offset
        return self.data[start : start + section.size]

    @property
    def machine_name(self) -> str:
        return machine_name(self.machine)


def machine_name(code: int) -> str:
    return "CUDA" if code == EM_CUDA else _MACHINES.get(code, f"machine {code}")
