/* pgas-shmem's non-blocking atomics (issue 37): every fetching atomic _nbi
 * form, many in flight to one PE, and put_signal_nbi; values and order
 * checked after one quiet. Prints "CHECK pe=P amo=.. words=.. signal=..
 * pending=N after=M", where N is how many atomics the runtime still had in
 * flight right after they were issued (pgas_pending_amos, the runtime's
 * count) and M the same after the quiet. tests/tests/shmem_nbi.rs asserts
 * the lines. */
#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The runtime's count of the calling thread's atomics in flight
 * (runtime-shim's C ABI, exported by libpgas_shmem). */
int pgas_pending_amos(size_t *out);

#define AMO_N 200
#define SIG_N 32
static long fa_ctr, inc_ctr, sw_word = -1, cs_word, ro_word;
static unsigned long x_word;
static uint64_t sig_word;

static int nbi_amo(void)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    static long fa[AMO_N], fi[AMO_N], sw[AMO_N], cs[AMO_N], ro[AMO_N];
    static unsigned long xo[AMO_N];
    long *sig_dst = shmem_calloc(SIG_N * 8, sizeof(long));
    long sig_src[SIG_N * 8];
    for (int i = 0; i < SIG_N * 8; i++)
        sig_src[i] = 100000 * me + i;
    for (int i = 0; i < AMO_N; i++)
        fa[i] = fi[i] = sw[i] = cs[i] = ro[i] = -7, xo[i] = 7;
    ro_word = 1000 * me + 7;
    shmem_barrier_all();
    /* Every fetching _nbi form, AMO_N of each, all to the right neighbour. */
    for (int i = 0; i < AMO_N; i++) {
        shmem_long_atomic_fetch_add_nbi(&fa[i], &fa_ctr, 1, right);
        shmem_long_atomic_fetch_inc_nbi(&fi[i], &inc_ctr, right);
        shmem_long_atomic_swap_nbi(&sw[i], &sw_word, i, right);
        shmem_long_atomic_compare_swap_nbi(&cs[i], &cs_word, i, i + 1, right);
        shmem_long_atomic_fetch_nbi(&ro[i], &ro_word, right);
        shmem_ulong_atomic_fetch_xor_nbi(&xo[i], &x_word, 1UL << (i % 64), right);
    }
    size_t pending = 0, after = 0;
    pgas_pending_amos(&pending);
    /* Non-blocking puts with a signal, then one quiet completes everything. */
    for (int i = 0; i < SIG_N; i++)
        shmem_long_put_signal_nbi(sig_dst + 8 * i, sig_src + 8 * i, 8, &sig_word, 1,
                                  SHMEM_SIGNAL_ADD, right);
    shmem_quiet();
    pgas_pending_amos(&after);
    /* The left neighbour's data is there once its signals all arrived. */
    shmem_signal_wait_until(&sig_word, SHMEM_CMP_EQ, SIG_N);
    int sig_ok = 1;
    for (int i = 0; i < SIG_N * 8; i++)
        sig_ok &= sig_dst[i] == 100000 * left + i;
    /* Same target, one sender: applied in issue order, so the old values
     * are the sequence's prefixes. */
    int amo_ok = 1;
    unsigned long acc = 0;
    for (int i = 0; i < AMO_N; i++) {
        amo_ok &= fa[i] == i && fi[i] == i && sw[i] == i - 1 && cs[i] == i;
        amo_ok &= ro[i] == 1000 * right + 7 && xo[i] == acc;
        acc ^= 1UL << (i % 64);
    }
    shmem_barrier_all();
    int words_ok = fa_ctr == AMO_N && inc_ctr == AMO_N && sw_word == AMO_N - 1 &&
                   cs_word == AMO_N && x_word == acc;
    printf("CHECK pe=%d amo=%d words=%d signal=%d pending=%zu after=%zu\n", me, amo_ok, words_ok,
           sig_ok, pending, after);
    fflush(stdout);
    shmem_barrier_all();
    shmem_free(sig_dst);
    return 0;
}

int main(void)
{
    shmem_init();
    int r = nbi_amo();
    shmem_finalize();
    return r;
}
