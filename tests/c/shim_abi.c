/*
 * End-to-end check of the runtime shim's C ABI (include/pgas_shim.h), run by
 * tests/tests/shim_c_abi.rs under `pgasrun -n N`: lifecycle, PUT/GET
 * (blocking, non-blocking with test / wait / wait_any, strided, unordered),
 * every atomic type through the typed wrappers and the generic call,
 * on-statements (blocking with reply, non-blocking, fast, nested), tasks and
 * the task hooks, broadcast, barrier, and bad input (null pointers, bad
 * locales, zero and oversized lengths, bad atomic codes, unknown function
 * ids, bad stride descriptions) returning error codes. Prints
 * "shim_abi ok" on locale 0; any failure aborts the job with the details.
 */
#include <pgas_shim.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "shim_abi"
#include "check.h"

/* A thread of the runtime's own: binds, PUTs to `to`, unbinds. */
struct bind_arg {
  int32_t to;
  char *at;
  int bound, put_rc, unbind_rc;
};

static void *bound_thread(void *p) {
  struct bind_arg *a = p;
  a->bound = pgas_bind_thread();
  uint64_t v = 0xb0d00000u + (uint64_t)me;
  a->put_rc = pgas_put(a->to, a->at, &v, sizeof v);
  a->unbind_rc = pgas_unbind_thread();
  return NULL;
}

enum { FID_ECHO = 1, FID_ADD = 2, FID_WHO = 3, FID_RING = 4, FID_NEVER = 999 };

static void *counter_addr; /* this locale's counter word (registered heap) */

static void echo(pgas_on_ctx_t *ctx, const void *arg, size_t len) {
  pgas_on_reply(ctx, arg, len);
}

static void add(pgas_on_ctx_t *ctx, const void *arg, size_t len) {
  (void)ctx;
  uint64_t v = 0;
  if (len == sizeof v) memcpy(&v, arg, sizeof v);
  pgas_atomic_add_uint64(pgas_here(), counter_addr, v);
}

static void who(pgas_on_ctx_t *ctx, const void *arg, size_t len) {
  (void)arg;
  (void)len;
  int32_t r[2] = {pgas_here(), pgas_on_caller(ctx)};
  pgas_on_reply(ctx, r, sizeof r);
}

/* RING(hops): on the next locale RING(hops - 1); replies hops + what came back. */
static void ring(pgas_on_ctx_t *ctx, const void *arg, size_t len) {
  uint64_t hops = 0, back = 0;
  size_t rl = 0;
  if (len == sizeof hops) memcpy(&hops, arg, sizeof hops);
  if (hops > 0) {
    uint64_t next = hops - 1;
    int32_t to = (pgas_here() + 1) % pgas_num_locales();
    if (pgas_execute_on(to, FID_RING, &next, sizeof next, &back, sizeof back, &rl) != PGAS_OK ||
        rl != sizeof back)
      back = 1u << 30; /* makes the caller's check fail */
  }
  uint64_t r = back + 1;
  pgas_on_reply(ctx, &r, sizeof r);
}

struct task_arg {
  int32_t target;
  void *word;
};

static void task_body(void *p) {
  struct task_arg *a = p;
  pgas_atomic_add_uint64(a->target, a->word, 1);
}

