/* pgas-shmem smoke program (tests/tests/shmem_c.rs): symmetric heap and
 * static data, put/get/p/g, atomics, put-with-signal and wait_until,
 * a lock, a team split, collectives and reductions; prints one CHECK line
 * per PE with what it computed, or calls the misuse named by argv[1]. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long counter;          /* static data: symmetric */
static long lock;
static uint64_t sig;

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (argc > 1 && strcmp(argv[1], "bad-pe") == 0) {
        long x = 1;
        shmem_long_p(&counter, x, n + 3);   /* out of range: the job ends naming it */
    }
    if (argc > 1 && strcmp(argv[1], "global-exit") == 0) {
        if (me == n - 1)
            shmem_global_exit(7);
        shmem_barrier_all();                /* the others wait here until stopped */
        shmem_finalize();
        return 0;
    }
    long *ring = shmem_malloc(n * sizeof(long));
    long *data = shmem_calloc(4, sizeof(long));
    int right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_barrier_all();
    /* ring: put my number into the right neighbour's slot for me */
    shmem_long_p(&ring[me], 100 + me, right);
    shmem_barrier_all();
    long from_left = ring[left];
    /* atomics on PE 0's static counter, under contention */
    for (int i = 0; i < 50; i++)
        shmem_long_atomic_fetch_inc(&counter, 0);
    /* a lock-protected plain increment of PE 0's data[0] */
    for (int i = 0; i < 10; i++) {
        shmem_set_lock(&lock);
        long v = shmem_long_g(&data[0], 0);
        shmem_long_p(&data[0], v + 1, 0);
        shmem_clear_lock(&lock);
    }
    /* put with signal to the right neighbour, wait for the left's */
    long payload[3] = {me, me * 2, me * 3};
    shmem_long_put_signal(&data[1], payload, 3, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_uint64_wait_until(&sig, SHMEM_CMP_GE, 1);
    long got_sum = data[1] + data[2] + data[3];
    shmem_barrier_all();
    long total_counter = shmem_long_g(&counter, 0);
    long total_locked = shmem_long_g(&data[0], 0);
    /* reductions and collectives on the world and on the even PEs */
    int mine = me + 1, sum = 0, max = 0;
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, &sum, &mine, 1);
    shmem_int_max_reduce(SHMEM_TEAM_WORLD, &max, &mine, 1);
    long all[64];
    shmem_long_fcollect(SHMEM_TEAM_WORLD, all, &from_left, 1);
    long fsum = 0;
    for (int i = 0; i < n; i++) fsum += all[i];
    shmem_team_t evens;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    int even_n = -1, even_sum = -1;
    if (evens != SHMEM_TEAM_INVALID) {
        even_n = shmem_team_n_pes(evens);
        shmem_int_sum_reduce(evens, &even_sum, &me, 1);
        shmem_team_destroy(evens);
    }
    double _Complex z = me + 1.0 * I, zs;
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, &zs, &z, 1);
    void *p = shmem_ptr(ring, right);
    printf("CHECK pe=%d n=%d from_left=%ld counter=%ld locked=%ld signal_data=%ld sum=%d max=%d "
           "fcollect=%ld even_n=%d even_sum=%d zsum=%g+%gi ptr=%s\n",
           me, n, from_left, total_counter, total_locked, got_sum, sum, max, fsum, even_n,
           even_sum, creal(zs), cimag(zs), p ? "mapped" : "null");
    shmem_free(data);
    shmem_free(ring);
    shmem_finalize();
    return 0;
}
