"""openmm-dft: QM/MM molecular dynamics for OpenMM.

``import openmmdft`` makes QMMMForce available (and loads the platform plugins
through ``import openmm``, where they are installed). Forces taken back from a
System or from XmlSerializer come out as QMMMForce, not as a bare openmm.Force.
"""

import openmm as _mm

from .core import QMMMForce, espGridPoints
from .leastsquares import solveLeastSquares
from .mm import coulomb14ScaleOf, replaceCoulomb
from .builder import createQMMMSystem
from .reporter import QMMMReporter

__all__ = ["QMMMForce", "replaceCoulomb", "coulomb14ScaleOf", "solveLeastSquares", "espGridPoints", "createQMMMSystem",
           "QMMMReporter"]
__version__ = "@PROJECT_VERSION@"


def _asQMMMForce(force, takeOwnership):
    """Return ``force`` as a QMMMForce if that is what it is in C++, else unchanged."""
    if type(force) is _mm.Force and QMMMForce.isinstance(force):
        typed = QMMMForce.cast(force)
        if takeOwnership and force.thisown:
            # The new proxy now owns the C++ object; the old one must not delete it.
            force.thisown = False
            typed.thisown = True
        else:
            typed._owner = force  # keep whatever owns the object alive
        return typed
    return force


def _patchDowncasts():
    """OpenMM's wrappers downcast only the Forces they know; teach them QMMMForce."""
    if getattr(_mm.System, "_openmmdftPatched", False):
        return
    systemGetForce = _mm.System.getForce

    def getForce(self, index):
        return _asQMMMForce(systemGetForce(self, index), False)

    getForce.__doc__ = systemGetForce.__doc__
    _mm.System.getForce = getForce
    _mm.System.getForces = lambda self: [self.getForce(i) for i in range(self.getNumForces())]

    for name in ("_deserializeForce", "_cloneForce"):
        original = getattr(_mm.XmlSerializer, name)

        def make(original):
            return staticmethod(lambda *args: _asQMMMForce(original(*args), True))

        setattr(_mm.XmlSerializer, name, make(original))
    _mm.System._openmmdftPatched = True


_patchDowncasts()
