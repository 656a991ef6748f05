"""The Ray tests' shared plumbing (``tests/ray``): the ``local_ray`` fixture and the environment a local Ray
instance's workers import the test helpers and ragdiag with. Importing it marks nothing: each module keeps its own
``pytestmark`` (``ray``, and a skip when Ray is not installed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parent
REPO = HELPERS.parents[1]
#: The PYTHONPATH of a Ray worker or a CLI run that imports the FAKE encoders (``fakes``) and this checkout's ragdiag.
PYTHONPATH = os.pathsep.join([str(HELPERS), str(REPO)])


@pytest.fixture
def local_ray():
    """The runtime environment for a local Ray instance the test starts; the instance is shut down after it."""
    import ray

    yield {"env_vars": {"PYTHONPATH": PYTHONPATH}}
    ray.shutdown()
