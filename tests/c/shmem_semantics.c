/* pgas-shmem semantics the public suite does not check (issue 37), one
 * mode per argv[1], each printing "CHECK pe=P key=value ..." lines that
 * tests/tests/shmem_semantics.rs asserts:
 *
 *   team-ctx         the 1.5 specification's shmem_team_create_ctx example:
 *                    contexts on team_2 = {0, 2, 4, ...} and team_3 = {0, 3,
 *                    ...} address PEs by their number in the team (a ring
 *                    put in each team, then an atomic add to team PE 0)
 *   team-ctx-bad-pe  a PE outside the context's team ends the job naming it
 *   fair-any         shmem_test_any / wait_until_any with no status array,
 *                    every flag set: repeated calls return every index
 *   heap-exhausted   shmem_malloc beyond SHMEM_SYMMETRIC_SIZE ends the job
 *   nbi              put_nbi / get_nbi / atomic _nbi complete by quiet, with
 *                    the right values, many in flight, on a private context
 *                    and the default one
 *   strided          iput / iget at their strides (zero and negative ones
 *                    too), static and heap targets, nothing between touched */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sum = 0, val_2 = -1, val_3 = -1;

static int team_ctx(int bad_pe)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_t team_2, team_3;
    shmem_ctx_t ctx_2 = SHMEM_CTX_INVALID, ctx_3 = SHMEM_CTX_INVALID;
    shmem_team_config_t conf;
    conf.num_contexts = 1;
    long cmask = SHMEM_TEAM_NUM_CONTEXTS;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &conf, cmask, &team_2);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 3, (npes + 2) / 3, &conf, cmask, &team_3);
    if (team_2 != SHMEM_TEAM_INVALID && shmem_team_create_ctx(team_2, 0, &ctx_2) != 0)
        ctx_2 = SHMEM_CTX_INVALID;
    if (team_3 != SHMEM_TEAM_INVALID && shmem_team_create_ctx(team_3, 0, &ctx_3) != 0)
        ctx_3 = SHMEM_CTX_INVALID;
    if (bad_pe) {
        if (ctx_2 != SHMEM_CTX_INVALID) {
            int x = 1; /* team_2 has (npes + 1) / 2 PEs: this one is past its end */
            shmem_ctx_int_put(ctx_2, &val_2, &x, 1, shmem_team_n_pes(team_2));
        }
        shmem_barrier_all();
        return 0;
    }
    /* Within each team, my number in it to my right neighbour in it. */
    if (ctx_2 != SHMEM_CTX_INVALID) {
        int pe = shmem_team_my_pe(team_2);
        shmem_ctx_int_put(ctx_2, &val_2, &pe, 1, (pe + 1) % shmem_team_n_pes(team_2));
    }
    if (ctx_3 != SHMEM_CTX_INVALID) {
        int pe = shmem_team_my_pe(team_3);
        shmem_ctx_int_put(ctx_3, &val_3, &pe, 1, (pe + 1) % shmem_team_n_pes(team_3));
    }
    if (ctx_2 != SHMEM_CTX_INVALID)
        shmem_ctx_quiet(ctx_2);
    if (ctx_3 != SHMEM_CTX_INVALID)
        shmem_ctx_quiet(ctx_3);
    shmem_team_sync(SHMEM_TEAM_WORLD);
    /* The PEs in both teams add their two values to team_2's PE 0. */
    if (ctx_2 != SHMEM_CTX_INVALID && ctx_3 != SHMEM_CTX_INVALID)
        shmem_ctx_int_atomic_add(ctx_2, &sum, val_2 + val_3, 0);
    if (ctx_2 != SHMEM_CTX_INVALID)
        shmem_ctx_quiet(ctx_2);
    shmem_team_sync(SHMEM_TEAM_WORLD);
    /* A fetch through the team_3 context from its PE 1 (world PE 3). */
    int fetched = -1;
    if (ctx_3 != SHMEM_CTX_INVALID && shmem_team_n_pes(team_3) > 1)
        fetched = shmem_ctx_int_atomic_fetch(ctx_3, &val_3, 1);
    printf("CHECK pe=%d val_2=%d val_3=%d sum=%d fetched=%d\n", me, val_2, val_3, sum, fetched);
    fflush(stdout);
    if (ctx_2 != SHMEM_CTX_INVALID)
        shmem_ctx_destroy(ctx_2);
    if (ctx_3 != SHMEM_CTX_INVALID)
        shmem_ctx_destroy(ctx_3);
    shmem_barrier_all();
    return 0;
}

