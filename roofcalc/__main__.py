"""The ``roofcalc`` console script and ``python -m roofcalc``.

Start-up builds a few hundred thousand objects that live until the process ends: modules,
click commands, and the validators pydantic generates for each model class. The cyclic garbage
collector finds nothing to free among them, yet it walks them repeatedly while they are being
built, and the interpreter's last collection at exit walks them all once more (together about a
fifth of a short command's run time on the machine where it was measured; see
benchmarks/startup.py). So: build them with the collector paused, move what exists into the
permanent generation (``gc.freeze``), collect normally while the command runs, and freeze again
before exit.
"""

from __future__ import annotations

import gc


def main() -> None:
    gc.disable()
    try:
        from .cli import cli
    finally:
        gc.freeze()
        gc.enable()
    try:
        cli(prog_name="roofcalc")
    finally:
        gc.freeze()


if __name__ == "__main__":
    main()
