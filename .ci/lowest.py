"""Print a pip constraints file that pins every dependency of roofcalc (runtime and the test extra) to
the lowest version its lower bound in pyproject.toml allows: `name>=X` becomes `name==X`. Exact pins
(`name==X`) are kept; a dependency with no lower bound is left to pip. Used by .ci/run."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
project = pyproject["project"]
requirements = [*project["dependencies"], *project["optional-dependencies"]["test"]]
for req in requirements:
    m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)\s*(>=|==)\s*([0-9][0-9A-Za-z.]*)(?:\s*,.*)?", req.strip())
    if m is None:
        print(f"# {req}: no lower bound, left to pip", file=sys.stderr)
        continue
    name = re.sub(r"\[.*\]", "", m.group(1))
    print(f"{name}=={m.group(3)}")
