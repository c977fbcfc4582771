"""Kernels in a Triton cache (``$TRITON_CACHE_DIR``, ``~/.triton/cache``; torch.compile's too).

Each compiled kernel is a folder named by a hash holding ``NAME.json`` (the metadata the
launcher uses), ``NAME.cubin`` and the intermediate files (``.ttir``, ``.ttgir``, ``.llir``,
``.ptx``); ``__grp__NAME.json`` lists the group. From the metadata (Triton 2.1 ... 3.x):
``name``, ``num_warps`` (the block is num_warps x 32 threads), ``shared`` (the dynamic shared
memory the launcher passes), ``target`` (``{"backend": "cuda", "arch": 90, "warp_size": 32}``
in 3.x), ``num_ctas``, ``maxnreg``. Registers and static shared memory come from the cubin.


Nothing in a cache folder is trusted. Metadata files are read only if they are regular files
of at most ``MAX_JSON_BYTES``, with the project's bounded JSON parser
(:func:`roofcalc.specfile.parse_json`: nesting, digits, finite numbers); every field read is
type-checked (``num_warps: "x"``, ``shared: -1`` or a list where a count belongs is refused,
naming the file and the field); the kernel's name must be a plain file name (it names the cubin
beside it). A folder is walked at most ``MAX_WALK_DEPTH`` levels deep and ``MAX_WALK_ENTRIES``
entries, symlinked folders are not followed, FIFOs and devices are never opened, and all the
cubins read together are at most ``MAX_BINARY_BYTES``. JSON files in a folder that cannot be
read or are not Triton metadata are skipped (a note counts them); metadata that is malformed
refuses the whole folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..specfile import parse_json
from ..units import clip
from .cubin import parse_cubin
from .elf import Elf
from .limits import (
    MAX_BINARY_BYTES,
    MAX_JSON_BYTES,
    MAX_KERNEL_BYTES,
    MAX_KERNELS,
    MAX_REGISTERS,
    MAX_THREADS,
    MAX_WALK_DEPTH,
    MAX_WALK_ENTRIES,
    Budget,
    LimitError,
    check_kernel_count,
    file_kind,
    read_regular,
    short,
    shown,
)
from .models import KernelInfo

_MAX_NAME_CHARS = 200  # NAME.cubin must be a file name (255 bytes at most on Linux)


def is_triton_metadata(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("name"), str) and "num_warps" in obj


def _load_json(path: Path) -> Any:
    """The parsed JSON of a metadata file; InputError if it is not a readable, bounded JSON file."""
    data = read_regular(path, MAX_JSON_BYTES, "Triton metadata file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{short(str(path))}: not UTF-8 text") from None
    return parse_json(text, short(str(path)))


def _int(meta: dict[str, Any], key: str, label: str, least: int, most: int, default: int | None = None) -> int | None:
    value = meta.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        text = clip(repr(value), 40)
        raise InputError(f"{label}: Triton metadata field {key!r} is {text}, not a count in {least}..{most:,}")
    return value


def _name(meta: dict[str, Any], label: str) -> str:
    name = meta.get("name")
    if (
        not isinstance(name, str)
        or not name
        or len(name) > _MAX_NAME_CHARS
        or name in (".", "..")
        or not name.isprintable()
        or any(c in name for c in "/\\\0")
    ):
        raise InputError(
            f"{label}: Triton metadata field 'name' is {clip(repr(name), 60)}, not a kernel name "
            f"(NAME.cubin must be a file beside it)"
        )
    return name


def _present(path: Path) -> bool:
    """Whether anything (a file, a folder, a link, even a broken one) is at ``path``; where that
    cannot be told, True, so that reading it says what is wrong."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):
        return True
    return True


def entry_kernels(meta_path: Path, meta: dict[str, Any], budget: Budget | None = None) -> list[KernelInfo]:
    """The kernel of one cache entry: its metadata file and the cubin beside it."""
    label = short(str(meta_path))
    budget = budget if budget is not None else Budget(str(meta_path))
    name = _name(meta, label)
    warps = _int(meta, "num_warps", label, 1, MAX_THREADS)
    if warps is None:
        raise InputError(f"{label}: Triton metadata field 'num_warps' is null, not a count")
    target = meta.get("target")
    warp_size = (_int(target, "warp_size", f"{label}: target", 1, 1024) if isinstance(target, dict) else None) or 32
    meta_arch = target.get("arch") if isinstance(target, dict) else None
    ctas = _int(meta, "num_ctas", label, 1, MAX_THREADS, 1)
    maxnreg = _int(meta, "maxnreg", label, 1, MAX_REGISTERS)
    shared = _int(meta, "shared", label, 0, MAX_KERNEL_BYTES, 0)
    cubin_path = meta_path.with_name(f"{name}.cubin")
    if not _present(cubin_path):
        raise InputError(f"{label}: Triton metadata without its cubin ({shown(cubin_path.name)} is not beside it)")
    data = read_regular(cubin_path, MAX_BINARY_BYTES, "cubin")
    budget.spend_file(len(data), str(cubin_path))
    found = [k for k in parse_cubin(Elf(data, short(str(cubin_path)), budget=budget)) if k.name == name]
    if not found:
        raise InputError(
            f"{short(str(cubin_path))}: no kernel named {clip(name, 80)!r} in the cubin its metadata names"
        )
    k = found[0]
    notes = list(k.notes)
    if isinstance(meta_arch, int) and not isinstance(meta_arch, bool) and k.arch is not None and meta_arch != k.arch:
        notes.append(f"the metadata targets arch {clip(meta_arch, 20)}, the cubin is sm_{k.arch}; the cubin is used")
    if ctas is not None and ctas > 1:
        notes.append(
            f"num_ctas={ctas}: the kernel launches in clusters of {ctas} blocks, which the "
            "occupancy solver does not model"
        )
    return [
        k.model_copy(
            update={
                "format": "triton",
                "threads": warps * warp_size,
                "threads_from": f"Triton num_warps={warps}",
                "dynamic_smem_bytes": shared,
                "max_registers": maxnreg if maxnreg is not None else k.max_registers,
                "notes": notes,
            }
        )
    ]


