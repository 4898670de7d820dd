// One scaled 1-4 pair of QMMMForce, evaluated by OpenMM's BondedUtilities like a
// NonbondedForce exception: E = ONE_4PI_EPS0*scale*qi*qj/r with no cutoff, no
// reaction field and no periodic image.  PARAMS[index] holds ONE_4PI_EPS0*scale*qi*qj.
real3 delta = make_real3(pos2.x-pos1.x, pos2.y-pos1.y, pos2.z-pos1.z);
real r2 = delta.x*delta.x + delta.y*delta.y + delta.z*delta.z;
real invR = RSQRT(r2);
// A pair without charge adds nothing (and may sit at r = 0, where 0 * inf would be NaN).
real pairEnergy = (PARAMS[index] != 0 ? PARAMS[index]*invR : (real) 0);
energy += pairEnergy;
delta *= (PARAMS[index] != 0 ? pairEnergy*invR*invR : (real) 0);
real3 force1 = -delta;
real3 force2 = delta;
