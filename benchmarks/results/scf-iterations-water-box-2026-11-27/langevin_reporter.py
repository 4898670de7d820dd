import time, numpy as np, openmm as mm, openmm.app as app, openmm.unit as unit, openmmdft
ff = app.ForceField("amber14/tip3p.xml")
m = app.Modeller(app.Topology(), [])
m.addSolvent(ff, model="tip3p", boxSize=mm.Vec3(1.86, 1.86, 1.86) * unit.nanometer)
system = ff.createSystem(m.topology, nonbondedMethod=app.CutoffPeriodic, nonbondedCutoff=0.8 * unit.nanometer, constraints=None, rigidWater=False)
res = list(m.topology.residues())
qs = openmmdft.createQMMMSystem(m.topology, system, [a.index for a in res[len(res)//2].atoms()], basisSet="6-31G*", grid=(30, 110), scfConvergence=1e-8)
f = [x for x in qs.getForces() if isinstance(x, openmmdft.QMMMForce)][0]
f.setUseEmbeddingSwitchingFunction(True); f.setEmbeddingSwitchingDistance(0.7)
for report in (False, True, False, True):
    integ = mm.LangevinMiddleIntegrator(300, 1, 0.0005)
    c = mm.Context(qs, integ, mm.Platform.getPlatformByName("CPU"))
    c.setPositions(m.positions); mm.LocalEnergyMinimizer.minimize(c, 10, 50); c.setVelocitiesToTemperature(300, 1)
    integ.step(10)
    t = time.time()
    for _ in range(60):
        integ.step(1)
        if report:
            c.getState(getEnergy=True)
    print("reporter every step" if report else "no reporter        ", "%.4f s per step" % ((time.time() - t) / 60))
