/* Flag ping-pong and one-sided latencies on static and on heap symmetric
 * data, 2 PEs (docs/performance.md, "OpenSHMEM: static data"; issue 37).
 *
 *   oshrun -np 2 flag_pingpong [iterations per batch] [batches]
 *
 * For each operation it runs the same loop on a `static` variable and on a
 * `shmem_malloc`'d one, batch after batch alternating the two, and prints
 *   ROW op static=MEDIAN[MIN-MAX] heap=MEDIAN[MIN-MAX] ratio=R
 * with microseconds per operation (per round trip for the ping-pongs) and
 * the ratio of the medians (static / heap). Every ping-pong checks the
 * values it receives and exits with status 1 on a wrong one. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long s_flag;           /* the static flag of the ping-pongs */
static long s_word;           /* target of GET and atomics */
static uint64_t s_sig;        /* signal word */
static long s_data[8];        /* signal payload */

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int me;

static void die_wrong(const char *what, long got, long want)
{
    fprintf(stderr, "flag_pingpong: PE %d, %s: got %ld, expected %ld\n", me, what, got, want);
    exit(1);
}

/* Ping-pong by shmem_long_p + wait_until: PE 0 sends i, PE 1 answers i. */
static double pingpong_p(long *flag, long base, int iters)
{
    shmem_barrier_all();
    double t0 = now_us();
    for (long i = base + 1; i <= base + iters; i++) {
        if (me == 0) {
            shmem_long_p(flag, i, 1);
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
        } else {
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
            shmem_long_p(flag, i, 0);
        }
    }
    double t = (now_us() - t0) / iters;
    if (*flag != base + iters)
        die_wrong("ping-pong p", *flag, base + iters);
    return t;
}

/* As pingpong_p, but PE 1 works 50 us (a busy loop) before each answer:
 * PE 0's wait outlasts the spinning start of wait_until (reported as the
 * round trip minus nothing: about 50 us is the floor). */
static double pingpong_delayed(long *flag, long base, int iters)
{
    shmem_barrier_all();
    double t0 = now_us();
    for (long i = base + 1; i <= base + iters; i++) {
        if (me == 0) {
            shmem_long_p(flag, i, 1);
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
        } else {
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
            double until = now_us() + 50;
            while (now_us() < until)
                ;
            shmem_long_p(flag, i, 0);
        }
    }
    double t = (now_us() - t0) / iters;
    if (*flag != base + iters)
        die_wrong("ping-pong delayed", *flag, base + iters);
    return t;
}

/* Ping-pong by an atomic set + test loop. */
static double pingpong_test(long *flag, long base, int iters)
{
    shmem_barrier_all();
    double t0 = now_us();
    for (long i = base + 1; i <= base + iters; i++) {
        if (me == 0) {
            shmem_long_atomic_set(flag, i, 1);
            while (!shmem_long_test(flag, SHMEM_CMP_EQ, i))
                ;
        } else {
            while (!shmem_long_test(flag, SHMEM_CMP_EQ, i))
                ;
            shmem_long_atomic_set(flag, i, 0);
        }
    }
    double t = (now_us() - t0) / iters;
    if (*flag != base + iters)
        die_wrong("ping-pong test", *flag, base + iters);
    return t;
}

/* Signals are OpenSHMEM 1.5: a 1.4 library (Open MPI 4.1's OSHMEM) builds
 * the program without this row. */
#define HAVE_SIGNALS (SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 105)

#if HAVE_SIGNALS
/* Ping-pong by put_signal (8 words + signal set) + signal_wait_until. */
static double pingpong_signal(long *data, uint64_t *sig, long base, int iters)
{
    shmem_barrier_all();
    long buf[8];
    double t0 = now_us();
    for (long i = base + 1; i <= base + iters; i++) {
        for (int k = 0; k < 8; k++)
            buf[k] = i + k;
        if (me == 0) {
            shmem_long_put_signal(data, buf, 8, sig, (uint64_t)i, SHMEM_SIGNAL_SET, 1);
            shmem_signal_wait_until(sig, SHMEM_CMP_EQ, (uint64_t)i);
        } else {
            shmem_signal_wait_until(sig, SHMEM_CMP_EQ, (uint64_t)i);
            if (data[7] != i + 7)
                die_wrong("signal payload", data[7], i + 7);
            shmem_long_put_signal(data, buf, 8, sig, (uint64_t)i, SHMEM_SIGNAL_SET, 0);
        }
    }
    double t = (now_us() - t0) / iters;
    if (data[7] != base + iters + 7)
        die_wrong("signal payload", data[7], base + iters + 7);
    return t;
}
#endif

