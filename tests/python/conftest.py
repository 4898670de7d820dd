"""Shared fixtures of the Python tests: the platforms present on this machine."""

import openmm as mm
import pytest

import openmmdft  # noqa: F401  (loads the plugin's Python side)


def availablePlatforms():
    """Every platform on which a QMMMForce Context can actually be created here."""
    names = []
    for i in range(mm.Platform.getNumPlatforms()):
        platform = mm.Platform.getPlatform(i)
        system = mm.System()
        system.addParticle(1.0)
        force = openmmdft.QMMMForce()
        force.addParticle(0.0)
        system.addForce(force)
        try:
            mm.Context(system, mm.VerletIntegrator(0.001), platform)
        except Exception:
            continue  # e.g. OpenCL without a device, or CUDA without a GPU
        names.append(platform.getName())
    return names


PLATFORMS = availablePlatforms()


@pytest.fixture(params=PLATFORMS)
def platformName(request):
    return request.param
