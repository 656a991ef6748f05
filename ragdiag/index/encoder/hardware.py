"""Where the model runs: device choice, physical cores, native bfloat16."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Callable

__all__ = ["DEVICE_ENV", "OMP_WAIT_DEFAULT", "bf16_supported", "import_torch", "physical_cores", "select_device"]

DEVICE_ENV = "RAGDIAG_DEVICE"
#: OpenMP's wait policy for torch's CPU threads when the operator has not set ``OMP_WAIT_POLICY``.
OMP_WAIT_DEFAULT = "PASSIVE"


def import_torch():
    """``import torch``; if it is not loaded yet, first ``OMP_WAIT_POLICY=PASSIVE`` unless already set.

    Spinning OpenMP workers hold cores while they wait for work: on a shared
    2-core machine, with the dashboard's page runs and browser beside it, the
    model then runs slower and leaves less for the rest (see
    ``docs/benchmarks.md``). OpenMP reads the policy once, when torch loads,
    so this is done before the first ``import torch``; the operator's own
    setting always stands.
    """
    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", OMP_WAIT_DEFAULT)
    import torch

    return torch


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
        cuda_available = import_torch().cuda.is_available
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
        cpu = import_torch().backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001
        return False
    if cpu in ("AVX512_BF16", "AMX"):
        return True
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags

def runtime_versions(packages: tuple[str, ...]) -> dict[str, str]:
    """The installed versions of ``packages`` and the CPU architecture, read without importing anything.

    Besides the weights, these decide the vectors an encoder computes; a shipped index stamped with the
    same ones need not be re-embedded to be trusted (see ``ragdiag.index.snapshot``).

    >>> sorted(runtime_versions(("numpy",)))
    ['machine', 'numpy']
    """
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in packages:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    out["machine"] = platform.machine() or "unknown"
    return out
