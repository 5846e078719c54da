/* long double arithmetic for the reductions of pgas-shmem (src/coll.rs):
 * Rust has no type for C's long double, so the element combine is here. */
void pgas_shmem_ld_op(int op, long double *acc, const long double *x)
{
    switch (op) {
    case 0: *acc += *x; break;
    case 1: *acc *= *x; break;
    case 2: if (*x < *acc) *acc = *x; break;
    case 3: if (*x > *acc) *acc = *x; break;
    }
}