#define AREA 8192
#define NB 32

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  char e[512];
  uint8_t buf[512];

  /* Before init. */
  CHECK(pgas_here() == -1, "pgas_here before init is %d", pgas_here());
  CHECK(pgas_put(0, buf, buf, 8) == PGAS_ERR_STATE, "PUT before init");
  pgas_last_error(e, sizeof e);
  CHECK(strstr(e, "not initialized") != NULL, "last error before init: %s", e);
  OK(pgas_register(FID_ECHO, "echo", echo));
  OK(pgas_register(FID_ADD, "add", add));
  OK(pgas_register(FID_WHO, "who", who));
  OK(pgas_register(FID_RING, "ring", ring));
  CHECK(pgas_register(FID_ECHO, "echo again", echo) == PGAS_ERR_FUNCTION, "duplicate id");
  CHECK(pgas_register((uint64_t)1 << 63, "named", echo) == PGAS_ERR_FUNCTION, "id with bit 63");
  CHECK(pgas_register(77, NULL, echo) == PGAS_ERR_NULL, "NULL name");
  CHECK(pgas_register(78, "nobody", NULL) == PGAS_ERR_NULL, "NULL body");

  OK(pgas_init());
  me = pgas_here();
  n = pgas_num_locales();
  int32_t right = (me + 1) % n, left = (me + n - 1) % n;
  CHECK(pgas_init() == PGAS_ERR_STATE, "second init");
  CHECK(pgas_num_workers() >= 1, "workers %d", pgas_num_workers());
  if (me == 0)
    printf("shim_abi: %d locales, %s MCM mode, %s provider, %d workers\n", n, pgas_mode_name(),
           pgas_provider_name(), pgas_num_workers());

  void **area = calloc((size_t)n, sizeof *area);
  void **counters = calloc((size_t)n, sizeof *counters);
  OK(pgas_alloc_all(AREA, area));
  OK(pgas_alloc_all(64, counters));
  counter_addr = counters[me];
  for (int32_t l = 0; l < n; l++) CHECK(area[l] != NULL, "area of locale %d is NULL", l);
  OK(pgas_barrier());
  char *mine = area[me], *theirs = area[right];

  /* ---- PUT / GET: 256 bytes into the right neighbour's area. */
  for (int i = 0; i < 256; i++) buf[i] = (uint8_t)(i * 7 + me);
  OK(pgas_put(right, theirs, buf, 256));
  OK(pgas_barrier());
  OK(pgas_get(buf, me, mine, 256));
  for (int i = 0; i < 256; i++)
    CHECK(buf[i] == (uint8_t)(i * 7 + left), "byte %d from locale %d is %d", i, left, buf[i]);
  OK(pgas_get(buf, right, theirs, 256));
  for (int i = 0; i < 256; i++) CHECK(buf[i] == (uint8_t)(i * 7 + me), "GET back byte %d", i);

  /* ---- Non-blocking: NB outstanding PUTs, half waited in reverse, the rest by wait_any. */
  uint64_t vals[NB];
  pgas_handle_t *hs[NB];
  for (int i = 0; i < NB; i++) {
    vals[i] = (uint64_t)me << 32 | (uint64_t)i;
    OK(pgas_put_nb(right, theirs + 512 + 8 * i, &vals[i], 8, &hs[i]));
  }
  for (int i = NB - 1; i >= 0; i -= 2) {
    OK(pgas_wait(hs[i]));
    hs[i] = NULL;
  }
  for (int left_to_wait = NB / 2; left_to_wait > 0; left_to_wait--) {
    size_t idx = NB;
    OK(pgas_wait_any(hs, NB, &idx));
    CHECK(idx < NB && hs[idx] == NULL, "wait_any index %zu not released", idx);
  }
  EXPECT(PGAS_ERR_LENGTH, "no non-null handle", pgas_wait_any(hs, NB, &(size_t){0}));
  pgas_handle_t *h1 = NULL;
  OK(pgas_put_nb(right, theirs + 1024, &vals[3], 8, &h1));
  int done = 0;
  for (int spins = 0; !done; spins++) {
    OK(pgas_test(h1, &done));
    CHECK(spins < 100000000, "pgas_test never reported completion");
  }
  OK(pgas_wait(h1));
  OK(pgas_barrier());
  uint64_t got[NB];
  pgas_handle_t *gh[NB];
  for (int i = 0; i < NB; i++) OK(pgas_get_nb(&got[i], me, mine + 512 + 8 * i, 8, &gh[i]));
  for (int i = 0; i < NB; i++) OK(pgas_wait(gh[(i * 7) % NB]));
  for (int i = 0; i < NB; i++)
    CHECK(got[i] == ((uint64_t)left << 32 | (uint64_t)i), "non-blocking slot %d: %llx", i,
          (unsigned long long)got[i]);
  for (int i = 0; i < NB; i++) OK(pgas_get_nb(&got[i], right, theirs + 512 + 8 * i, 8, &gh[i]));
  for (int i = 0; i < NB; i++) {
    size_t idx;
    OK(pgas_wait_any(gh, NB, &idx));
  }
  for (int i = 0; i < NB; i++)
    CHECK(got[i] == ((uint64_t)me << 32 | (uint64_t)i), "non-blocking GET %d", i);

  /* ---- Strided: 4 rows of 3 bytes, local stride 5, remote stride 7; then
     2 x 3 blocks of 2 bytes (3 levels, odd strides). */
  {
    uint8_t src[64], back[64];
    for (int i = 0; i < 64; i++) src[i] = (uint8_t)(100 + i + me);
    size_t count[2] = {3, 4}, ls[1] = {5}, rs[1] = {7};
    memset(buf, 0, 64);
    OK(pgas_put(right, theirs + 2048, buf, 64));
    OK(pgas_put_strided(right, theirs + 2048, rs, src, ls, count, 1));
    OK(pgas_get(buf, right, theirs + 2048, 64));
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < 3; c++)
        CHECK(buf[r * 7 + c] == src[r * 5 + c], "strided PUT row %d col %d", r, c);
    CHECK(buf[3] == 0 && buf[6] == 0, "strided PUT wrote a gap");
    memset(back, 0, sizeof back);
    OK(pgas_get_strided(back, ls, right, theirs + 2048, rs, count, 1));
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < 3; c++)
        CHECK(back[r * 5 + c] == src[r * 5 + c], "strided GET row %d col %d", r, c);
    size_t c3[3] = {2, 2, 3}, l3[2] = {3, 11}, r3[2] = {5, 13};
    OK(pgas_put_strided(right, theirs + 2200, r3, src, l3, c3, 2));
    memset(back, 0, sizeof back);
    OK(pgas_get_strided(back, l3, right, theirs + 2200, r3, c3, 2));
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
          int o = k * 11 + j * 3 + i;
          CHECK(back[o] == src[o], "3-level strided byte %d", o);
        }
  }

  /* ---- Atomics on the right neighbour: one 8-byte word per type per source. */
  {
    char *w = theirs + 4096 + 128 * me;
    int8_t i8;
    OK(pgas_atomic_write_int8(right, w, -5));
    OK(pgas_atomic_fetch_add_int8(right, w, 3, &i8));
    CHECK(i8 == -5, "int8 fetch_add old %d", i8);
    OK(pgas_atomic_sub_int8(right, w, 10));
    OK(pgas_atomic_read_int8(right, w, &i8));
    CHECK(i8 == -12, "int8 value %d", i8);
    OK(pgas_atomic_and_int8(right, w, 0x0f));
    OK(pgas_atomic_fetch_or_int8(right, w, 0x30, &i8));
    CHECK(i8 == ((-12) & 0x0f), "int8 or old %d", i8);

    int16_t i16, o16;
    int ok = 0;
    OK(pgas_atomic_write_int16(right, w + 8, 300));
    OK(pgas_atomic_cmpxchg_int16(right, w + 8, 300, -7, &o16, &ok));
    CHECK(ok && o16 == 300, "int16 cmpxchg");
    OK(pgas_atomic_cmpxchg_int16(right, w + 8, 300, 1, &o16, &ok));
    CHECK(!ok && o16 == -7, "int16 failed cmpxchg old %d", o16);
    OK(pgas_atomic_min_int16(right, w + 8, -100));
    OK(pgas_atomic_read_int16(right, w + 8, &i16));
    CHECK(i16 == -100, "int16 min %d", i16);

    int32_t i32;
    OK(pgas_atomic_write_int32(right, w + 16, 7));
    OK(pgas_atomic_xchg_int32(right, w + 16, 9, &i32));
    CHECK(i32 == 7, "int32 xchg old %d", i32);
    OK(pgas_atomic_xor_int32(right, w + 16, 0xff));
    OK(pgas_atomic_fetch_max_int32(right, w + 16, 1000, &i32));
    CHECK(i32 == (9 ^ 0xff), "int32 max old %d", i32);

    int64_t i64;
    OK(pgas_atomic_write_int64(right, w + 24, INT64_MIN));
    OK(pgas_atomic_fetch_sub_int64(right, w + 24, 1, &i64));
    CHECK(i64 == INT64_MIN, "int64 sub old");
    OK(pgas_atomic_read_int64(right, w + 24, &i64));
    CHECK(i64 == INT64_MAX, "int64 wraps: %lld", (long long)i64);

    uint8_t u8;
    OK(pgas_atomic_write_uint8(right, w + 32, 250));
    OK(pgas_atomic_add_uint8(right, w + 32, 10));
    OK(pgas_atomic_read_uint8(right, w + 32, &u8));
    CHECK(u8 == 4, "uint8 wraps: %u", u8);
    uint16_t u16;
    OK(pgas_atomic_write_uint16(right, w + 40, 5));
    OK(pgas_atomic_fetch_min_uint16(right, w + 40, 65535, &u16));
    CHECK(u16 == 5, "uint16 min old %u", u16);
    uint32_t u32;
    OK(pgas_atomic_write_uint32(right, w + 48, 0xf0f0f0f0u));
    OK(pgas_atomic_fetch_xor_uint32(right, w + 48, 0xffffffffu, &u32));
    OK(pgas_atomic_read_uint32(right, w + 48, &u32));
    CHECK(u32 == 0x0f0f0f0fu, "uint32 xor %x", u32);
    uint64_t u64;
    OK(pgas_atomic_write_uint64(right, w + 56, 1));
    for (int i = 0; i < 10; i++) OK(pgas_atomic_add_unordered_uint64(right, w + 56, 2));
    OK(pgas_atomic_max_unordered_uint64(right, w + 56, 5));
    OK(pgas_unordered_fence());
    OK(pgas_atomic_read_uint64(right, w + 56, &u64));
    CHECK(u64 == 21, "uint64 after unordered adds: %llu", (unsigned long long)u64);

    float f;
    OK(pgas_atomic_write_real32(right, w + 64, 1.5f));
    OK(pgas_atomic_fetch_add_real32(right, w + 64, 2.25f, &f));
    CHECK(f == 1.5f, "real32 add old %f", (double)f);
    OK(pgas_atomic_max_real32(right, w + 64, -1.0f));
    OK(pgas_atomic_read_real32(right, w + 64, &f));
    CHECK(f == 3.75f, "real32 %f", (double)f);
    double d;
    OK(pgas_atomic_write_real64(right, w + 72, 10.0));
    OK(pgas_atomic_sub_real64(right, w + 72, 0.5));
    OK(pgas_atomic_fetch_min_real64(right, w + 72, -2.0, &d));
    CHECK(d == 9.5, "real64 min old %f", d);
    OK(pgas_atomic_cmpxchg_real64(right, w + 72, -2.0, 8.0, &d, &ok));
    CHECK(ok && d == -2.0, "real64 cmpxchg");

    /* The generic call, every type: fetch-add 1 three times from 0. */
    for (int t = PGAS_TYPE_INT8; t <= PGAS_TYPE_REAL64; t++) {
      char *word = theirs + 6144 + 128 * me + 8 * t;
      uint64_t zero = 0, one_bits = 0, old = 0;
      if (t == PGAS_TYPE_REAL32) {
        float one = 1.0f;
        memcpy(&one_bits, &one, sizeof one);
      } else if (t == PGAS_TYPE_REAL64) {
        double one = 1.0;
        memcpy(&one_bits, &one, sizeof one);
      } else {
        one_bits = 1;
      }
      OK(pgas_amo(right, word, t, PGAS_AMO_WRITE, 0, &zero, NULL, NULL));
      for (int k = 0; k < 3; k++)
        OK(pgas_amo(right, word, t, PGAS_AMO_ADD, PGAS_AMO_FETCH, &one_bits, NULL, &old));
      OK(pgas_amo(right, word, t, PGAS_AMO_READ, 0, NULL, NULL, &old));
      double v;
      if (t == PGAS_TYPE_REAL32) {
        float x;
        memcpy(&x, &old, sizeof x);
        v = x;
      } else if (t == PGAS_TYPE_REAL64) {
        memcpy(&v, &old, sizeof v);
      } else {
        v = (double)(old & 0xff);
      }
      CHECK(v == 3.0, "generic atomic type %d: %f", t, v);
    }
  }

  /* ---- On-statements. */
  {
    char msg[] = "hello from C";
    char reply[64];
    size_t rl = 0;
    OK(pgas_execute_on(right, FID_ECHO, msg, sizeof msg, reply, sizeof reply, &rl));
    CHECK(rl == sizeof msg && memcmp(reply, msg, rl) == 0, "echo reply");
    int32_t wc[2];
    OK(pgas_execute_on_fast(right, FID_WHO, NULL, 0, wc, sizeof wc, &rl));
    CHECK(rl == sizeof wc && wc[0] == right && wc[1] == me, "who: %d %d", wc[0], wc[1]);
    OK(pgas_execute_on(me, FID_WHO, NULL, 0, wc, sizeof wc, &rl));
    CHECK(wc[0] == me && wc[1] == me, "local on-statement");
    uint64_t hops = 3 * (uint64_t)n, back = 0;
    OK(pgas_execute_on(right, FID_RING, &hops, sizeof hops, &back, sizeof back, &rl));
    CHECK(back == hops + 1, "nested ring returned %llu, expected %llu",
          (unsigned long long)back, (unsigned long long)hops + 1);
    uint64_t inc = 5;
    OK(pgas_execute_on_nb(right, FID_ADD, &inc, sizeof inc));
    inc = 7;
    OK(pgas_execute_on_fast_nb(right, FID_ADD, &inc, sizeof inc));
    uint64_t c = 0;
    for (long spins = 0; c != 12; spins++) {
      OK(pgas_atomic_read_uint64(me, counter_addr, &c));
      CHECK(spins < 200000000L && c <= 12, "counter from non-blocking on-statements: %llu",
            (unsigned long long)c);
    }
  }

  /* ---- Tasks. */
  OK(pgas_barrier());
  {
    struct task_arg ta = {right, theirs + 7168};
    pgas_task_t *ts[8];
    for (int i = 0; i < 8; i++) OK(pgas_begin(task_body, &ta, &ts[i]));
    for (int i = 0; i < 8; i++) OK(pgas_task_wait(ts[i]));
    OK(pgas_begin(task_body, &ta, NULL)); /* detached */
    OK(pgas_task_create());
    OK(pgas_task_end());
    OK(pgas_barrier());
    uint64_t v = 0;
    for (long spins = 0; v != 9; spins++) {
      OK(pgas_atomic_read_uint64(me, mine + 7168, &v));
      CHECK(spins < 200000000L && v <= 9, "task counter %llu", (unsigned long long)v);
    }
  }

  /* ---- A runtime's own thread binds a transmit context, PUTs, gives it back. */
  OK(pgas_barrier());
  {
    CHECK(pgas_bind_thread() == 1, "the init thread is bound already");
    struct bind_arg ba = {right, theirs + 7232, -1, -1, -1};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, bound_thread, &ba) == 0, "pthread_create");
    CHECK(pthread_join(th, NULL) == 0, "pthread_join");
    CHECK(ba.bound == 1, "pgas_bind_thread from a second thread returned %d", ba.bound);
    CHECK(ba.put_rc == PGAS_OK && ba.unbind_rc == PGAS_OK, "bound thread: put %d unbind %d",
          ba.put_rc, ba.unbind_rc);
    OK(pgas_barrier());
    uint64_t seen = 0;
    OK(pgas_get(&seen, me, mine + 7232, 8));
    CHECK(seen == 0xb0d00000u + (uint64_t)left, "PUT from a bound thread: %llx",
          (unsigned long long)seen);
  }

  /* ---- Unordered PUT / GET. */
  {
    uint64_t v = 0xfeed0000u + (uint64_t)me;
    OK(pgas_put_unordered(right, theirs + 7200, &v, sizeof v));
    OK(pgas_unordered_fence());
    OK(pgas_barrier());
    uint64_t *landing = NULL;
    OK(pgas_alloc(8, (void **)&landing));
    OK(pgas_get_unordered(landing, me, mine + 7200, 8));
    OK(pgas_unordered_fence());
    uint64_t seen = 0;
    OK(pgas_get(&seen, me, landing, 8));
    CHECK(seen == 0xfeed0000u + (uint64_t)left, "unordered PUT/GET: %llx",
          (unsigned long long)seen);
    OK(pgas_free(landing));
  }

  /* ---- Broadcast. */
  {
    uint64_t b[4] = {0, 0, 0, 0};
    if (me == 0) b[0] = 11, b[1] = 22, b[2] = 33, b[3] = 44;
    OK(pgas_broadcast(b, sizeof b));
    CHECK(b[0] == 11 && b[3] == 44, "broadcast %llu %llu", (unsigned long long)b[0],
          (unsigned long long)b[3]);
  }

  /* ---- Bad input: error codes naming the value, never a crash. */
  OK(pgas_barrier());
  {
    uint64_t v = 1, old = 0;
    double dv = 1.0;
    char small[4];
    size_t rl = 0;
    char *h = NULL;
    pgas_handle_t *none[4] = {NULL, NULL, NULL, NULL};
    size_t idx = 0;
    size_t count[2] = {3, 4}, ls[1] = {5}, rs[1] = {7}, zero_count[2] = {3, 0};
    char name[32];
    snprintf(name, sizeof name, "locale %d", n);
    EXPECT(PGAS_ERR_NULL, "remote address", pgas_put(right, NULL, buf, 8));
    EXPECT(PGAS_ERR_NULL, "src", pgas_put(right, theirs, NULL, 8));
    EXPECT(PGAS_ERR_NULL, "dst", pgas_get(NULL, right, theirs, 8));
    EXPECT(PGAS_ERR_LOCALE, "locale -1", pgas_put(-1, theirs, buf, 8));
    EXPECT(PGAS_ERR_LOCALE, name, pgas_get(buf, n, theirs, 8));
    EXPECT(PGAS_ERR_LENGTH, "length 0", pgas_put(right, theirs, buf, 0));
    EXPECT(PGAS_ERR_LENGTH, "length 1099511627776",
           pgas_get(buf, right, theirs, (size_t)1 << 40));
    EXPECT(PGAS_ERR_ADDRESS, "0x10", pgas_get(buf, right, (void *)16, 8));
    EXPECT(PGAS_ERR_ATOMIC, "Xor", pgas_amo(right, theirs, PGAS_TYPE_REAL64, PGAS_AMO_XOR, 0,
                                             &dv, NULL, NULL));
    EXPECT(PGAS_ERR_ATOMIC, "atomic type code 42",
           pgas_amo(right, theirs, 42, PGAS_AMO_ADD, 0, &v, NULL, NULL));
    EXPECT(PGAS_ERR_ATOMIC, "atomic op code 99",
           pgas_amo(right, theirs, PGAS_TYPE_UINT64, 99, 0, &v, NULL, NULL));
    EXPECT(PGAS_ERR_ATOMIC, "atomic flags code 8",
           pgas_amo(right, theirs, PGAS_TYPE_UINT64, PGAS_AMO_ADD, 8, &v, NULL, NULL));
    EXPECT(PGAS_ERR_NULL, "result", pgas_amo(right, theirs, PGAS_TYPE_UINT64, PGAS_AMO_ADD,
                                             PGAS_AMO_FETCH, &v, NULL, NULL));
    EXPECT(PGAS_ERR_NULL, "operand",
           pgas_amo(right, theirs, PGAS_TYPE_UINT64, PGAS_AMO_ADD, 0, NULL, NULL, NULL));
    EXPECT(PGAS_ERR_ALIGN, "not 8-byte aligned", pgas_atomic_add_uint64(right, theirs + 1, 1));
    EXPECT(PGAS_ERR_ATOMIC, "cannot fetch",
           pgas_amo(right, theirs, PGAS_TYPE_UINT64, PGAS_AMO_XCHG, PGAS_AMO_UNORDERED, &v, NULL,
                    &old));
    EXPECT(PGAS_ERR_FUNCTION, "not registered",
           pgas_execute_on(right, FID_NEVER, NULL, 0, NULL, 0, NULL));
    EXPECT(PGAS_ERR_LOCALE, name, pgas_execute_on_nb(n, FID_ECHO, buf, 8));
    EXPECT(PGAS_ERR_LENGTH, "does not fit",
           pgas_execute_on(right, FID_ECHO, buf, 64, small, sizeof small, &rl));
    CHECK(rl == 64, "reply length reported %zu", rl);
    EXPECT(PGAS_ERR_NULL, "arg", pgas_execute_on(right, FID_ECHO, NULL, 8, NULL, 0, NULL));
    EXPECT(PGAS_ERR_STRIDES, "40 stride levels",
           pgas_put_strided(right, theirs, rs, buf, ls, count, 40));
    EXPECT(PGAS_ERR_STRIDES, "", pgas_put_strided(right, theirs, rs, buf, ls, count, -1));
    EXPECT(PGAS_ERR_LENGTH, "count[1] is zero",
           pgas_put_strided(right, theirs, rs, buf, ls, zero_count, 1));
    EXPECT(PGAS_ERR_NULL, "count", pgas_get_strided(buf, ls, right, theirs, rs, NULL, 1));
    EXPECT(PGAS_ERR_NULL, "handle", pgas_wait(NULL));
    EXPECT(PGAS_ERR_NULL, "handle", pgas_put_nb(right, theirs, buf, 8, NULL));
    EXPECT(PGAS_ERR_LENGTH, "no non-null handle", pgas_wait_any(none, 4, &idx));
    EXPECT(PGAS_ERR_NULL, "fn", pgas_begin(NULL, NULL, NULL));
    EXPECT(PGAS_ERR_NULL, "task", pgas_task_wait(NULL));
    EXPECT(PGAS_ERR_NULL, "out", pgas_alloc(8, NULL));
    EXPECT(PGAS_ERR_NOMEM, "heap exhausted", pgas_alloc((size_t)1 << 40, (void **)&h));
    EXPECT(PGAS_ERR_ADDRESS, "registered heap", pgas_get_unordered(buf, right, theirs, 8));
    EXPECT(PGAS_ERR_LENGTH, "length 0", pgas_broadcast(buf, 0));
    CHECK(pgas_on_caller(NULL) == -1, "pgas_on_caller(NULL)");
    CHECK(strcmp(pgas_strerror(-99), "unknown error code") == 0, "strerror of -99");
    CHECK(pgas_last_error(NULL, 0) > 0, "last error length");
  }

  OK(pgas_barrier());
  OK(pgas_finalize());
  OK(pgas_finalize()); /* idempotent */
  CHECK(pgas_put(right, theirs, buf, 8) == PGAS_ERR_STATE, "PUT after finalize");
  pgas_last_error(e, sizeof e);
  CHECK(strstr(e, "finalized") != NULL, "last error after finalize: %s", e);
  if (me == 0) printf("shim_abi ok on %s\n", pgas_provider_name());
  free(area);
  free(counters);
  pgas_exit(0);
}
