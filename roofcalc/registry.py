"""One registry for every kind of data roofcalc ships, and one rule to find it.

Each kind has a folder at the top of the repository, installed inside the package:

    kind       folder      package              what one file holds
    hardware   hardware/   roofcalc.hwdata      one device
    op         ops/        roofcalc.opdata      one op definition
    model      models/     roofcalc.modeldata   a set of model presets (merged across files)
    impl       impls/      roofcalc.impldata    one named implementation of the LLM steps

The rule: every ``*.yaml`` file in a kind's folder is an item of that kind, named by its
stem. What the user types is either such a name or a path to a file of their own (it
contains a ``/`` or ends in ``.yaml``/``.yml``). This module only finds files; the models
and their validation live in hardware.py, opdefs.py and presets.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, TypeVar

Kind = Literal["hardware", "op", "model", "impl"]
T = TypeVar("T")

PACKAGES: dict[str, str] = {
    "hardware": "roofcalc.hwdata",
    "op": "roofcalc.opdata",
    "model": "roofcalc.modeldata",
    "impl": "roofcalc.impldata",
}
FOLDERS: dict[str, str] = {"hardware": "hardware", "op": "ops", "model": "models", "impl": "impls"}


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


# ------------------------------------------------------------------ validated once
#
# A built-in file is validated (pydantic) the first time it is loaded; the validated object is
# then kept in a cache folder, pickled, under a key made of the file's bytes and of everything
# that shapes the object: the sources of the modules that define and validate it, and the
# versions of roofcalc, pydantic and Python. The same bytes under the same code validate to
# the same object, so a command that finds its key skips YAML parsing and validation, and with
# them the building of pydantic's validators (deferred until a model is first validated), which
# is most of a short command's own start-up (benchmarks/startup.py). The cache is best-effort:
# a missing, unreadable, stale or corrupt entry is rebuilt; a folder that cannot be written is
# left alone. Only files shipped with roofcalc go through it; a user's own files are always
# validated. The folder is <cache root>/validated; ROOFCALC_CACHE moves the root (the probe
# keeps its compiled binaries under it too); set to an empty string, it turns this cache off.

# the modules whose code decides what a validated built-in object is
_SHAPING_MODULES = (
    "dtypes",
    "errors",
    "formula",
    "hardware",
    "opdefs",
    "presets",
    "registry",
    "specfile",
    "units",
    "impl/named",
    "expected/choice",  # a map's entries are checked and kept as its code says (check_block)
)


def cache_root() -> Any:
    """roofcalc's cache folder (a Path): $ROOFCALC_CACHE, else $XDG_CACHE_HOME/roofcalc, else
    ~/.cache/roofcalc; None when ROOFCALC_CACHE is set but empty, or there is no usable home."""
    import os
    from pathlib import Path

    env = os.environ.get("ROOFCALC_CACHE")
    if env is not None:
        return Path(env) if env.strip() else None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):  # the XDG rule: a relative setting is ignored
        return Path(xdg) / "roofcalc"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "roofcalc" if os.path.isabs(home) else None  # never a '~' folder here


def cache_dir() -> Any:
    """The folder of validated built-in files (a Path), or None when the cache is off."""
    root = cache_root()
    return root / "validated" if root is not None else None


@functools.cache
def _code_fingerprint() -> bytes:
    import hashlib
    import platform
    from pathlib import Path

    import pydantic

    from ._version import __version__

    h = hashlib.sha256(f"{__version__}|{pydantic.VERSION}|{platform.python_version()}".encode())
    here = Path(__file__).resolve().parent
    for name in _SHAPING_MODULES:
        h.update((here / f"{name}.py").read_bytes())
    return h.digest()


def load_builtin(kind: Kind, stem: str, build: Callable[[str], T], cls: type[T]) -> T:
    """``build(text)`` of a built-in file (parse and validate it), or the object an earlier
    ``build`` of the same bytes under the same code returned (see above)."""
    import hashlib
    import pickle

    text = read_builtin(kind, stem)
    folder = cache_dir()
    if folder is None:
        return build(text)
    try:
        key = hashlib.sha256(_code_fingerprint() + text.encode("utf-8")).hexdigest()[:32]
    except OSError:  # a module's source not readable (a zip install): no cache
        return build(text)
    entry = folder / f"{kind}-{stem}-{key}.pickle"
    try:
        obj = pickle.loads(entry.read_bytes())
        if isinstance(obj, cls):
            return obj
    except Exception:
        pass
    obj = build(text)
    try:
        from .errors import InputError
        from .output import replace_file

        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        replace_file(entry, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    except (OSError, InputError):  # a folder that cannot be written: validate every time
        pass
    return obj


__all__ = [
    "FOLDERS",
    "PACKAGES",
    "Kind",
    "builtin_files",
    "builtin_label",
    "builtin_names",
    "cache_dir",
    "cache_root",
    "is_path",
    "load_builtin",
    "read_builtin",
]
