"""What a report's numbers were measured on.

The same code and corpus rank a few near-tied pages differently on another install; the torch
encoder does not move, the int8 one does (docs/decisions/0069). ONNX Runtime picks its integer
kernels by instruction set (VNNI where the CPU has it, AVX2 otherwise), one candidate cause that
was not isolated, so a report names its machine and two runs are compared knowingly.
"""
from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path

# The flags that choose ONNX Runtime's integer GEMM kernel on x86-64.
_KERNEL_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")


def machine_facts(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, object]:
    model, flags = "", set[str]()
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and not model:
                model = value.strip()
            elif key.strip() in ("flags", "Features") and not flags:
                flags = set(value.split())
    except OSError:
        pass  # not Linux: the architecture below still says something
    try:
        runtime = metadata.version("onnxruntime")
    except metadata.PackageNotFoundError:
        runtime = ""
    return {"cpu": model or platform.processor(), "arch": platform.machine(),
            "int8_kernel_flags": [f for f in _KERNEL_FLAGS if f in flags], "onnxruntime": runtime}
