"""Kernels in a Triton cache (``$TRITON_CACHE_DIR``, ``~/.triton/cache``; torch.compile's too).

Each compiled kernel is a folder named by a hash holding ``NAME.json`` (the metadata the
launcher uses), ``NAME.cubin`` and the intermediate files (``.ttir``, ``.ttgir``, ``.llir``,
``.ptx``); ``__grp__NAME.json`` lists the group. From the metadata (Triton 2.1 ... 3.x):
``name``, ``num_warps`` (the block is num_warps x 32 threads), ``shared`` (the dynamic shared
memory the launcher passes), ``target`` (``{"backend": "cuda", "arch": 90, "warp_size": 32}``
in 3.x), ``num_ctas``, ``maxnreg``. Registers and static shared memory come from the cubin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from .cubin import parse_cubin
from .elf import Elf
from .models import KernelInfo

MAX_JSON_BYTES = 10_000_000


def is_triton_metadata(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("name"), str) and "num_warps" in obj


def _load_json(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def _int(meta: dict[str, Any], key: str, label: str, default: int | None = None) -> int | None:
    value = meta.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{label}: Triton metadata field {key!r} is {value!r}, not a count")
    return value


def entry_kernels(meta_path: Path, meta: dict[str, Any]) -> list[KernelInfo]:
    """The kernel of one cache entry: its metadata file and the cubin beside it."""
    label = str(meta_path)
    name = meta["name"]
    cubin_path = meta_path.with_name(f"{name}.cubin")
    if not cubin_path.is_file():
        raise InputError(f"{label}: Triton metadata without its cubin ({cubin_path.name} is not beside it)")
    try:
        data = cubin_path.read_bytes()
    except OSError as e:
        raise InputError(f"{cubin_path}: cannot read: {e.strerror or e}") from None
    found = [k for k in parse_cubin(Elf(data, str(cubin_path))) if k.name == name]
    if not found:
        raise InputError(f"{cubin_path}: no kernel named {name!r} in the cubin its metadata names")
    k = found[0]
    warps = _int(meta, "num_warps", label)
    target = meta.get("target")
    warp_size = target.get("warp_size", 32) if isinstance(target, dict) else 32
    notes = list(k.notes)
    meta_arch = target.get("arch") if isinstance(target, dict) else None
    if isinstance(meta_arch, int) and k.arch is not None and meta_arch != k.arch:
        notes.append(f"the metadata targets arch {meta_arch}, the cubin is sm_{k.arch}; the cubin is used")
    ctas = _int(meta, "num_ctas", label, 1)
    if ctas is not None and ctas > 1:
        notes.append(
            f"num_ctas={ctas}: the kernel launches in clusters of {ctas} blocks, which the "
            "occupancy solver does not model"
        )
    maxnreg = _int(meta, "maxnreg", label)
    return [
        k.model_copy(
            update={
                "format": "triton",
                "threads": warps * int(warp_size) if warps else None,
                "threads_from": f"Triton num_warps={warps}",
                "dynamic_smem_bytes": _int(meta, "shared", label, 0),
                "max_registers": maxnreg if maxnreg is not None else k.max_registers,
                "notes": notes,
            }
        )
    ]


def parse_triton(path: Path) -> tuple[list[KernelInfo], list[str]]:
    """A metadata file, one cache entry's folder, or a whole cache folder."""
    if path.is_file():
        meta = _load_json(path)
        if not is_triton_metadata(meta):
            raise InputError(f"{path}: a JSON file, but not Triton kernel metadata (no 'name' and 'num_warps')")
        return entry_kernels(path, meta), []
    kernels: list[KernelInfo] = []
    notes: list[str] = []
    for meta_path in sorted(path.rglob("*.json")):
        if meta_path.name.startswith("__grp__"):
            continue
        meta = _load_json(meta_path)
        if not is_triton_metadata(meta):
            continue
        if not meta_path.with_name(f"{meta['name']}.cubin").is_file():
            notes.append(f"{meta_path}: no {meta['name']}.cubin beside it (not a CUDA entry?); skipped")
            continue
        kernels.extend(entry_kernels(meta_path, meta))
    if not kernels:
        raise InputError(f"{path}: a folder without Triton cache entries (NAME.json with NAME.cubin beside it)")
    return kernels, notes
