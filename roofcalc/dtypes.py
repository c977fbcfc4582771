"""Data types: element sizes and which peak each dtype runs at."""

from __future__ import annotations

from fractions import Fraction

# Bytes per element. fp4 is half a byte; kept exact with Fraction.
ELEMENT_BYTES: dict[str, Fraction] = {
    "fp64": Fraction(8),
    "fp32": Fraction(4),
    "tf32": Fraction(4),
    "bf16": Fraction(2),
    "fp16": Fraction(2),
    "fp8": Fraction(1),
    "int8": Fraction(1),
    "fp4": Fraction(1, 2),
}

DTYPES = list(ELEMENT_BYTES)

# What each dtype's peak means in a hardware file (shown by `roofcalc hw show`).
PEAK_MEANING: dict[str, str] = {
    "fp64": "FP64 (tensor-core FP64 where the part has it)",
    "fp32": "FP32 on the CUDA cores (no tensor cores)",
    "tf32": "TF32 tensor core, dense",
    "bf16": "BF16 tensor core, dense, FP32 accumulate",
    "fp16": "FP16 tensor core, dense, FP32 accumulate",
    "fp8": "FP8 tensor core, dense",
    "int8": "INT8 tensor core, dense (OP/s)",
    "fp4": "FP4 tensor core, dense",
}
