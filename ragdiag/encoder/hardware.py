"""Where the model runs: device choice, physical cores, native bfloat16."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

__all__ = ["DEVICE_ENV", "bf16_supported", "physical_cores", "select_device"]

DEVICE_ENV = "RAGDIAG_DEVICE"


def select_device(cuda_available: Callable[[], bool] | None = None) -> str:
    """Where the model runs: ``$RAGDIAG_DEVICE`` when set, else ``"cuda"`` when torch sees a GPU, else ``"cpu"``.

    ``cuda_available`` stands in for ``torch.cuda.is_available`` (tests).
    """
    forced = os.environ.get(DEVICE_ENV, "").strip().lower()
    if forced:
        if forced != "cpu" and not forced.startswith("cuda"):
            raise ValueError(f"{DEVICE_ENV}={forced!r}: use cpu, cuda or cuda:N")
        return forced
    if cuda_available is None:
        import torch

        cuda_available = torch.cuda.is_available
    try:
        return "cuda" if cuda_available() else "cpu"
    except Exception:  # noqa: BLE001 - a broken CUDA install means: run on the CPU
        return "cpu"


def physical_cores() -> int:
    """Physical CPU cores this process may use (hyper-threads not counted); at least 1.

    Read from Linux's topology files for the CPUs in this process's affinity
    mask; elsewhere ``os.cpu_count()``.
    """
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)
    cores = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add((topo.joinpath("physical_package_id").read_text().strip(),
                       topo.joinpath("core_id").read_text().strip()))
        except OSError:
            cores.add(("cpu", str(cpu)))
    return max(len(cores), 1)


def bf16_supported() -> bool:
    """True when this CPU computes bfloat16 natively (AVX512-BF16 or AMX)."""
    try:
        import torch

        cpu = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001
        return False
    if cpu in ("AVX512_BF16", "AMX"):
        return True
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags