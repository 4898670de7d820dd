/**
 * Add forces computed on the host (the QM region's, kJ/mol/nm, already in the Context's atom order)
 * to the 64-bit fixed-point force buffer, as every OpenMM kernel accumulates them (scale 2^32).
 * One thread per atom slot and kernels on one queue run in order, so no atomics are needed.
 */
KERNEL void addHostForces(GLOBAL mm_long* RESTRICT forceBuffer, GLOBAL const HOST_FORCE_TYPE* RESTRICT hostForces,
                          int numAtoms, int paddedNumAtoms) {
    for (int i = GLOBAL_ID; i < numAtoms; i += GLOBAL_SIZE) {
        forceBuffer[i] += (mm_long) (hostForces[3*i] * (HOST_FORCE_TYPE) 0x100000000);
        forceBuffer[i+paddedNumAtoms] += (mm_long) (hostForces[3*i+1] * (HOST_FORCE_TYPE) 0x100000000);
        forceBuffer[i+2*paddedNumAtoms] += (mm_long) (hostForces[3*i+2] * (HOST_FORCE_TYPE) 0x100000000);
    }
}
