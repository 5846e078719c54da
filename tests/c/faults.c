/*
 * Bad input through the runtime shim's C ABI, run by tests/tests/faults.rs
 * under `pgasrun -n 3` with PGAS_HEAP_SIZE=32M:
 *
 *   faults bad    sizes that used to wrap (pgas_alloc / pgas_alloc_all of
 *                 SIZE_MAX), collectives whose part fails on one locale
 *                 (a NULL argument, the root's heap exhausted) returning an
 *                 error everywhere instead of a hang, bad frees, atomics and
 *                 unordered operations outside the heap reported by the call
 *   faults check  with PGAS_CHECK=1: PUT/GET past an allocation or into
 *                 freed memory are PGAS_ERR_ADDRESS
 *
 * Every locale prints each error it provoked ("faults bad input: ..."); locale
 * 0 prints "faults MODE ok" at the end. Any other outcome aborts the job.
 */
#include <pgas_shim.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "faults"
#include "check.h"

#define HEAP (32u << 20) /* PGAS_HEAP_SIZE the test sets */

static void bad(void **addrs) {
  int32_t right = (me + 1) % n;
  void *p = NULL, *q = NULL;
  char e[512];

  /* Sizes that used to wrap around to a tiny block. */
  EXPECT(PGAS_ERR_NOMEM, "18446744073709551615", pgas_alloc(SIZE_MAX, &p));
  EXPECT(PGAS_ERR_NOMEM, "heap exhausted", pgas_alloc(SIZE_MAX - 63, &p));
  EXPECT(PGAS_ERR_NOMEM, "heap exhausted", pgas_alloc((size_t)HEAP + 1, &p));
  OK(pgas_alloc(64, &p));
  OK(pgas_alloc(64, &q));
  CHECK((char *)q >= (char *)p + 64 || (char *)p >= (char *)q + 64,
        "two live allocations overlap: %p and %p", p, q);
  EXPECT(PGAS_ERR_NOMEM, "18446744073709551615", pgas_alloc_all(SIZE_MAX, addrs));

  /* Collectives whose part fails on one locale: every locale returns. */
  void **none = (me == 2) ? NULL : addrs;
  if (me == 2)
    EXPECT(PGAS_ERR_NULL, "addrs", pgas_alloc_all(64, none));
  else
    EXPECT(PGAS_ERR_COLLECTIVE, "alloc_all failed on locale 2", pgas_alloc_all(64, none));
  uint8_t small[16];
  memset(small, me == 0 ? 0x5a : 0, sizeof small);
  if (me == 1)
    EXPECT(PGAS_ERR_NULL, "buf", pgas_broadcast(NULL, 16));
  else
    EXPECT(PGAS_ERR_COLLECTIVE, "broadcast failed on locale 1", pgas_broadcast(small, 16));
  /* The root's heap cannot hold a copy of a heap-sized broadcast. */
  uint8_t *big = calloc(HEAP, 1);
  CHECK(big != NULL, "malloc");
  if (me == 0)
    EXPECT(PGAS_ERR_NOMEM, "heap exhausted", pgas_broadcast(big, HEAP));
  else
    EXPECT(PGAS_ERR_COLLECTIVE, "broadcast failed on locale 0", pgas_broadcast(big, HEAP));
  free(big);
  /* The job goes on. */
  OK(pgas_broadcast(small, 16));
  CHECK(small[0] == 0x5a && small[15] == 0x5a, "broadcast after the failed ones: %#x",
        small[0]);
  OK(pgas_barrier());

  /* Frees that are not. */
  EXPECT(PGAS_ERR_ADDRESS, "16 bytes into", pgas_free((char *)p + 16));
  OK(pgas_free(p));
  EXPECT(PGAS_ERR_ADDRESS, "freed already", pgas_free(p));
  OK(pgas_free(q));

  /* Atomics and unordered operations outside the heap: this call's error. */
  void *outside = (char *)addrs[right] + 2 * (size_t)HEAP;
  uint64_t one = 1, old = 0;
  EXPECT(PGAS_ERR_ADDRESS, "outside its registered heap",
         pgas_amo(right, outside, PGAS_TYPE_UINT64, PGAS_AMO_ADD, 0, &one, NULL, NULL));
  EXPECT(PGAS_ERR_ADDRESS, "outside its registered heap",
         pgas_amo(right, outside, PGAS_TYPE_UINT64, PGAS_AMO_ADD, PGAS_AMO_FETCH, &one, NULL, &old));
  EXPECT(PGAS_ERR_ADDRESS, "outside its registered heap",
         pgas_amo(right, outside, PGAS_TYPE_UINT64, PGAS_AMO_ADD, PGAS_AMO_UNORDERED, &one, NULL,
                  NULL));
  EXPECT(PGAS_ERR_ADDRESS, "outside its registered heap",
         pgas_put_unordered(right, outside, &one, sizeof one));
  /* Nothing left over to fail a later, unrelated call. */
  OK(pgas_unordered_fence());
  OK(pgas_amo(right, addrs[right], PGAS_TYPE_UINT64, PGAS_AMO_ADD, 0, &one, NULL, NULL));
  OK(pgas_barrier());
  uint64_t v = 0;
  OK(pgas_get(&v, me, addrs[me], sizeof v));
  CHECK(v == 1, "this locale's word is %llu, expected 1", (unsigned long long)v);
  pgas_last_error(e, sizeof e);
}

static void checked(void **addrs) {
  int32_t right = (me + 1) % n;
  uint8_t buf[64];
  memset(buf, 7, sizeof buf);
  /* addrs: 60 bytes on every locale; the next allocation follows it. */
  OK(pgas_put(right, addrs[right], buf, 60));
  EXPECT(PGAS_ERR_ADDRESS, "past the end of the 60-byte allocation",
         pgas_put(right, (char *)addrs[right] + 8, buf, 64));
  EXPECT(PGAS_ERR_ADDRESS, "PGAS_CHECK", pgas_get(buf, right, addrs[right], 61));
  EXPECT(PGAS_ERR_ADDRESS, "past the end", pgas_put(me, (char *)addrs[me] + 59, buf, 2));
  void *p = NULL;
  OK(pgas_alloc(64, &p));
  OK(pgas_free(p));
  EXPECT(PGAS_ERR_ADDRESS, "not inside any live allocation", pgas_put(me, p, buf, 8));
  OK(pgas_barrier());
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  report_all = 1;
  const char *mode = argc > 1 ? argv[1] : "bad";
  OK(pgas_init());
  me = pgas_here();
  n = pgas_num_locales();
  CHECK(n >= 3, "run with 3 locales");
  void **addrs = calloc((size_t)n, sizeof *addrs);
  CHECK(addrs != NULL, "calloc");
  if (strcmp(mode, "check") == 0) {
    void **next = calloc((size_t)n, sizeof *next);
    CHECK(next != NULL, "calloc");
    OK(pgas_alloc_all(60, addrs));
    OK(pgas_alloc_all(64, next));
    checked(addrs);
    free(next);
  } else {
    OK(pgas_alloc_all(8, addrs));
    bad(addrs);
  }
  OK(pgas_barrier());
  if (me == 0) printf("faults %s ok on %s\n", mode, pgas_provider_name());
  free(addrs);
  OK(pgas_finalize());
  return 0;
}