static int fair_any(void)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int *flags = shmem_calloc(npes, sizeof(int));
    for (int i = 0; i < npes; i++)
        shmem_int_atomic_set(&flags[me], 1, i);
    shmem_barrier_all();
    /* Every flag is set: calls with no status array must give every index
     * in turn (a bounded number of calls; unfair: the same one forever). */
    int *seen = calloc(npes, sizeof(int));
    int distinct = 0, calls = 0;
    while (distinct < npes && calls < 4 * npes) {
        size_t i = shmem_int_test_any(flags, npes, NULL, SHMEM_CMP_NE, 0);
        calls++;
        if (i < (size_t)npes && !seen[i]++)
            distinct++;
    }
    int test_any_distinct = distinct;
    memset(seen, 0, npes * sizeof(int));
    distinct = calls = 0;
    while (distinct < npes && calls < 4 * npes) {
        size_t i = shmem_int_wait_until_any(flags, npes, NULL, SHMEM_CMP_EQ, 1);
        calls++;
        if (i < (size_t)npes && !seen[i]++)
            distinct++;
    }
    int wait_any_distinct = distinct;
    /* With a status array excluding all but the last, only the last. */
    int *status = calloc(npes, sizeof(int));
    for (int i = 0; i < npes - 1; i++)
        status[i] = 1;
    size_t last = shmem_int_test_any(flags, npes, status, SHMEM_CMP_NE, 0);
    printf("CHECK pe=%d test_any=%d wait_until_any=%d last=%zu\n", me, test_any_distinct,
           wait_any_distinct, last);
    fflush(stdout);
    shmem_barrier_all();
    shmem_free(flags);
    return 0;
}

static int heap_exhausted(void)
{
    /* SHMEM_SYMMETRIC_SIZE is small in this test: this cannot fit. */
    void *p = shmem_malloc((size_t)1 << 30);
    printf("CHECK pe=%d allocated=%d\n", shmem_my_pe(), p != NULL);
    return 0;
}

#define NBI_N 64
static long nbi_dst[NBI_N];
static long nbi_src[NBI_N];
static long nbi_ctr;

static int nbi(void)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *heap_dst = shmem_calloc(NBI_N * 1024, sizeof(long));
    long *big = malloc(NBI_N * 1024 * sizeof(long));
    for (int i = 0; i < NBI_N; i++)
        nbi_src[i] = 1000 * me + i;
    for (int i = 0; i < NBI_N * 1024; i++)
        big[i] = 7 * me + i;
    shmem_barrier_all();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    /* Many non-blocking PUTs in flight, of several sizes, then one quiet. */
    for (int i = 0; i < NBI_N; i++)
        shmem_ctx_long_put_nbi(ctx, &nbi_dst[i], &nbi_src[i], 1, right);
    for (int k = 0; k < 16; k++)
        shmem_ctx_long_put_nbi(ctx, heap_dst + k * NBI_N * 64, big + k * NBI_N * 64, NBI_N * 64,
                               right);
    long fetched[NBI_N];
    for (int i = 0; i < NBI_N; i++)
        shmem_ctx_long_atomic_fetch_add_nbi(ctx, &fetched[i], &nbi_ctr, 1, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    int put_ok = 1, big_ok = 1;
    for (int i = 0; i < NBI_N; i++)
        put_ok &= nbi_dst[i] == 1000 * left + i;
    for (int i = 0; i < NBI_N * 1024; i++)
        big_ok &= heap_dst[i] == 7 * left + i;
    /* The fetched values are the counter's old values: 0..NBI_N-1, once each. */
    int seen[NBI_N] = {0}, fetch_ok = 1;
    for (int i = 0; i < NBI_N; i++) {
        if (fetched[i] < 0 || fetched[i] >= NBI_N || seen[fetched[i]]++)
            fetch_ok = 0;
    }
    /* Non-blocking GETs of the left neighbour's source, completed by quiet. */
    long got[NBI_N];
    for (int i = 0; i < NBI_N; i++)
        got[i] = -1;
    for (int i = 0; i < NBI_N; i++)
        shmem_long_get_nbi(&got[i], &nbi_src[i], 1, left);
    long *big_got = malloc(NBI_N * 1024 * sizeof(long));
    shmem_long_get_nbi(big_got, heap_dst, NBI_N * 1024, left);
    shmem_quiet();
    int get_ok = 1;
    for (int i = 0; i < NBI_N; i++)
        get_ok &= got[i] == 1000 * left + i;
    int left_left = (left + npes - 1) % npes;
    for (int i = 0; i < NBI_N * 1024; i++)
        get_ok &= big_got[i] == 7 * left_left + i;
    printf("CHECK pe=%d put=%d big=%d fetch=%d counter=%ld get=%d\n", me, put_ok, big_ok, fetch_ok,
           nbi_ctr, get_ok);
    fflush(stdout);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    shmem_free(heap_dst);
    return 0;
}