/* One-sided: PE 0 does the operation on PE 1's word; PE 1 waits. */
enum oneop { OP_PUT, OP_GET, OP_FADD, OP_ADD };
static double one_sided(enum oneop op, long *word, int iters)
{
    shmem_barrier_all();
    double t0 = now_us();
    long sink = 0;
    if (me == 0) {
        for (int i = 0; i < iters; i++) {
            switch (op) {
            case OP_PUT: shmem_long_p(word, i, 1); break;
            case OP_GET: sink += shmem_long_g(word, 1); break;
            case OP_FADD: sink += shmem_long_atomic_fetch_add(word, 1, 1); break;
            case OP_ADD: shmem_long_atomic_add(word, 1, 1); break;
            }
        }
        shmem_quiet();
    }
    double t = (now_us() - t0) / iters;
    shmem_barrier_all();
    if (sink == -1)
        printf("unreachable\n");
    return t;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAXB 64

static void row(const char *op, double *st, double *hp, int b)
{
    if (me != 0)
        return;
    qsort(st, b, sizeof *st, cmp_d);
    qsort(hp, b, sizeof *hp, cmp_d);
    double ms = st[b / 2], mh = hp[b / 2];
    printf("ROW %-16s static=%.3f[%.3f-%.3f] heap=%.3f[%.3f-%.3f] ratio=%.2f\n", op, ms, st[0],
           st[b - 1], mh, hp[0], hp[b - 1], ms / mh);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    int batches = argc > 2 ? atoi(argv[2]) : 5;
    if (iters < 1 || batches < 1 || batches > MAXB) {
        fprintf(stderr, "flag_pingpong: bad iterations %d or batches %d (1..%d)\n", iters, batches, MAXB);
        return 2;
    }
    shmem_init();
    me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0)
            fprintf(stderr, "flag_pingpong: run on 2 PEs\n");
        shmem_finalize();
        return 2;
    }
    long *h_flag = shmem_calloc(1, sizeof(long));
    long *h_word = shmem_calloc(1, sizeof(long));
    uint64_t *h_sig = shmem_calloc(1, sizeof(uint64_t));
    long *h_data = shmem_calloc(8, sizeof(long));
    double st[MAXB], hp[MAXB];
    long base_s = 0, base_h = 0;

    for (int b = 0; b < batches; b++) {
        st[b] = pingpong_p(&s_flag, base_s, iters);
        base_s += iters;
        hp[b] = pingpong_p(h_flag, base_h, iters);
        base_h += iters;
    }
    row("pingpong-p-wait", st, hp, batches);
    base_s = base_h = 2000000000L;
    int diters = iters / 10 > 0 ? iters / 10 : 1;
    for (int b = 0; b < batches; b++) {
        st[b] = pingpong_delayed(&s_flag, base_s, diters);
        base_s += diters;
        hp[b] = pingpong_delayed(h_flag, base_h, diters);
        base_h += diters;
    }
    row("pingpong-50us", st, hp, batches);
    base_s = base_h = 1000000000L;
    for (int b = 0; b < batches; b++) {
        st[b] = pingpong_test(&s_flag, base_s, iters);
        base_s += iters;
        hp[b] = pingpong_test(h_flag, base_h, iters);
        base_h += iters;
    }
    row("pingpong-amo-test", st, hp, batches);
#if HAVE_SIGNALS
    base_s = base_h = 0;
    for (int b = 0; b < batches; b++) {
        st[b] = pingpong_signal(s_data, &s_sig, base_s, iters);
        base_s += iters;
        hp[b] = pingpong_signal(h_data, h_sig, base_h, iters);
        base_h += iters;
    }
    row("pingpong-signal", st, hp, batches);
#else
    (void)h_sig, (void)h_data, (void)s_data, (void)s_sig;
#endif
    const char *names[] = {"put-8B", "get-8B", "fetch-add", "add"};
    for (int op = OP_PUT; op <= OP_ADD; op++) {
        for (int b = 0; b < batches; b++) {
            st[b] = one_sided(op, &s_word, iters);
            hp[b] = one_sided(op, h_word, iters);
        }
        row(names[op], st, hp, batches);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
