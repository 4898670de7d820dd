{
// The pair term of QMMMForce inside OpenMM's tiled nonbonded kernel.  Excluded pairs
// (1-2, 1-3) and scaled 1-4 pairs arrive with isExcluded set from the tile masks and
// are skipped here; the 1-4 pairs are added by the separate bonded list (qmmmPair14.cc).
// dEdR is -(dE/dr)/r, as the nonbonded kernel expects. Pairs without charge (a QM atom's MM charge is zero) are
// skipped by the same select: they may sit at r = 0, where 0 * inf would be NaN.
#ifdef USE_CUTOFF
    unsigned int includeInteraction = (!isExcluded && r2 < CUTOFF_SQUARED && QMMM_CHARGE1*QMMM_CHARGE2 != 0);
    const real prefactor = ONE_4PI_EPS0*QMMM_CHARGE1*QMMM_CHARGE2;
    // Reaction field: E = C qq (1/r + krf r^2 - crf), as NonbondedForce.
    tempEnergy += includeInteraction ? prefactor*(invR + QMMM_KRF*r2 - QMMM_CRF) : (real) 0;
    dEdR += includeInteraction ? prefactor*(invR - 2*QMMM_KRF*r2)*invR*invR : (real) 0;
#else
    unsigned int includeInteraction = (!isExcluded && QMMM_CHARGE1*QMMM_CHARGE2 != 0);
    const real prefactor = ONE_4PI_EPS0*QMMM_CHARGE1*QMMM_CHARGE2*invR;
    tempEnergy += includeInteraction ? prefactor : (real) 0;
    dEdR += includeInteraction ? prefactor*invR*invR : (real) 0;
#endif
}
