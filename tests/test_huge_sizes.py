"""The expected-time model costs O(1) or O(kernels) in the sizes: every op at the largest value each
of its integer options accepts answers (or refuses with one line) at once, in bounded memory.
(A causal attention at 2^32 tokens once built one list entry per 128 query rows: 1.7 GB, 6 s.)"""

from __future__ import annotations

import contextlib
import resource
import time
from typing import Any

import pytest

import roofcalc
from roofcalc.errors import RoofcalcError
from roofcalc.expected import FLASH_BLOCK_Q, _causal_block_scores
from roofcalc.opdefs import MAX_INT_PARAM, load_op, op_names


def _largest(op: str) -> list[tuple[str, int]]:
    d = load_op(op)
    out = []
    for name, p in d.params.items():
        if p.type == "int":
            out.append((name, int(p.max) if p.max is not None else MAX_INT_PARAM))
    return out


CASES = [(op, name, top) for op in op_names() for name, top in _largest(op)]
CASES += [("attention", "seq", 2**32), ("attention", "kv_seq", 2**40)]


@pytest.mark.parametrize(("op", "name", "value"), CASES, ids=[f"{o}-{n}-{v}" for o, n, v in CASES])
@pytest.mark.parametrize("causal", [False, True])
def test_largest_accepted_value_answers_at_once(op: str, name: str, value: int, causal: bool) -> None:
    params: dict[str, Any] = {name: value}
    if op in ("decode", "prefill"):
        params["model"] = "llama-3.2-1b"
    if op == "attention":
        params["causal"] = causal
    elif causal:
        return
    # the part's file and the op's once, at their default sizes: what is timed below is the answer
    # to this size, not the worker's first read of the card (its 7 MB choice map), which a loaded
    # machine can stretch past the ceiling on its own
    with contextlib.suppress(RoofcalcError):
        roofcalc.analyze(op, "h100", **{k: v for k, v in params.items() if k != name})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    try:
        r = roofcalc.analyze(op, "h100", **params)
    except RoofcalcError:
        pass  # a clear refusal is an answer too
    else:
        assert r.bound_s > 0
    assert time.perf_counter() - t0 < 2.0
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024, grown_kib


@pytest.mark.parametrize("mblocks", [0, 1, 2, 7, 64, 129])
@pytest.mark.parametrize("offset", [-1000, -128, -1, 0, 1, 127, 128, 5000])
@pytest.mark.parametrize("kv_seq", [1, 128, 300, 8192])
def test_causal_block_sum_is_the_sum_of_the_blocks(mblocks: int, offset: int, kv_seq: int) -> None:
    # hand version: block i of FLASH_BLOCK_Q query rows sees keys up to min(kv_seq, offset + (i+1)*B)
    blocks = [FLASH_BLOCK_Q * min(kv_seq, offset + (i + 1) * FLASH_BLOCK_Q) for i in range(mblocks)]
    assert _causal_block_scores(mblocks, offset, kv_seq) == (sum(blocks), max(blocks) if blocks else 0)


@pytest.mark.parametrize("bad", [0, -1, 1e-309, 1e-12, 1e308, 86_401.0, "x", [1], True])
def test_validate_refuses_nonsense_timings(tmp_path: Any, bad: Any) -> None:
    """Zero, negative, subnormal, absurdly small or large, and non-number times are refused with one
    line and exit 2, never averaged into a median of inf or 1e308."""
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from roofcalc.cli import cli

    src = Path(__file__).resolve().parent.parent / "validation" / "expected" / "h100" / "ops-rand33.json"
    doc = json.loads(src.read_text())
    doc["cases"] = doc["cases"][:3]
    doc["cases"][1]["median_s"] = bad
    f = tmp_path / "v.json"
    f.write_text(json.dumps(doc))
    res = CliRunner().invoke(cli, ["validate", str(f), "--hw", "h100"], env={"NO_COLOR": "1"})
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and len(res.stderr.strip().splitlines()) == 1 and str(f) in res.stderr
