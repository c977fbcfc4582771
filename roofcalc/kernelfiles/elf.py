"""A small reader of 64-bit little-endian ELF files: the header, section headers and symbols.

CUDA cubins need nothing more (no relocations, no DWARF); a reader of our own keeps the
package free of a binary-format dependency and turns every malformed offset into one
readable line instead of an exception from deep inside a library.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import InputError

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
    """Parses eagerly and checks every offset against the data; raises InputError on damage."""

    def __init__(self, data: bytes, label: str, base: int = 0) -> None:
        self.data = data
        self.label = label
        self.base = base
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
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, base + shoff + i * shentsize) for i in range(shnum)]
        for _, typ, _, _, off, length, *_ in raw:
            if typ != SHT_NOBITS and off + length > size:
                raise InputError(
                    f"{label}: truncated ELF file: a section ends at byte {off + length:,}, the file has {size:,}"
                )
        if shstrndx >= shnum:
            raise InputError(f"{label}: damaged ELF file: no section-name table")
        names_off = raw[shstrndx][4]
        self.sections = [Section(self._str(names_off, r[0]), r[1], r[2], r[4], r[5], r[6], r[7]) for r in raw]
        self.by_name = {s.name: s for s in self.sections}
        self.symbols: list[Symbol] = []
        symtab = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if symtab is not None and symtab.link < len(self.sections):
            str_off = self.sections[symtab.link].offset
            for i in range(symtab.size // 24):
                st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from(
                    "<IBBHQQ", data, base + symtab.offset + 24 * i
                )
                self.symbols.append(Symbol(self._str(str_off, st_name), st_info, st_other, st_shndx, st_value, st_size))

    def _str(self, table: int, index: int) -> str:
        start = self.base + table + index
        end = self.data.find(b"\0", start)
        if start >= len(self.data) or end < 0:
            raise InputError(f"{self.label}: damaged ELF file: a name points outside the file")
        return self.data[start:end].decode("utf-8", "replace")

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
