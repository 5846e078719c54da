/* pgas-shmem as older programs and profiling tools use it
 * (tests/tests/shmem_c.rs): the legacy headers, the deprecated API of the
 * 1.5 annex (1.2 setup and memory names, 1.3 atomic names, the untyped
 * waits, active-set collectives called by the set's members only), and the
 * profiling interface: this program defines shmem_long_p itself, counts
 * its calls and reaches the library through pshmem_long_p. Prints one
 * CHECK line per PE. */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
#include <pshmem.h>
#include <stdio.h>

static int p_calls;
void shmem_long_p(long *dest, long value, int pe)
{
    p_calls++;
    pshmem_long_p(dest, value, pe);
}

static int icount;
static long long llsum;
static long lflag;
static double dswap;
static long bsrc, bdst = -1, fsrc, fdst[16];
static int isrc, idst = -1, iwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static long wsrc, wdst, lwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static long psync_b[SHMEM_BCAST_SYNC_SIZE], psync_r[SHMEM_REDUCE_SYNC_SIZE];
static long psync_c[SHMEM_COLLECT_SYNC_SIZE], psync_s[SHMEM_BARRIER_SYNC_SIZE];
static long psync_m[SHMEM_REDUCE_SYNC_SIZE];

int main(void)
{
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        psync_b[i] = psync_r[i] = psync_c[i] = psync_s[i] = psync_m[i] = _SHMEM_SYNC_VALUE;
    start_pes(0);
    int me = _my_pe(), n = _num_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    long *x = shmalloc(8 * sizeof(long));
    for (int i = 0; i < 8; i++)
        x[i] = 0;
    shmem_barrier_all();

    /* 1.3 atomic names, all on PE 0 */
    shmem_int_inc(&icount, 0);
    shmem_int_add(&icount, 2, 0);
    (void) shmem_int_finc(&icount, 0);
    (void) shmem_longlong_fadd(&llsum, me + 1, 0);
    int won = shmem_long_cswap(&lflag, 0, me + 1, 0) == 0;
    /* on the right neighbour */
    shmem_long_set(&x[0], 1000 + me, right);
    double old_d = shmem_double_swap(&dswap, me + 0.5, right);
    (void) (shmem_swap)(&x[1], (long) me, right);  /* the long function, not the C11 macro */
    shmem_barrier_all();
    long fetched = shmem_long_fetch(&x[0], me);
    int all_icount = shmem_int_fetch(&icount, 0);
    long long all_llsum = shmem_longlong_g(&llsum, 0);

    /* untyped waits over the interposed shmem_long_p */
    shmem_long_p(&x[2], 7, right);
    (shmem_wait_until)(&x[2], SHMEM_CMP_EQ, 7);
    shmem_long_p(&x[3], 5, right);
    (shmem_wait)(&x[3], 0);
    shmem_barrier_all();

    /* how many PEs won the compare-and-swap: over the set of all PEs */
    wsrc = won;
    shmem_long_sum_to_all(&wdst, &wsrc, 1, 0, 0, n, lwrk, psync_m);

    /* active sets, called by their members only */
    int odd_n = n / 2;
    if (me % 2 == 1) {
        bsrc = 500 + me;
        shmem_broadcast64(&bdst, &bsrc, 1, 0, 1, 1, odd_n, psync_b);
        shmem_barrier(1, 1, odd_n, psync_s);
    }
    if (me >= 1) {
        isrc = me;
        shmem_int_sum_to_all(&idst, &isrc, 1, 1, 0, n - 1, iwrk, psync_r);
    }
    int even_n = (n + 1) / 2;
    if (me % 2 == 0) {
        fsrc = 10 * me;
        shmem_fcollect64(fdst, &fsrc, 1, 0, 1, even_n, psync_c);
    }
    long fsum = 0;
    if (me % 2 == 0)
        for (int i = 0; i < even_n; i++)
            fsum += fdst[i];
    shmem_barrier_all();

    printf("CHECK pe=%d n=%d icount=%d llsum=%lld winners=%ld fetched=%ld dswap=%.1f "
           "old_d=%.1f swapped=%ld waited=%ld,%ld bcast=%ld setsum=%d fcollect=%ld "
           "p_calls=%d\n",
           me, n, all_icount, all_llsum, wdst, fetched, dswap, old_d, x[1], x[2], x[3],
           bdst, idst, fsum, p_calls);
    (void) left;
    shfree(x);
    shmem_finalize();
    return 0;
}
