/* Distributed histogram: every locale draws keys and adds them to bins
 * spread over all locales (unordered atomic adds); an allreduce checks.
 *   pgasrun -n 4 ./histogram */
#include <pgas_shim.h>
#include <stdio.h>
#include <stdlib.h>
#define BINS 256
#define DRAWS 20000

int main(void) {
  char msg[256];
  if (pgas_init() != PGAS_OK && pgas_last_error(msg, sizeof msg)) return fprintf(stderr, "%s\n", msg), 1;
  int n = pgas_num_locales(), me = pgas_here();
  size_t per = (BINS + n - 1) / n;
  void **bins = malloc(n * sizeof(void *));
  if (pgas_alloc_all(per * sizeof(uint64_t), bins) != PGAS_OK) return 1;
  pgas_barrier();
  uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(me + 1);
  for (int i = 0; i < DRAWS; i++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    size_t b = x % BINS;
    uint64_t *bin = (uint64_t *)bins[b / per] + b % per;
    if (pgas_atomic_add_unordered_uint64((int32_t)(b / per), bin, 1) != PGAS_OK) return 1;
  }
  pgas_barrier(); /* flushes the unordered adds; all visible after it */
  uint64_t mine = 0, total = 0, *local = bins[me];
  for (size_t i = 0; i < per; i++) mine += local[i];
  pgas_team_allreduce(pgas_team_world(), PGAS_TYPE_UINT64, PGAS_OP_SUM, &mine, &total, 1);
  if (me == 0) printf("histogram: %llu of %llu draws in %d bins\n", (unsigned long long)total,
                      (unsigned long long)DRAWS * n, BINS);
  int ok = total == (uint64_t)DRAWS * n;
  pgas_finalize();
  return ok ? 0 : 1;
}
