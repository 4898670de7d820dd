"""Forces against five-point central differences of the energy, for the tests of QM/MM forces."""

import openmm.unit as unit
import pytest

KJ = unit.kilojoule_per_mole


def assertForcesMatchEnergy(context, positions, forces, particles, tolerance, h=1e-4, groups=-1):
    """forces (kJ/mol/nm, from context at positions, nm) against -dE/dx by the five-point stencil (error O(h^4)) for
    every coordinate of the given particles; groups as in Context.getState."""
    def energy(particle, d, step):
        p = positions.copy()
        p[particle, d] += step
        context.setPositions(p)
        return context.getState(getEnergy=True, groups=groups).getPotentialEnergy().value_in_unit(KJ)

    for particle in particles:
        for d in range(3):
            numeric = -(energy(particle, d, -2 * h) - 8 * energy(particle, d, -h) + 8 * energy(particle, d, h)
                        - energy(particle, d, 2 * h)) / (12 * h)
            assert forces[particle, d] == pytest.approx(numeric, abs=tolerance), (particle, d)
