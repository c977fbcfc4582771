"""Op definitions: pydantic models of ``ops/*.yaml`` and their loading.

An op file declares its parameters (with types, defaults, help and units), named
intermediate terms, a FLOP formula, byte terms (summed for the total and listed in
the breakdown), optional checks, informational values and warnings. Formulas are
parsed and checked against the declared names when the file is loaded.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from .dtypes import DTYPES
from .errors import InputError, SpecError, suggest
from .formula import Formula, FormulaError
from .specfile import parse_yaml, read_text, validate

# Names a formula may use besides the op's own parameters and terms. They are
# bound from the hardware at analysis time.
# gemv_plane: 1 where the card's measured choice map holds cuBLAS's one-column GEMV kernels (its
# column plane: expected.gemm_choice_map), else 0
HARDWARE_NAMES = ("smem_per_sm_bytes", "l2_bytes", "sm_count", "gemv_plane")

MAX_INT_PARAM = 2**63 - 1  # sizes beyond int64 are absurd for any real tensor


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Param(_Strict):
    type: Literal["int", "float", "bool", "choice", "dtype"]
    help: str
    default: int | float | bool | str | None = None
    default_from: str | None = None
    units: str | None = None
    choices: list[str] | None = None
    min: int | float | None = None
    max: int | float | None = None
    # optional: no default, and leaving it out means "no such limit" (None); only checks
    # that declare it under `needs` read it
    optional: bool = False

    @model_validator(mode="after")
    def _check(self) -> Param:
        if self.optional and (self.default is not None or self.default_from is not None):
            raise ValueError("an optional parameter takes no default")
        if self.type == "choice" and not self.choices:
            raise ValueError("a choice parameter needs 'choices'")
        if self.type == "dtype" and self.default is not None and self.default not in DTYPES:
            raise ValueError(f"default dtype {self.default!r} is not one of {', '.join(DTYPES)}")
        if self.type == "choice" and self.default is not None and self.default not in (self.choices or []):
            raise ValueError(f"default {self.default!r} is not among the choices")
        if (
            self.type == "int"
            and self.default is not None
            and (isinstance(self.default, bool) or not isinstance(self.default, int))
        ):
            raise ValueError(f"default {self.default!r} of an int parameter must be an integer")
        if self.type == "bool" and self.default is not None and not isinstance(self.default, bool):
            raise ValueError("default of a bool parameter must be true or false")
        return self


class ByteTerm(_Strict):
    expr: str | int
    help: str


class Check(_Strict):
    expr: str
    # a template: {name} stands for a parameter (printed as the name, or as --name by the CLI)
    message: str
    # optional parameters the check reads: it is skipped when one of them is not given
    needs: list[str] = []


class Warn(_Strict):
    when: str
    message: str


class Info(_Strict):
    expr: str | int
    help: str
    when: str | None = None


class BreakdownRow(_Strict):
    flops: str | int
    bytes: str | int
    help: str


# the formula fields of a kernel: counts (rounded up to whole numbers), amounts, and a flag
KERNEL_COUNTS = (
    "grid",
    "threads",
    "regs",
    "smem",
    "passes",
    "inflight_bytes",
    "repeat",
    "m",
    "n",
    "k",
    "batch",
    "heads",
    "kv_heads",
    "seq",
    "kv_seq",
    "head_dim",
    "ranks",
    "warps",
)
KERNEL_AMOUNTS = (
    "dram_bytes",
    "write_bytes",
    "sfu_ops",
    "instructions",
    "reread_bytes",
    "footprint_bytes",
    "prior_bytes",
    "flops",
)
KERNEL_FORMULAS = (*KERNEL_COUNTS, *KERNEL_AMOUNTS, "causal", "c_read")


MAX_KERNELS = 1000


class KernelDef(_Strict):
    """One kernel the usual implementation launches; figures are formulas over the op's names.

    model: stream (memory/elementwise/reduction kernels: grid, block, bytes, FLOPs), gemm
    (a library GEMM: m, n, k, batch; tiles are chosen by the engine), flash
    (FlashAttention-2 forward: batch, heads, seq, kv_seq, head_dim, causal), cudnn_flash (SDPA's
    cuDNN flash forward on SM90 cards, the same fields; FlashAttention-2 elsewhere), reduce
    (cublasLt's splitKreduce: grid blocks, each thread summing ``passes`` slices one after
    another) or allreduce / allgather (NCCL collectives).
    """

    name: str
    help: str
    model: Literal["stream", "gemm", "flash", "cudnn_flash", "reduce", "allreduce", "allgather"] = "stream"
    part: str | None = None  # the breakdown row (layer kind) it belongs to
    when: str | None = None
    grid: str | int = 1
    threads: str | int = 256
    regs: str | int = 32
    smem: str | int = 0
    dram_bytes: str | int = 0
    # the part of dram_bytes that is written (streams that write run at the copy bandwidth)
    write_bytes: str | int = 0
    # special-function operations (exp, rsqrt, reciprocal) on the SFU
    sfu_ops: str | int = 0
    # warp instructions executed (issue slots), as measured with Nsight Compute
    instructions: str | int = 0
    # for kernels that give each warp its own serial piece of work (a warp per row): how many
    # such warps; each then issues its share of the instructions one dependent step at a time
    warps: str | int = 0
    reread_bytes: str | int = 0
    footprint_bytes: str | int = 0
    # the part of its reads (dram_bytes; a GEMM's operands) that the kernel before it has just
    # written: served by the L2 when that tensor fits the L2 share re-reads can count on
    prior_bytes: str | int = 0
    flops: str | int = 0
    pipe: Literal["cuda", "tensor", "mma"] = "cuda"
    # each thread does its items one after another (offsets, load, store, next), as PyTorch's
    # non-vectorized elementwise loop does: its issue time adds to its memory time
    in_order: bool = False
    # a GEMM as F.linear runs it (x times a weight stored n x k), as the LLM ops' projections do
    linear: bool = False
    # a GEMM whose second operand is used transposed (q @ k.transpose(-2, -1)): cuBLAS picks its
    # FP32 kernels otherwise than for a @ b, where the gemmSN and serial split-K maps were measured
    transposed: bool = False
    # who issues it from Python, a formula giving "aten" (an eager PyTorch op) or "inductor"
    # (the generated code of a torch.compile'd function); default: the op's launcher
    launcher: str | None = None
    # issued after every layer's kernels (the logits and what reads them): in a step issued from
    # Python the GPU runs it only after the host's last issue, so its time adds to the host's
    closes_step: bool = False
    passes: str | int = 1
    # bytes each thread keeps in flight (16: one 16-byte vector load)
    inflight_bytes: str | int = 16
    # how many times the kernel runs (e.g. "layers"); 0 leaves it out
    repeat: str | int = 1
    m: str | int = 0
    n: str | int = 0
    k: str | int = 0
    batch: str | int = 1
    heads: str | int = 0
    kv_heads: str | int = 0
    seq: str | int = 0
    kv_seq: str | int = 0
    head_dim: str | int = 0
    causal: str | int = 0
    # a GEMM that also reads its output C (beta != 0), a formula
    c_read: str | int = 0
    ranks: str | int = 1

    @model_validator(mode="after")
    def _linear_is_a_gemm(self) -> KernelDef:
        for key in ("linear", "transposed"):
            if getattr(self, key) and self.model != "gemm":
                raise ValueError(f"{self.name}: {key} applies to a GEMM (model: gemm), not model: {self.model}")
        return self


class Presets(_Strict):
    """The op takes its dimensions from the model presets (models/*.yaml) through this option."""

    option: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    help: str


class OpDef(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    summary: str
    description: str | None = None
    example: str
    dtype_default: str = "bf16"
    params: dict[str, Param] = Field(min_length=1)
    terms: dict[str, str | int] = {}
    flops: str | int
    bytes: dict[str, ByteTerm] = Field(min_length=1)
    checks: list[Check] = []
    info: dict[str, Info] = {}
    warnings: list[Warn] = []
    launches: str | int = 1
    presets: Presets | None = None
    notes: list[str] = []
    # optional model-level pieces (decode, prefill)
    tokens: str | int | None = None
    memory: dict[str, ByteTerm] = {}
    interconnect: ByteTerm | None = None
    breakdown: dict[str, BreakdownRow] = {}
    crossover: str | None = None
    gpus_param: str | None = None
    time_label: str | None = None  # what the bound time means for this op, e.g. "time to first token"
    # the kernels of the usual implementation, for the expected time (see roofcalc/expected/); at
    # most MAX_KERNELS (an LLM step declares about 30: a file of 50,000 took a minute to read)
    kernels: list[KernelDef] = Field(default=[], max_length=MAX_KERNELS)
    # how the kernels are launched (a formula giving event, stream, graph or eager); default:
    # one op timed alone between CUDA events
    launch: str | None = None
    # who issues the kernels from Python by default (a formula giving "aten" or "inductor"), and
    # how many calls into torch.compile'd functions the host makes (eager launch: host costs)
    launcher: str | None = None
    host_entries: str | int = 0

    @field_validator("host_entries", mode="before")
    @classmethod
    def _entries_not_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("host_entries is a count of calls (a number or a formula), not true or false")
        return v

    _compiled: dict[str, Formula] = PrivateAttr(default_factory=dict)
    _source: str = PrivateAttr(default="")

    @property
    def source(self) -> str:
        """Where the definition came from, for error messages."""
        return self._source or f"ops/{self.name}.yaml"

    @field_validator("params")
    @classmethod
    def _param_names(cls, v: dict[str, Param]) -> dict[str, Param]:
        for name in v:
            if not name.isidentifier() or not name.islower():
                raise ValueError(f"parameter name {name!r} must be a lower-case identifier")
            if name == "dtype":
                raise ValueError("'dtype' is implicit; set dtype_default instead")
        return v

    @model_validator(mode="after")
    def _compile(self) -> OpDef:
        if self.dtype_default not in DTYPES:
            raise ValueError(f"dtype_default: {self.dtype_default!r} is not one of {', '.join(DTYPES)}")
        names: set[str] = {"dtype", "dtype_bytes", *HARDWARE_NAMES}
        for pname, p in self.params.items():
            if p.default_from is not None and p.default_from not in names:
                raise ValueError(f"params.{pname}.default_from: {p.default_from!r} is not an earlier parameter")
            names.add(pname)
            if p.type == "dtype":
                names.add(f"{pname}_bytes")
        comp: dict[str, Formula] = {}

        def compile_(key: str, text: str | int) -> None:
            try:
                comp[key] = Formula(text, names)
            except FormulaError as e:
                raise ValueError(f"{key}: {e}") from None

        for tname, text in self.terms.items():
            if tname in names:
                raise ValueError(f"terms.{tname}: name already used")
            compile_(f"terms.{tname}", text)
            names.add(tname)
        compile_("flops", self.flops)
        compile_("launches", self.launches)
        for bname, bt in self.bytes.items():
            compile_(f"bytes.{bname}.expr", bt.expr)
        import string

        for i, c in enumerate(self.checks):
            compile_(f"checks.{i}.expr", c.expr)
            try:
                fields = [f for _, f, _, _ in string.Formatter().parse(c.message) if f is not None]
            except ValueError as e:
                raise ValueError(f"checks.{i}.message: {e}") from None
            for f in fields:
                if f not in self.params and f != "dtype":
                    raise ValueError(f"checks.{i}.message: {{{f}}} is not a parameter")
            for n in c.needs:
                if n not in self.params or not self.params[n].optional:
                    raise ValueError(f"checks.{i}.needs: {n!r} is not an optional parameter")
        for iname, inf in self.info.items():
            compile_(f"info.{iname}.expr", inf.expr)
            if inf.when is not None:
                compile_(f"info.{iname}.when", inf.when)
        for i, w in enumerate(self.warnings):
            compile_(f"warnings.{i}.when", w.when)
        if self.tokens is not None:
            compile_("tokens", self.tokens)
        for mname, mt in self.memory.items():
            compile_(f"memory.{mname}.expr", mt.expr)
        if self.interconnect is not None:
            compile_("interconnect.expr", self.interconnect.expr)
        for rname, row in self.breakdown.items():
            compile_(f"breakdown.{rname}.flops", row.flops)
            compile_(f"breakdown.{rname}.bytes", row.bytes)
        if self.launch is not None:
            compile_("launch", self.launch)
        if self.launcher is not None:
            compile_("launcher", self.launcher)
        compile_("host_entries", self.host_entries)
        for i, kd in enumerate(self.kernels):
            if kd.when is not None:
                compile_(f"kernels.{i}.when", kd.when)
            if kd.launcher is not None:
                compile_(f"kernels.{i}.launcher", kd.launcher)
            for field in KERNEL_FORMULAS:
                compile_(f"kernels.{i}.{field}", getattr(kd, field))
        for key in ("crossover", "gpus_param"):
            pname = getattr(self, key)
            if pname is not None and (pname not in self.params or self.params[pname].type != "int"):
                raise ValueError(f"{key}: {pname!r} is not an int parameter")
        self._compiled = comp
        return self

    def formula(self, key: str) -> Formula:
        # straight from pydantic's private storage: this is on the engine's hot path
        compiled: dict[str, Formula] = self.__pydantic_private__["_compiled"]  # type: ignore[index]
        return compiled[key]

    @property
    def all_params(self) -> dict[str, Param]:
        """The op's parameters with the implicit dtype first."""
        # model_construct: these values are roofcalc's own (building Param's validator for them
        # would cost a short command a noticeable share of its start-up)
        return {"dtype": _dtype_param(self.dtype_default), **self.params}


@functools.cache
def _dtype_param(default: str) -> Param:
    """The implicit dtype parameter with this default, built once (Param is frozen)."""
    return Param.model_construct(
        type="dtype", help="element type; sets element size and which peak applies", default=default
    )


# ------------------------------------------------------------------ loading


def op_names() -> list[str]:
    from .registry import builtin_names

    return builtin_names("op")


@functools.cache
def load_op(name: str) -> OpDef:
    """A built-in op by name (``gemm``), or a user's op file by path."""
    from .registry import builtin_label, is_path, load_builtin

    if is_path(name):
        return load_op_file(name)
    key = name.strip().lower()
    if key not in op_names():
        raise InputError(f"unknown op {name!r}{suggest(name, op_names())}; see 'roofcalc op --list'")
    label = builtin_label("op", key)

    def build(text: str) -> OpDef:
        op = validate(OpDef, parse_yaml(text, label, trusted=True), label)
        op._source = label
        return op

    return load_builtin("op", key, build, OpDef)


def load_op_file(path: str | Path) -> OpDef:
    """An op definition of the user's own (``roofcalc op ./my-op.yaml ...``)."""
    p = Path(path)
    op = validate(OpDef, parse_yaml(read_text(p, what="op file"), str(p)), str(p))
    op._source = str(p)
    return op


__all__ = ["OpDef", "Param", "SpecError", "load_op", "load_op_file", "op_names"]
