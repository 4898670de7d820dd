"""QMMMReporter: what the QM region does along an app.Simulation, as CSV rows (like app.StateDataReporter)."""

import openmm.unit as unit

from .core import QMMMForce

_KJ = unit.kilojoule_per_mole
# The QM energy and its parts, as getQMResults names them.
_ENERGIES = ("totalEnergy", "oneElectronEnergy", "coulombEnergy", "exchangeCorrelationEnergy", "nuclearRepulsionEnergy",
             "qmmmEnergy", "longRangeEnergy")


class QMMMReporter(object):
    """Writes one CSV row every ``reportInterval`` steps: step, time (ps), the QM energy and its parts (kJ/mol),
    SCF iterations, past densities in the SCF guess, SCF restarts, HOMO-LUMO gap (kJ/mol), embedded MM charges,
    wall time of the QM computation (s), and with ``totalEnergy=True`` the System's potential, kinetic and
    total energy (kJ/mol).

    ``file`` is a file name or an open file. The QMMMForce is found in the Simulation's System (the first one
    with QM atoms) unless ``force`` is given. Each report asks the Context for its energy, which computes the
    QM region at the current positions, so the row describes the step it is written at; the integrator's next
    step starts from that density (it evaluates the same positions). ``examples/plot_qmmm.py`` plots such a
    file.
    """

    def __init__(self, file, reportInterval, totalEnergy=False, force=None, separator=","):
        try:
            whole = not isinstance(reportInterval, bool) and int(reportInterval) == reportInterval
        except (TypeError, ValueError, OverflowError):  # NaN, inf, a string
            whole = False
        if not whole or reportInterval < 1:
            raise ValueError("QMMMReporter: reportInterval must be a whole number of steps, at least 1 (got %r)"
                             % (reportInterval,))
        self._interval = int(reportInterval)
        self._ownsFile = isinstance(file, str)
        self._out = open(file, "w") if self._ownsFile else file
        self._totalEnergy = totalEnergy
        self._force = force
        self._separator = separator
        self._headerWritten = False

    def describeNextReport(self, simulation):
        steps = self._interval - simulation.currentStep % self._interval
        return {"steps": steps, "periodic": None, "include": ["energy"]}

    def _findForce(self, simulation):
        if self._force is None:
            system = simulation.system
            for i in range(system.getNumForces()):
                force = system.getForce(i)
                if isinstance(force, QMMMForce) and force.getNumQMAtoms() > 0:
                    self._force = force
                    break
            if self._force is None:
                raise ValueError("QMMMReporter: the Simulation's System has no QMMMForce with QM atoms")
        return self._force

    def report(self, simulation, state):
        force = self._findForce(simulation)
        results = force.getQMResults(simulation.context)
        columns = [("step", "%d" % simulation.currentStep),
                   ("time (ps)", "%.6f" % state.getTime().value_in_unit(unit.picosecond))]
        columns += [("%s (kJ/mol)" % name, "%.8f" % results[name].value_in_unit(_KJ)) for name in _ENERGIES]
        columns += [("SCF iterations", "%d" % results["scfIterations"]),
                    ("extrapolated densities", "%d" % results["extrapolatedDensities"]),
                    ("SCF restarts", "%d" % results["scfRestarts"]),
                    ("HOMO-LUMO gap (kJ/mol)", "%.6f" % results["homoLumoGap"].value_in_unit(_KJ)),
                    ("MM charges", "%d" % results["numMMCharges"]),
                    ("QM wall time (s)", "%.6f" % results["timings"]["total"].value_in_unit(unit.second))]
        if self._totalEnergy:
            potential = state.getPotentialEnergy().value_in_unit(_KJ)
            kinetic = state.getKineticEnergy().value_in_unit(_KJ)
            columns += [("potential energy (kJ/mol)", "%.6f" % potential), ("kinetic energy (kJ/mol)", "%.6f" % kinetic),
                        ("total energy (kJ/mol)", "%.6f" % (potential + kinetic))]
        if not self._headerWritten:
            print(self._separator.join('"%s"' % name for name, _ in columns), file=self._out)
            self._headerWritten = True
        print(self._separator.join(value for _, value in columns), file=self._out)
        self._out.flush()

    def __del__(self):
        if getattr(self, "_ownsFile", False):
            self._out.close()