/* Strided transfers (iput / iget, issue 37: the runtime's strided
 * transfers underneath): every 3rd source element to every 2nd destination
 * slot of the right PE, on static and heap targets; a zero source stride (one
 * value to many slots); a negative source stride (a reversed copy); 4-byte
 * elements; iget of every 3rd element of the right PE into every 2nd local
 * slot, through a context. Slots between the strided ones stay untouched. */
#define STR_N 16
static long str_static[3 * STR_N];
static long str_rev[STR_N];
static long str_src_sym[3 * STR_N];
static int str_int[2 * STR_N];

static int strided(void)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *heap = shmem_malloc(3 * STR_N * sizeof(long));
    long src[3 * STR_N];
    int isrc[STR_N];
    for (int i = 0; i < 3 * STR_N; i++) {
        src[i] = 100 * me + i;
        str_src_sym[i] = 1000 * me + i;
        str_static[i] = -1;
        heap[i] = -1;
    }
    for (int i = 0; i < STR_N; i++) {
        str_rev[i] = -1;
        isrc[i] = 10 * me + i;
    }
    for (int i = 0; i < 2 * STR_N; i++)
        str_int[i] = -1;
    shmem_barrier_all();
    shmem_long_iput(str_static, src, 2, 3, STR_N, right);
    shmem_long_iput(heap, src, 2, 3, STR_N, right);
    shmem_long_iput(heap + 1, &src[5], 2, 0, STR_N, right);
    shmem_long_iput(str_rev, &src[3 * STR_N - 1], 1, -1, STR_N, right);
    shmem_int_iput(str_int, isrc, 2, 1, STR_N, right);
    long got[2 * STR_N];
    for (int i = 0; i < 2 * STR_N; i++)
        got[i] = -1;
    shmem_ctx_long_iget(SHMEM_CTX_DEFAULT, got, str_src_sym, 2, 3, STR_N, right);
    shmem_barrier_all();
    int put_ok = 1, zero_ok = 1, rev_ok = 1, int_ok = 1, get_ok = 1;
    for (int i = 0; i < STR_N; i++) {
        put_ok &= str_static[2 * i] == 100 * left + 3 * i && heap[2 * i] == 100 * left + 3 * i;
        zero_ok &= heap[2 * i + 1] == 100 * left + 5;
        rev_ok &= str_rev[i] == 100 * left + 3 * STR_N - 1 - i;
        int_ok &= str_int[2 * i] == 10 * left + i;
        get_ok &= got[2 * i] == 1000 * right + 3 * i;
    }
    for (int i = 0; i + 1 < STR_N; i++) {
        put_ok &= str_static[2 * i + 1] == -1;
        int_ok &= str_int[2 * i + 1] == -1;
        get_ok &= got[2 * i + 1] == -1;
    }
    for (int i = 2 * STR_N; i < 3 * STR_N; i++)
        put_ok &= str_static[i] == -1 && heap[i] == -1;
    printf("CHECK pe=%d put=%d zero=%d rev=%d int=%d get=%d\n", me, put_ok, zero_ok, rev_ok, int_ok,
           get_ok);
    fflush(stdout);
    shmem_barrier_all();
    shmem_free(heap);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    shmem_init();
    int r = 2;
    if (strcmp(mode, "team-ctx") == 0)
        r = team_ctx(0);
    else if (strcmp(mode, "team-ctx-bad-pe") == 0)
        r = team_ctx(1);
    else if (strcmp(mode, "fair-any") == 0)
        r = fair_any();
    else if (strcmp(mode, "heap-exhausted") == 0)
        r = heap_exhausted();
    else if (strcmp(mode, "nbi") == 0)
        r = nbi();
    else if (strcmp(mode, "strided") == 0)
        r = strided();
    else
        fprintf(stderr, "shmem_semantics: unknown mode '%s'\n", mode);
    shmem_finalize();
    return r;
}
