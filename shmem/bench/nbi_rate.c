/* Blocking PUT/GET against their _nbi forms, 2 PEs (issue 37, item 5):
 *
 *   oshrun -np 2 nbi_rate [operations per batch] [batches]
 *
 * PE 0 issues the operations to PE 1 back to back, then one shmem_quiet;
 * batches alternate blocking and _nbi. Prints
 *   ROW op size blocking=MEDIAN[MIN-MAX] nbi=MEDIAN[MIN-MAX] ratio=R
 * in microseconds per operation (quiet included), ratio = nbi / blocking.
 * The data is checked after the last batch (exit 1 on a wrong byte). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAXB 64
#define MAXSIZE (64 * 1024)

int main(int argc, char **argv)
{
    int ops = argc > 1 ? atoi(argv[1]) : 64;
    int batches = argc > 2 ? atoi(argv[2]) : 9;
    if (ops < 1 || ops > 1024 || batches < 1 || batches > MAXB) {
        fprintf(stderr, "nbi_rate: operations 1..1024 and batches 1..%d\n", MAXB);
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe();
    char *dst = shmem_malloc((size_t)ops * MAXSIZE);
    char *src = malloc((size_t)ops * MAXSIZE);
    for (size_t i = 0; i < (size_t)ops * MAXSIZE; i++)
        src[i] = (char)(i * 7 + 1);
    memset(dst, 0, (size_t)ops * MAXSIZE);
    shmem_barrier_all();
    size_t sizes[] = {8, 4096, MAXSIZE};
    for (int get = 0; get <= 1; get++) {
        for (int s = 0; s < 3; s++) {
            size_t size = sizes[s];
            double blk[MAXB], nbi[MAXB];
            for (int b = 0; b < batches; b++) {
                for (int form = 0; form <= 1; form++) {
                    shmem_barrier_all();
                    double t0 = now_us();
                    if (me == 0) {
                        for (int i = 0; i < ops; i++) {
                            char *d = dst + (size_t)i * MAXSIZE;
                            char *l = src + (size_t)i * MAXSIZE;
                            if (get && form)
                                shmem_getmem_nbi(l, d, size, 1);
                            else if (get)
                                shmem_getmem(l, d, size, 1);
                            else if (form)
                                shmem_putmem_nbi(d, l, size, 1);
                            else
                                shmem_putmem(d, l, size, 1);
                        }
                        shmem_quiet();
                    }
                    double t = (now_us() - t0) / ops;
                    if (form)
                        nbi[b] = t;
                    else
                        blk[b] = t;
                }
            }
            shmem_barrier_all();
            if (me == 1 && !get) {
                for (int i = 0; i < ops; i++)
                    for (size_t k = 0; k < size; k++)
                        if (dst[(size_t)i * MAXSIZE + k] != src[(size_t)i * MAXSIZE + k]) {
                            fprintf(stderr, "nbi_rate: wrong byte at %d/%zu\n", i, k);
                            exit(1);
                        }
            }
            if (me == 0) {
                qsort(blk, batches, sizeof *blk, cmp_d);
                qsort(nbi, batches, sizeof *nbi, cmp_d);
                printf("ROW %s %zu blocking=%.3f[%.3f-%.3f] nbi=%.3f[%.3f-%.3f] ratio=%.2f\n",
                       get ? "get" : "put", size, blk[batches / 2], blk[0], blk[batches - 1],
                       nbi[batches / 2], nbi[0], nbi[batches - 1], nbi[batches / 2] / blk[batches / 2]);
                fflush(stdout);
            }
        }
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
