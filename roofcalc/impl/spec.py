"""An implementation file: the kernels one step of an implementation launches, when the host issues
each, where the host waits for the GPU, and how each kernel's shapes follow the step's batch and
context (or prompt length). Written from a profiler trace (`roofcalc trace FILE --save-impl`),
read by `roofcalc op decode|prefill --impl-file` to predict the same code at other shapes.

Shapes are formulas over ``batch`` and ``context`` (decode) or ``batch`` and ``seq`` (prefill),
evaluated by roofcalc's whitelisting formula evaluator; a number is a size that does not change.
The file is YAML, validated strictly (unknown keys are errors): a user may correct a shape by hand.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, field_validator, model_validator

SCHEMA = "roofcalc-impl-1"
MAX_KERNELS = 50_000  # kernels of one step (a 100-layer eager prefill launches about 10,000)
MAX_INPUTS = 64  # recorded inputs of one op
MAX_US = 1e12  # microseconds: the trace reader's own limit on a duration or a time
Number = StrictFloat | StrictInt
NAMES = {"decode": ("batch", "context"), "prefill": ("batch", "seq")}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Overhead(_Strict):
    """What recording a trace costs the host, subtracted from the traced host timeline."""

    per_cpu_op_s: float = Field(ge=0, le=1e-3)
    per_launch_s: float = Field(ge=0, le=1e-3)
    kind: Literal["measured", "none"]
    source: str


class GraphReplay(_Strict):
    """The step is replayed from a CUDA graph: no host between its kernels, only the graph's own
    gap from one kernel node to the next."""

    per_kernel_s: StrictFloat = Field(ge=0, le=1e-4)
    kind: Literal["measured", "fitted", "transferred"]
    source: str


class ImplKernel(_Strict):
    name: str = Field(max_length=400)
    op: str | None = Field(default=None, max_length=4096)
    kind: str = Field(max_length=40)
    call: int = Field(ge=0)
    stream: int
    issue_us: Number = Field(ge=0, le=MAX_US)  # on the host timeline of the step, profiler overhead removed
    measured_us: Number = Field(ge=0, le=MAX_US)
    dims: list[Any] | None = Field(default=None, max_length=MAX_INPUTS)  # per input: sizes (ints or formulas), or []
    types: list[str] | None = Field(default=None, max_length=MAX_INPUTS)
    concrete: list[str] | None = Field(default=None, max_length=MAX_INPUTS)
    comm_bytes: StrictInt | None = Field(default=None, ge=0, le=2**60)  # a collective: bytes each GPU sends, as traced


class ImplFile(_Strict):
    schema_: Literal["roofcalc-impl-1"] = Field(alias="schema")
    name: str = Field(min_length=1, max_length=200)
    phase: Literal["decode", "prefill"]
    traced: dict[str, StrictInt]  # the step's batch and context (or seq) when it was traced
    hardware: str = Field(min_length=1, max_length=200)  # the registry id of the card it ran on
    device: str | None = None
    source: str  # the trace it was read from
    made_by: str
    measured_step_s: float | None = Field(default=None, gt=0)  # the step timed without the profiler
    host_scale: StrictFloat = Field(gt=0, le=100)  # host timeline x this reproduces measured_step_s (1: none given)
    overhead: Overhead
    host_end_us: Number = Field(ge=0, le=MAX_US)  # the host's last event of the step
    syncs_us: list[Annotated[Number, Field(ge=0, le=MAX_US)]] = Field(default_factory=list, max_length=MAX_KERNELS)
    fixed_us: dict[str, Annotated[Number, Field(ge=0, le=MAX_US)]]  # per kind of op: its shortest kernel
    gpus: StrictInt = Field(default=1, ge=1, le=1024)  # the collectives' group size in the trace (1: none)
    graph: GraphReplay | None = None  # set: the step is replayed from a CUDA graph (the host's timeline unused)
    kernels: list[ImplKernel] = Field(min_length=1, max_length=MAX_KERNELS)

    @field_validator("traced")
    @classmethod
    def _shape(cls, v: dict[str, int]) -> dict[str, int]:
        if any(isinstance(x, bool) or x < 1 or x > 2**31 for x in v.values()):
            raise ValueError("traced sizes are integers from 1 to 2^31")
        return v

    @model_validator(mode="after")
    def _sizes_of_the_phase(self) -> ImplFile:
        if sorted(self.traced) != sorted(NAMES[self.phase]):
            raise ValueError(
                f"traced: a {self.phase} step is traced at {' and '.join(NAMES[self.phase])} (got {sorted(self.traced)})"
            )
        return self

    def names(self) -> tuple[str, str]:
        return NAMES[self.phase]


__all__ = ["MAX_KERNELS", "NAMES", "SCHEMA", "GraphReplay", "ImplFile", "ImplKernel", "Overhead"]
