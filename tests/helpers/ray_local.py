"""The Ray tests' shared plumbing (``tests/ray``): the ``local_ray`` fixture and the environment a local Ray
instance's workers import the test helpers and ragdiag with. Importing it marks nothing: each module keeps its own
``pytestmark`` (``ray``, and a skip when Ray is not installed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from processes import CHILD_PYTHONPATH as PYTHONPATH

REPO = Path(__file__).resolve().parents[2]
#: Ray starts its workers at nice 15, below everything else on the machine: on a busy one (CI, or
#: ``scripts/busy.sh``) an encoder actor then waited minutes for the CPU it needs for seconds. The tests run them at
#: the suite's own priority; the environment of a Ray instance a test starts (its workers read it), or of the
#: command that starts one.
RAY_ENV = {"RAY_worker_niceness": "0"}


@pytest.fixture
def local_ray():
    """The runtime environment for a local Ray instance the test starts; the instance is shut down after it."""
    import ray

    yield {"env_vars": {"PYTHONPATH": PYTHONPATH, **RAY_ENV}}
    ray.shutdown()
