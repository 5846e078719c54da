/* One OpenSHMEM operation N times between 2 PEs, PE 0 initiating, for
 * counting what an operation costs rather than timing it
 * (scripts/sos-peer-count runs it under strace / callgrind with N and 2N):
 *
 *   oshrun -np 2 op_counts OP N [BYTES]
 *
 * OP: put     shmem_putmem + shmem_quiet (shmem_latency_put_perf's put)
 *     putonly N blocking shmem_putmem, then one shmem_quiet
 *     get     shmem_getmem (shmem_latency_get_perf's get)
 *     pp      shmem_long_p + shmem_long_wait_until ping-pong on a heap flag
 *             (N round trips; shmem_latency_put_perf's long_p ping-pong)
 *     pps     the same ping-pong on a `static long` flag
 *     bw      N windows of 64 blocking shmem_putmem to consecutive
 *             slots, then shmem_quiet (shmem_bw_put_perf)
 *     finc    blocking shmem_long_atomic_fetch_inc (unit/lfinc)
 * Prints "OP N x BYTES B: T us per op" (wall time, for orientation only)
 * and checks what it can: the ping-pong's last value, a fetch-inc's count
 * and a put's last bytes (exit 1 when wrong). Needs OpenSHMEM 1.4.
 * OC_NO_FINALIZE=1 ends each PE with _exit after the last barrier instead
 * of shmem_finalize (Open MPI 4.1's OSHMEM often crashes in it here, which
 * loses a callgrind profile written at exit). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long static_flag;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: op_counts put|putonly|get|pp|pps|bw|finc N [BYTES]\n");
        return 2;
    }
    const char *op = argv[1];
    long n = atol(argv[2]);
    size_t sz = argc > 3 ? (size_t)atol(argv[3]) : 8;
    shmem_init();
    int me = shmem_my_pe();
    size_t span = sz * 64;
    char *buf = shmem_malloc(span);
    char *src = malloc(span);
    long *flag = shmem_malloc(sizeof(long));
    memset(buf, 0, span);
    memset(src, 7, span);
    *flag = 0;
    shmem_barrier_all();
    int bad = 0;
    double t0 = now_us();
    if (!strcmp(op, "put")) {
        if (me == 0)
            for (long i = 0; i < n; i++) {
                shmem_putmem(buf, src, sz, 1);
                shmem_quiet();
            }
    } else if (!strcmp(op, "putonly")) {
        if (me == 0) {
            for (long i = 0; i < n; i++)
                shmem_putmem(buf, src, sz, 1);
            shmem_quiet();
        }
    } else if (!strcmp(op, "get")) {
        if (me == 0)
            for (long i = 0; i < n; i++)
                shmem_getmem(src, buf, sz, 1);
    } else if (!strcmp(op, "pp") || !strcmp(op, "pps")) {
        if (!strcmp(op, "pps"))
            flag = &static_flag;
        for (long i = 1; i <= n; i++) {
            if (me == 0) {
                shmem_long_p(flag, i, 1);
                shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
            } else {
                shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
                shmem_long_p(flag, i, 0);
            }
        }
        bad |= *flag != n;
    } else if (!strcmp(op, "bw")) {
        if (me == 0)
            for (long i = 0; i < n; i++) {
                for (int w = 0; w < 64; w++)
                    shmem_putmem(buf + w * sz, src + w * sz, sz, 1);
                shmem_quiet();
            }
    } else if (!strcmp(op, "finc")) {
        if (me == 0)
            for (long i = 0; i < n; i++)
                (void)shmem_long_atomic_fetch_inc(flag, 1);
    } else {
        fprintf(stderr, "op_counts: unknown operation '%s'\n", op);
        return 2;
    }
    double t1 = now_us();
    shmem_barrier_all();
    if (me == 1 && (!strcmp(op, "put") || !strcmp(op, "putonly") || !strcmp(op, "bw")))
        bad |= buf[sz - 1] != 7;
    if (me == 1 && !strcmp(op, "finc"))
        bad |= *flag != n;
    if (me == 0)
        printf("%s %ld x %zu B: %.2f us per op\n", op, n, sz, (t1 - t0) / n);
    if (bad)
        fprintf(stderr, "op_counts: PE %d: wrong result after %s\n", me, op);
    if (getenv("OC_NO_FINALIZE")) {
        shmem_barrier_all();
        fflush(NULL);
        _exit(bad);
    }
    shmem_finalize();
    return bad;
}
