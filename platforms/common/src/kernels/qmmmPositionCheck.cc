/**
 * Find a particle whose position is NaN or infinite.  The test looks at the
 * exponent bits, so fast-math compiler options cannot remove it.  firstBad must
 * be cleared to 0 before the launch; it receives (index in the current atom
 * order)+1 of some bad particle.
 */
KERNEL void findNonfinitePositions(int numAtoms, GLOBAL const POSQ_BITS_TYPE* RESTRICT posqBits, GLOBAL int* RESTRICT firstBad) {
    for (int atom = GLOBAL_ID; atom < numAtoms; atom += GLOBAL_SIZE) {
        for (int k = 0; k < 3; k++)
            if ((posqBits[4*atom+k] & EXPONENT_MASK) == EXPONENT_MASK)
                firstBad[0] = atom+1;
    }
}
