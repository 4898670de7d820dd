/**
 * Add forces computed on the host (the QM region's, kJ/mol/nm, already in the Context's atom order)
 * to the 64-bit fixed-point force buffer, as every OpenMM kernel accumulates them (scale 2^32).
 * One thread per atom slot and kernels on one queue run in order, so no atomics are needed.
 * Fixed point has no NaN: a non-finite component (the QM atoms' forces in energy-only mode) adds -2^62, which reads
 * -2^30 kJ/mol/nm plus the other Forces' contributions. (Converting NaN itself gave -2^63, where any negative force
 * from another Force wrapped the sum around to +2^31.)
 */
#define NO_FORCE_MARK (-(((mm_long) 1) << 62))

DEVICE mm_long hostForceToFixed(HOST_FORCE_TYPE f) {
    return isfinite(f) ? (mm_long) (f * (HOST_FORCE_TYPE) 0x100000000) : NO_FORCE_MARK;
}

KERNEL void addHostForces(GLOBAL mm_long* RESTRICT forceBuffer, GLOBAL const HOST_FORCE_TYPE* RESTRICT hostForces,
                          int numAtoms, int paddedNumAtoms) {
    for (int i = GLOBAL_ID; i < numAtoms; i += GLOBAL_SIZE) {
        forceBuffer[i] += hostForceToFixed(hostForces[3*i]);
        forceBuffer[i+paddedNumAtoms] += hostForceToFixed(hostForces[3*i+1]);
        forceBuffer[i+2*paddedNumAtoms] += hostForceToFixed(hostForces[3*i+2]);
    }
}