def _walk(root: Path) -> tuple[list[Path], list[str]]:
    """The NAME.json files under ``root`` (not __grp__ ones), sorted, and the folders that could
    not be read. Bounded: depth, entries; symlinked folders are not followed."""
    label = short(str(root))
    found: list[Path] = []
    unreadable: list[str] = []
    entries = 0
    stack: list[tuple[str, int]] = [(str(root), 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    entries += 1
                    if entries > MAX_WALK_ENTRIES:
                        raise LimitError(
                            f"{label}: more than {MAX_WALK_ENTRIES:,} files and folders in it; point roofcalc at "
                            "the Triton cache folder itself (or one entry of it)"
                        )
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if is_dir:
                        if depth + 1 > MAX_WALK_DEPTH:
                            raise LimitError(
                                f"{label}: folders nested more than {MAX_WALK_DEPTH} levels deep "
                                f"({short(entry.path)}); point roofcalc at the Triton cache folder itself"
                            )
                        stack.append((entry.path, depth + 1))
                    elif entry.name.endswith(".json") and not entry.name.startswith("__grp__"):
                        found.append(Path(entry.path))
                        if len(found) > MAX_KERNELS:
                            raise LimitError(
                                f"{label}: more than {MAX_KERNELS:,} JSON files in it; roofcalc reads at most "
                                "that many Triton entries from one folder"
                            )
        except OSError as e:
            if depth == 0:
                raise InputError(f"{label}: cannot read the folder: {e.strerror or e}") from None
            unreadable.append(f"{short(folder)}: {e.strerror or e}")
    return sorted(found), unreadable


def parse_triton(path: Path, text: str | None = None) -> tuple[list[KernelInfo], list[str]]:
    """A metadata file (``text``: its content, already read), one cache entry's folder, or a
    whole cache folder."""
    if text is not None or file_kind(path)[0] != "dir":
        label = short(str(path))
        meta = parse_json(text, label) if text is not None else _load_json(path)
        if not is_triton_metadata(meta):
            raise InputError(f"{label}: a JSON file, but not Triton kernel metadata (no 'name' and 'num_warps')")
        return entry_kernels(path, meta), []
    budget = Budget(str(path))
    kernels: list[KernelInfo] = []
    notes: list[str] = []
    paths, unreadable = _walk(path)
    skipped: list[str] = list(unreadable)
    no_cubin: list[str] = []
    for meta_path in paths:
        try:
            meta = _load_json(meta_path)
        except InputError as e:  # another tool's JSON, a special file, a damaged file: not an entry
            skipped.append(str(e))
            continue
        if not is_triton_metadata(meta):
            continue
        name = _name(meta, short(str(meta_path)))
        cubin = meta_path.with_name(f"{name}.cubin")
        if not _present(cubin):
            no_cubin.append(f"{short(str(meta_path))}: no {shown(name)}.cubin beside it")
            continue
        kernels.extend(entry_kernels(meta_path, meta, budget))
        check_kernel_count(len(kernels), str(path))
    if no_cubin:
        more = f" (and {len(no_cubin) - 1:,} more)" if len(no_cubin) > 1 else ""
        notes.append(f"{no_cubin[0]} (not a CUDA entry?); skipped{more}")
    if skipped:
        notes.append(
            f"{len(skipped)} file(s) or folder(s) skipped, unreadable or not JSON (the first: {clip(skipped[0], 200)})"
        )
    if not kernels:
        reasons = no_cubin + skipped
        why = f" ({len(reasons)} skipped; the first: {clip(reasons[0], 160)})" if reasons else ""
        raise InputError(
            f"{short(str(path))}: a folder without Triton cache entries (NAME.json with NAME.cubin beside it){why}"
        )
    return kernels, notes
