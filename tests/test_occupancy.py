"""Occupancy: worked examples from the SM seed, properties, CLI and bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofcalc import occupancy
from roofcalc.errors import InputError
from roofcalc.hardware import load_hardware
from roofcalc.occupancy_solver import blocks_per_sm, sweep_block_sizes

from .conftest import run

H100 = load_hardware("h100")


# --- seed 003 (the streaming multiprocessor), worked examples


def test_seed003_32_registers_is_the_most_for_2048_threads() -> None:
    # "65,536 / 2,048 = 32 registers per thread if the SM is completely full ... ask for 33 and
    # you can no longer fit 2,048 threads"
    full = occupancy("h100", threads=256, regs=32)
    assert full.threads_per_sm == 2048 and full.occupancy == 1.0
    over = occupancy("h100", threads=256, regs=33)
    assert over.threads_per_sm is not None and over.threads_per_sm < 2048
    assert "registers" in over.limiters


def test_seed003_96k_smem_leaves_two_blocks() -> None:
    # "Suppose your block asks for 96 KiB of shared memory. The SM has 228 KiB. 228 / 96 = 2.375,
    # so at most two blocks fit -- no matter how few registers you use"
    r = occupancy("h100", threads=32, regs=16, smem=96 * 1024)
    assert r.blocks_per_sm == 2 and r.limiters == ["shared_memory"]
    assert r.smem_config_bytes == 228 * 1024


def test_seed003_1024_thread_block_is_half_the_warp_slots() -> None:
    # "A block can be at most 1,024 threads, i.e. 32 warps. So even one maximal block only
    # half-fills the SM's 64 warp slots"
    r = occupancy("h100", threads=1024, regs=16)
    assert r.warps_per_block == 32 and r.max_warps_per_sm == 64
    assert r.limits["warps"] == 2


def test_seed003_96_threads_leaves_a_scheduler_idle() -> None:
    r = occupancy("h100", threads=96, regs=32)
    assert r.warps_per_block == 3
    assert any("sub-partitions" in n for n in r.notes)


# --- hand-derived allocation details


def test_allocation_rounding() -> None:
    # 37 regs x 32 lanes = 1184 -> rounded to 1280 per warp (unit 256) = 40 per thread
    r = occupancy("h100", threads=100, regs=37, smem=1000, static_smem=10)
    assert r.allocated_regs_per_warp == 1280 and r.allocated_regs_per_thread == 40
    assert r.warps_per_block == 4 and r.allocated_regs_per_block == 5120
    # 1000 + 10 + 1024 reserved = 2034 -> 2048 (unit 128)
    assert r.allocated_smem_per_block == 2048
    assert any("not a multiple of the warp size" in n for n in r.notes)


def test_carveout_rounds_up_and_never_below_one_block() -> None:
    # A100, 50% of 164 KiB = 83,968 B -> the 100 KiB configuration
    r = occupancy("a100", threads=128, regs=32, smem=20 * 1024, carveout=50)
    assert r.smem_config_bytes == 100 * 1024
    # carveout 0 would give no shared memory; one 21 KiB block needs the 32 KiB configuration
    r0 = occupancy("a100", threads=128, regs=32, smem=20 * 1024, carveout=0)
    assert r0.smem_config_bytes == 32 * 1024 and r0.blocks_per_sm == 1


def test_cannot_launch_says_why() -> None:
    r = occupancy("h100", threads=1024, regs=255)
    assert not r.launchable and r.blocks_per_sm == 0
    assert r.reason is not None and "262,144 registers" in r.reason


def test_next_block_hints_are_exact() -> None:
    r = occupancy("h100", threads=256, regs=64, smem=96 * 1024)
    assert r.blocks_per_sm == 2 and r.next_block is not None
    s = r.next_block.smem_at_most
    assert s is not None
    assert occupancy("h100", threads=256, regs=64, smem=s).blocks_per_sm == 3
    assert occupancy("h100", threads=256, regs=64, smem=s + 1).blocks_per_sm == 2


def test_waves() -> None:
    # 132 SMs x 2 blocks = 264 per wave; 1000 blocks = 3 full waves + 208
    r = occupancy("h100", threads=256, regs=64, smem=96 * 1024, grid=1000)
    assert r.waves is not None
    assert (r.waves.blocks_per_wave, r.waves.full_waves, r.waves.tail_blocks) == (264, 3, 208)
    assert r.waves.tail_efficiency_loss == pytest.approx(1 - 1000 / (4 * 264))


def test_sweep_chooses_like_the_runtime() -> None:
    # 64 regs: 32 warps per SM at most (regs), so 1024, 512, 256... all give 1024 threads;
    # the runtime tries the largest first and keeps it on ties.
    results, best = sweep_block_sizes("h100", regs=64)
    assert best == 1024
    assert [r.threads for r in results] == list(range(32, 1025, 32))


def test_apple_register_limit_is_unknown() -> None:
    r = occupancy("m3-max", threads=1024, smem=32 * 1024)
    assert r.launchable and r.blocks_per_sm is None and r.occupancy is None
    assert "Dynamic Caching" in r.limit_notes["registers"]
    with pytest.raises(InputError, match="over m3-max's opt-in limit of 32 KiB"):
        occupancy("m3-max", threads=64, smem=20000, static_smem=20000)


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"threads": 1025, "regs": 32}, "--threads must be 1..1024"),
        ({"threads": 0, "regs": 32}, "--threads must be 1..1024"),
        ({"threads": 128, "regs": 256}, "--regs must be 1..255"),
        ({"threads": 128, "regs": 0}, "--regs must be 1..255"),
        ({"threads": 128, "regs": 32, "smem": 232449}, "over h100's opt-in limit"),
        ({"threads": 128, "regs": 32, "carveout": 101}, "--carveout must be -1"),
        ({"threads": 128, "regs": 32, "carveout": -2}, "--carveout must be -1"),
        ({"threads": 128}, "--regs is required"),
    ],
)
def test_bad_input(kwargs: dict[str, int], text: str) -> None:
    with pytest.raises(InputError) as ei:
        occupancy("h100", **kwargs)
    assert text in str(ei.value)


# --- properties

CONFIG = st.tuples(st.integers(1, 1024), st.integers(1, 255), st.integers(0, 232448), st.integers(-1, 100))


@settings(max_examples=120, deadline=None)
@given(CONFIG)
def test_never_more_than_any_single_limit(cfg: tuple[int, int, int, int]) -> None:
    threads, regs, smem, carve = cfg
    r = occupancy(H100, threads=threads, regs=regs, smem=smem, carveout=carve)
    assert r.blocks_per_sm is not None and r.warps_per_sm is not None
    for value in r.limits.values():
        if value is not None:
            assert r.blocks_per_sm <= value
    assert r.warps_per_sm <= 64
    assert r.limiters or r.blocks_per_sm == 0


@settings(max_examples=120, deadline=None)
@given(CONFIG, st.integers(1, 254), st.integers(0, 232447))
def test_monotone_in_registers_and_smem(cfg: tuple[int, int, int, int], r2: int, s2: int) -> None:
    threads, regs, smem, carve = cfg
    base, _ = blocks_per_sm(H100, threads, regs, smem, 0, carve)
    lo_r, hi_r = sorted((regs, r2))
    assert (
        blocks_per_sm(H100, threads, hi_r, smem, 0, carve)[0] <= blocks_per_sm(H100, threads, lo_r, smem, 0, carve)[0]
    )
    lo_s, hi_s = sorted((smem, s2))
    assert (
        blocks_per_sm(H100, threads, regs, hi_s, 0, carve)[0] <= blocks_per_sm(H100, threads, regs, lo_s, 0, carve)[0]
    )
    assert base >= 0


# --- CLI


def test_cli_one_config_json() -> None:
    res = run("occupancy", "--hw", "b200", "--threads", "384", "--regs", "168", "--grid", "1024", "--json")
    assert res.exit_code == 0
    d = json.loads(res.stdout)
    for key in (
        "threads",
        "regs",
        "smem",
        "blocks_per_sm",
        "warps_per_sm",
        "occupancy",
        "limiters",
        "limits",
        "allocated_regs_per_block",
        "allocated_smem_per_block",
        "smem_config_bytes",
        "version",
    ):
        assert key in d
    # 168 regs -> 5376 per warp; 16384 // 5376 = 3 warps per sub-partition = 12 per SM; 12 warps per block
    assert d["blocks_per_sm"] == 1 and d["limiters"] == ["registers"]
    assert d["waves"]["blocks_per_wave"] == 148


def test_cli_table_over_block_sizes() -> None:
    res = run("occupancy", "--regs", "64", "--smem", "96k")
    assert res.exit_code == 0 and "cudaOccupancyMaxPotentialBlockSize" in res.stdout
    rows = json.loads(run("occupancy", "--regs", "64", "--smem", "96k", "--json").stdout)
    assert len(rows) == 32 and sum(r["chosen"] for r in rows) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--hw", "h100", "--threads", "256", "--regs", "64", "--smem", "96k"],
        [
            "--hw",
            "a100",
            "--threads",
            "128",
            "--regs",
            "128",
            "--smem",
            "48k",
            "--static-smem",
            "2k",
            "--carveout",
            "50",
        ],
        ["--hw", "m3-max", "--threads", "1024", "--smem", "32k"],
        ["--threads", "1024", "--regs", "255"],
    ],
)
def test_cli_examples(args: list[str]) -> None:
    res = run("occupancy", *args)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("smem", ["96k", "96K", "96KiB", "98.304kB", "98304", "0x18000"])
def test_cli_size_spellings(smem: str) -> None:
    d = json.loads(run("occupancy", "--threads", "256", "--regs", "64", "--smem", smem, "--json").stdout)
    assert d["smem"] == 98304


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--threads", "2048", "--regs", "32"], "--threads must be 1..1024"),
        (["--threads", "128", "--regs", "300"], "--regs must be 1..255"),
        (["--threads", "128", "--regs", "32", "--smem", "300k"], "opt-in limit"),
        (["--threads", "128", "--regs", "32", "--smem", "96q"], "unknown size unit"),
        (["--threads", "128", "--regs", "32", "--carveout", "150"], "--carveout must be"),
    ],
)
def test_cli_bad_input_exit_2(args: list[str], text: str) -> None:
    res = run("occupancy", *args)
    assert res.exit_code == 2 and text in res.output and "Traceback" not in res.output


def test_cli_cannot_launch_json() -> None:
    d = json.loads(run("occupancy", "--threads", "1024", "--regs", "255", "--json").stdout)
    assert d["launchable"] is False and "registers" in d["reason"]


def test_a_changed_result_does_not_change_the_next_answer() -> None:
    # the solver remembers its arithmetic per hardware object: a caller's result is its own copy
    first = occupancy("h100", threads=256, regs=64)
    first.limits["registers"] = -1
    again = occupancy("h100", threads=256, regs=64)
    # 64 registers x 256 threads: 65536 / (64 x 32) = 32 warps, 4 blocks of 8 warps
    assert again.limits["registers"] == 4 and again.blocks_per_sm == 4
