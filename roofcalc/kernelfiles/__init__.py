"""Kernel files in, occupancy (and for measured kernels the roofline) out.

Readers, one module per format, all pure functions of the file's bytes or text:
``ptxas`` (``nvcc -Xptxas -v`` logs), ``cuobjdump`` (``-res-usage`` output), ``cubin`` (CUDA ELF
files, and cubins embedded in fatbins and host binaries), ``triton`` (Triton cache entries),
``ncu`` (Nsight Compute ``--csv --page raw`` exports). ``detect`` picks the reader from the
content; ``analysis`` runs the occupancy solver and the roofline over the kernels.
"""

from __future__ import annotations

from .analysis import KernelResult, KernelsReport, Options, analyze_file, analyze_kernel
from .detect import load_kernel_file
from .models import KernelFile, KernelInfo, Measurement

__all__ = [
    "KernelFile",
    "KernelInfo",
    "KernelResult",
    "KernelsReport",
    "Measurement",
    "Options",
    "analyze_file",
    "analyze_kernel",
    "load_kernel_file",
]
