/* Teams, collectives and point-to-point synchronisation through the C ABI
 * (run by tests/tests/library.rs under pgasrun, 3 or 4 locales). Exits 0 and
 * prints "library_abi ok" when every check held. */
#include <pgas_shim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed = 0;
static uint64_t cwords[16]; /* .bss: remotely addressable through pgas_static_addr */
static uint64_t catoms[8];  /* .bss: atomics through every C entry point, on locale 0 */
static uint64_t csig[2];    /* .bss: put-with-signal data and signal */
#define CHECK(c, ...)                                   \
  do {                                                  \
    if (!(c)) {                                         \
      char m_[512];                                     \
      pgas_last_error(m_, sizeof m_);                   \
      fprintf(stderr, "locale %d: ", pgas_here());      \
      fprintf(stderr, __VA_ARGS__);                     \
      fprintf(stderr, " (last error: %s)\n", m_);       \
      failed = 1;                                       \
    }                                                   \
  } while (0)

int main(void) {
  CHECK(pgas_team_world() == NULL, "world team before init");
  if (pgas_init() != PGAS_OK) return 2;
  int n = pgas_num_locales(), me = pgas_here();
  pgas_team_t *w = pgas_team_world();
  CHECK(w && pgas_team_size(w) == n && pgas_team_rank(w) == me, "world team shape");
  CHECK(pgas_team_barrier(w) == PGAS_OK, "team barrier");
  /* broadcast in place from the last rank */
  int64_t b[4] = {me, me, me, me};
  CHECK(pgas_team_broadcast(w, n - 1, b, sizeof b) == PGAS_OK && b[0] == n - 1 && b[3] == n - 1,
        "broadcast");
  /* allreduce, reduce */
  uint32_t v = (uint32_t)me + 1, s = 0;
  CHECK(pgas_team_allreduce(w, PGAS_TYPE_UINT32, PGAS_OP_SUM, &v, &s, 1) == PGAS_OK &&
            s == (uint32_t)(n * (n + 1) / 2),
        "allreduce sum %u", s);
  double d = me * 1.5, mx = -1;
  CHECK(pgas_team_reduce(w, 0, PGAS_TYPE_REAL64, PGAS_OP_MAX, &d, &mx, 1) == PGAS_OK &&
            (me != 0 || mx == (n - 1) * 1.5),
        "reduce max %f", mx);
  /* fcollect, alltoall */
  int16_t mine = (int16_t)(10 * me), all[16];
  CHECK(pgas_team_fcollect(w, &mine, all, sizeof mine) == PGAS_OK && all[n - 1] == 10 * (n - 1),
        "fcollect");
  int32_t out[16], in[16];
  for (int i = 0; i < n; i++) out[i] = 100 * me + i;
  CHECK(pgas_team_alltoall(w, out, in, sizeof(int32_t)) == PGAS_OK && in[0] == me &&
            in[n - 1] == 100 * (n - 1) + me,
        "alltoall");
  /* split: odd ranks; colour split leaving rank 0 out */
  pgas_team_t *odd = NULL, *rest = NULL;
  CHECK(pgas_team_split_strided(w, 1, 2, n / 2, &odd) == PGAS_OK, "split strided");
  CHECK((me % 2 == 1) == (odd != NULL), "strided membership");
  if (odd) {
    CHECK(pgas_team_rank(odd) == me / 2 && pgas_team_barrier(odd) == PGAS_OK, "odd team");
    CHECK(pgas_team_destroy(odd) == PGAS_OK, "destroy");
  }
  CHECK(pgas_team_split_color(w, me == 0 ? -1 : 3, -me, &rest) == PGAS_OK, "split colour");
  if (rest) {
    int64_t one = 1, cnt = 0;
    CHECK(pgas_team_allreduce(rest, PGAS_TYPE_INT64, PGAS_OP_SUM, &one, &cnt, 1) == PGAS_OK &&
              cnt == n - 1 && pgas_team_rank(rest) == n - 1 - me,
          "colour team");
    pgas_team_destroy(rest);
  }
  /* bad input: codes, not crashes */
  CHECK(pgas_team_broadcast(w, n, b, sizeof b) == PGAS_ERR_LENGTH, "bad root");
  CHECK(pgas_team_allreduce(w, PGAS_TYPE_REAL32, PGAS_OP_XOR, &d, &mx, 1) == PGAS_ERR_ATOMIC,
        "xor on floats");
  CHECK(pgas_team_allreduce(w, 99, PGAS_OP_SUM, &v, &s, 1) == PGAS_ERR_ATOMIC, "bad type");
  CHECK(pgas_team_barrier(NULL) == PGAS_ERR_NULL, "null team");
  CHECK(pgas_team_destroy(w) == PGAS_ERR_STATE, "destroying the world");
  /* point to point: signal ring */
  void *data[16], *sig[16];
  CHECK(pgas_alloc_all(64, data) == PGAS_OK && pgas_alloc_all(8, sig) == PGAS_OK, "alloc_all");
  pgas_barrier();
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  char msg[64];
  snprintf(msg, sizeof msg, "hello from %d", me);
  CHECK(pgas_put_signal(next, data[next], msg, sizeof msg, sig[next], PGAS_SIGNAL_ADD, 5) ==
            PGAS_OK,
        "put_signal");
  uint64_t five = 5;
  CHECK(pgas_wait_until(sig[me], PGAS_TYPE_UINT64, PGAS_CMP_EQ, &five) == PGAS_OK, "wait_until");
  char want[64];
  snprintf(want, sizeof want, "hello from %d", prev);
  CHECK(strcmp((char *)data[me], want) == 0, "signalled data: %s", (char *)data[me]);
  int ok = -1;
  CHECK(pgas_test_local(sig[me], PGAS_TYPE_UINT64, PGAS_CMP_GE, &five, &ok) == PGAS_OK && ok == 1,
        "test_local");
  CHECK(pgas_wait_until(sig[next], PGAS_TYPE_UINT64, PGAS_CMP_EQ, &five) != PGAS_OK || n == 1,
        "waiting on a remote word must fail");
  CHECK(pgas_test_local(sig[me], PGAS_TYPE_UINT64, 42, &five, &ok) == PGAS_ERR_ATOMIC,
        "bad comparison");
  CHECK(pgas_quiet() == PGAS_OK && pgas_fence() == PGAS_OK && pgas_yield() >= 0, "quiet/fence");
  pgas_barrier();
  /* non-blocking fetching atomics */
  pgas_amo_handle_t *h[10];
  uint64_t one = 1, old[10];
  for (int i = 0; i < 10; i++)
    CHECK(pgas_amo_nb(0, sig[0], PGAS_TYPE_UINT64, PGAS_AMO_ADD, &one, NULL, &h[i]) == PGAS_OK,
          "amo_nb");
  for (int i = 0; i < 10; i++) CHECK(pgas_amo_wait(h[i], &old[i]) == PGAS_OK, "amo_wait");
  pgas_barrier();
  uint64_t total = 0;
  CHECK(pgas_atomic_read_uint64(0, sig[0], &total) == PGAS_OK && total == 5 + 10 * (uint64_t)n,
        "amo_nb total %llu", (unsigned long long)total);
  CHECK(pgas_amo_nb(0, sig[0], PGAS_TYPE_UINT64, PGAS_AMO_ADD, &one, NULL, NULL) == PGAS_ERR_NULL,
        "null handle");
  pgas_barrier();
  /* a lock on locale 0 around a plain counter on locale n-1 */
  void *lk[16], *ctr[16];
  CHECK(pgas_alloc_all(8, lk) == PGAS_OK && pgas_alloc_all(8, ctr) == PGAS_OK, "alloc_all");
  if (me == 0) CHECK(pgas_lock_init(lk[0]) == PGAS_OK, "lock init");
  pgas_barrier();
  for (int i = 0; i < 20; i++) {
    uint64_t tok = 0, c = 0;
    CHECK(pgas_lock_acquire(0, lk[0], &tok) == PGAS_OK, "acquire");
    pgas_get(&c, n - 1, ctr[n - 1], sizeof c);
    c++;
    pgas_put(n - 1, ctr[n - 1], &c, sizeof c);
    CHECK(pgas_lock_release(0, lk[0], tok) == PGAS_OK, "release");
  }
  pgas_barrier();
  uint64_t c = 0;
  pgas_get(&c, n - 1, ctr[n - 1], sizeof c);
  CHECK(c == 20 * (uint64_t)n, "lock-protected counter %llu", (unsigned long long)c);
  CHECK(pgas_lock_release(0, lk[0], 12345) != PGAS_OK, "made-up token");
  pgas_barrier();
  /* symmetric memory after uneven allocation histories */
  void *junk = NULL, *sym[16];
  if (me % 2) CHECK(pgas_alloc(4096 + 64 * me, &junk) == PGAS_OK, "alloc");
  CHECK(pgas_alloc_sym(256, sym) == PGAS_OK, "alloc_sym");
  for (int l = 0; l < n; l++)
    CHECK(pgas_sym_addr(sym[me], l) == sym[l], "sym_addr of locale %d", l);
  CHECK(pgas_sym_addr(sym[me], n) == NULL, "sym_addr of a bad locale");
  uint64_t val = 77 + me, back = 0;
  CHECK(pgas_put(next, sym[next], &val, sizeof val) == PGAS_OK, "put sym");
  pgas_barrier();
  back = *(uint64_t *)sym[me];
  CHECK(back == 77 + (uint64_t)prev, "symmetric word %llu", (unsigned long long)back);
  pgas_barrier();
  /* static data: PUT into the next locale's .bss array */
  {
    uint64_t v = 500 + (uint64_t)me;
    uint64_t *there = pgas_static_addr(&cwords[me], next);
    CHECK(there != NULL, "pgas_static_addr");
    CHECK(pgas_put(next, there, &v, sizeof v) == PGAS_OK, "put to a static");
    pgas_barrier();
    CHECK(__atomic_load_n(&cwords[prev], __ATOMIC_ACQUIRE) == 500 + (uint64_t)prev,
          "static word from %d: %llu", prev, (unsigned long long)cwords[prev]);
    CHECK(pgas_static_addr(sym[me], next) == NULL, "a heap address is not static data");
    CHECK(pgas_static_addr(&cwords[0], n) == NULL, "static_addr of a bad locale");
    pgas_barrier();
  }
  /* atomics on static data of locale 0, every C entry point: ordered,
   * fetching, unordered (a batch of many: they once failed at the target on
   * the mapped path), non-blocking, compare-exchange; then put-with-signal
   * into the next locale's statics, awaited on a static signal word. */
  {
    enum { K = 1000 };
    uint64_t one = 1, old = 0;
    void *a[5];
    for (int k = 0; k < 5; k++) a[k] = pgas_static_addr(&catoms[k], 0);
    for (int i = 0; i < K; i++) {
      CHECK(pgas_atomic_add_uint64(0, a[0], 1) == PGAS_OK, "static add");
      CHECK(pgas_atomic_add_unordered_uint64(0, a[1], 1) == PGAS_OK, "static add_unordered");
    }
    CHECK(pgas_unordered_fence() == PGAS_OK, "unordered fence");
    for (int i = 0; i < 10; i++) {
      CHECK(pgas_atomic_fetch_add_uint64(0, a[2], 1, &old) == PGAS_OK, "static fetch_add");
      pgas_amo_handle_t *h = NULL;
      CHECK(pgas_amo_nb(0, a[3], PGAS_TYPE_UINT64, PGAS_AMO_ADD, &one, NULL, &h) == PGAS_OK &&
                pgas_amo_wait(h, &old) == PGAS_OK,
            "static amo_nb");
      for (;;) {
        uint64_t cur = 0;
        int ok = 0;
        CHECK(pgas_atomic_read_uint64(0, a[4], &cur) == PGAS_OK, "static read");
        CHECK(pgas_atomic_cmpxchg_uint64(0, a[4], cur, cur + 1, NULL, &ok) == PGAS_OK,
              "static cmpxchg");
        if (ok || failed) break;
      }
    }
    uint64_t data = 900 + (uint64_t)me, want = 1;
    CHECK(pgas_put_signal(next, pgas_static_addr(&csig[0], next), &data, sizeof data,
                          pgas_static_addr(&csig[1], next), PGAS_SIGNAL_ADD, 1) == PGAS_OK,
          "put_signal to statics");
    CHECK(pgas_wait_until(&csig[1], PGAS_TYPE_UINT64, PGAS_CMP_GE, &want) == PGAS_OK,
          "wait_until on a static");
    CHECK(__atomic_load_n(&csig[0], __ATOMIC_ACQUIRE) == 900 + (uint64_t)prev,
          "signalled static data %llu", (unsigned long long)csig[0]);
    pgas_barrier();
    if (me == 0) {
      uint64_t want_k = (uint64_t)K * n, want_10 = 10 * (uint64_t)n;
      uint64_t got[5];
      for (int k = 0; k < 5; k++) got[k] = __atomic_load_n(&catoms[k], __ATOMIC_ACQUIRE);
      CHECK(got[0] == want_k && got[1] == want_k && got[2] == want_10 && got[3] == want_10 &&
                got[4] == want_10,
            "static atomics: add %llu add_unordered %llu fetch_add %llu amo_nb %llu cas %llu",
            (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
            (unsigned long long)got[3], (unsigned long long)got[4]);
    }
    pgas_barrier();
  }
  /* comm diagnostics: exact counts of two PUTs and a GET to the next locale */
  pgas_comm_diags_t dg, dgs[16];
  CHECK(pgas_comm_diags_reset() == PGAS_OK && pgas_comm_diags_start() == PGAS_OK, "diags start");
  CHECK(pgas_put(next, sym[next], &val, sizeof val) == PGAS_OK, "put");
  CHECK(pgas_put(next, sym[next], &val, sizeof val) == PGAS_OK, "put");
  CHECK(pgas_get(&back, next, sym[next], sizeof back) == PGAS_OK, "get");
  CHECK(pgas_comm_diags_get(&dg) == PGAS_OK && dg.put == 2 && dg.put_bytes == 16 && dg.get == 1 &&
            dg.get_bytes == 8,
        "diags put=%llu put_bytes=%llu get=%llu", (unsigned long long)dg.put,
        (unsigned long long)dg.put_bytes, (unsigned long long)dg.get);
  CHECK(pgas_comm_diags_stop() == PGAS_OK, "diags stop");
  pgas_barrier();
  CHECK(pgas_comm_diags_get_all(dgs, (size_t)n) == PGAS_OK, "diags get_all");
  for (int l = 0; l < n; l++) CHECK(dgs[l].get == 1, "locale %d's gathered get count", l);
  CHECK(pgas_comm_diags_get(NULL) == PGAS_ERR_NULL, "diags get(NULL)");
  CHECK(pgas_comm_diags_get_all(dgs, (size_t)n + 1) == PGAS_ERR_LENGTH, "diags get_all, wrong n");
  pgas_barrier();
  if (me == 0 && !failed) printf("library_abi ok: %d locales\n", n);
  pgas_finalize();
  return failed;
}
