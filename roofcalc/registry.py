"""One registry for every kind of data roofcalc ships, and one rule to find it.

Each kind has a folder at the top of the repository, installed inside the package:

    kind       folder      package              what one file holds
    hardware   hardware/   roofcalc.hwdata      one device
    op         ops/        roofcalc.opdata      one op definition
    model      models/     roofcalc.modeldata   a set of model presets (merged across files)

The rule: every ``*.yaml`` file in a kind's folder is an item of that kind, named by its
stem. What the user types is either such a name or a path to a file of their own (it
contains a ``/`` or ends in ``.yaml``/``.yml``). This module only finds files; the models
and their validation live in hardware.py, opdefs.py and presets.py.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

Kind = Literal["hardware", "op", "model"]

PACKAGES: dict[str, str] = {"hardware": "roofcalc.hwdata", "op": "roofcalc.opdata", "model": "roofcalc.modeldata"}
FOLDERS: dict[str, str] = {"hardware": "hardware", "op": "ops", "model": "models"}


def is_path(text: str) -> bool:
    """A user's own file rather than a registry name."""
    return text.endswith((".yaml", ".yml", ".json")) or "/" in text or "\\" in text


@functools.cache
def builtin_files(kind: Kind) -> dict[str, Any]:
    """The built-in files of one kind: stem -> importlib.resources Traversable, sorted by stem."""
    from importlib.resources import files
    from pathlib import Path

    root: Any
    try:
        root = files(PACKAGES[kind])
    except ModuleNotFoundError:
        # a source checkout on PYTHONPATH, not installed: the data packages are the folders
        # beside the package (the GPU machine runs the probe this way)
        root = Path(__file__).resolve().parent.parent / FOLDERS[kind]
    found = {p.name.rsplit(".", 1)[0]: p for p in root.iterdir() if p.name.endswith(".yaml") and p.is_file()}
    return dict(sorted(found.items()))


def builtin_names(kind: Kind) -> list[str]:
    return list(builtin_files(kind))


def builtin_label(kind: Kind, stem: str) -> str:
    """How messages name a built-in file: ``ops/gemm.yaml``."""
    return f"{FOLDERS[kind]}/{stem}.yaml"


def read_builtin(kind: Kind, stem: str) -> str:
    return str(builtin_files(kind)[stem].read_text(encoding="utf-8"))


__all__ = ["FOLDERS", "PACKAGES", "Kind", "builtin_files", "builtin_label", "builtin_names", "is_path", "read_builtin"]
