//! The fixed C text of the generated litmus programs: each API's thin
//! layer (`l_put`, `l_barrier`, ...), the harness's helpers and `main`
//! (rounds of instances started by the clock). `super::emit_c` puts the
//! programs between them.

pub(super) const SHMEM_API: &str = r#"
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static shmem_ctx_t CTX[2];
static shmem_ctx_t TEAM_CTX = SHMEM_CTX_INVALID;
static int me, npes;
static void l_init(void) {
  shmem_init(); me = shmem_my_pe(); npes = shmem_n_pes();
  for (int i = 0; i < 2; i++)
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &CTX[i]) != 0) CTX[i] = SHMEM_CTX_DEFAULT;
  shmem_team_t t;
  if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &t) == 0
      && t != SHMEM_TEAM_INVALID) {
    if (shmem_team_create_ctx(t, 0, &TEAM_CTX) != 0) TEAM_CTX = SHMEM_CTX_INVALID;
  }
}
static void *l_alloc(size_t b) { return shmem_malloc(b); }
static void l_barrier(void) { shmem_barrier_all(); }
static void l_put(int pe, long *d, const long *s, size_t w) { shmem_putmem(d, s, w * 8, pe); }
static void l_get(int pe, long *d, const long *s, size_t w) { shmem_getmem(d, s, w * 8, pe); }
static void l_p(int pe, long *d, long v) { shmem_long_p(d, v, pe); }
static void l_aset(int pe, long *d, long v) { shmem_long_atomic_set(d, v, pe); }
static long l_afetch(int pe, long *d) { return shmem_long_atomic_fetch(d, pe); }
static long l_afadd(int pe, long *d, long v) { return shmem_long_atomic_fetch_add(d, v, pe); }
static void l_await(int pe, long *d, long v) {
  if (pe == me) shmem_long_wait_until(d, SHMEM_CMP_EQ, v);
  else while (shmem_long_atomic_fetch(d, pe) != v) {}
}
static void l_put_signal(int pe, long *d, const long *s, size_t w, long *sig, long v) {
  shmem_putmem_signal(d, s, w * 8, (uint64_t *)sig, (uint64_t)v, SHMEM_SIGNAL_SET, pe);
}
static void l_await_signal(long *sig, long v) {
  shmem_signal_wait_until((uint64_t *)sig, SHMEM_CMP_EQ, (uint64_t)v);
}
static void l_put_nbi(int pe, long *d, const long *s, size_t w) { shmem_putmem_nbi(d, s, w * 8, pe); }
static void l_fence(void) { shmem_fence(); }
static void l_quiet(void) { shmem_quiet(); }
static long l_max(long v) {
  static long src, dst; /* symmetric (static data) */
  src = v; shmem_long_max_reduce(SHMEM_TEAM_WORLD, &dst, &src, 1); return dst;
}
static void l_finalize(void) { shmem_finalize(); }
"#;

pub(super) const PGAS_API: &str = r#"
#include <pgas_shim.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int me, npes;
static pgas_handle_t *NBI[8];
static int NNBI;
static void die_if(int err, const char *what) {
  if (err != 0) { fprintf(stderr, "litmus-c: %s: %s\n", what, pgas_strerror(err)); pgas_abort(what); }
}
static void l_init(void) { die_if(pgas_init(), "pgas_init"); me = pgas_here(); npes = pgas_num_locales(); }
static void *l_alloc(size_t b) {
  void **addrs = calloc((size_t)npes, sizeof(void *));
  die_if(pgas_alloc_sym(b, addrs), "pgas_alloc_sym");
  void *mine = addrs[me]; free(addrs); return mine;
}
static void *R(void *p, int pe) { return pgas_sym_addr(p, pe); }
static void l_barrier(void) { die_if(pgas_barrier(), "pgas_barrier"); }
static void l_put(int pe, long *d, const long *s, size_t w) { die_if(pgas_put(pe, R(d, pe), s, w * 8), "pgas_put"); }
static void l_get(int pe, long *d, const long *s, size_t w) { die_if(pgas_get(d, pe, R((void *)s, pe), w * 8), "pgas_get"); }
static void l_p(int pe, long *d, long v) { die_if(pgas_put(pe, R(d, pe), &v, 8), "pgas_put"); }
static void l_aset(int pe, long *d, long v) {
  die_if(pgas_amo(pe, R(d, pe), PGAS_TYPE_INT64, PGAS_AMO_WRITE, 0, &v, NULL, NULL), "pgas_amo write");
}
static long l_afetch(int pe, long *d) {
  long r = 0; die_if(pgas_amo(pe, R(d, pe), PGAS_TYPE_INT64, PGAS_AMO_READ, 0, NULL, NULL, &r), "pgas_amo read"); return r;
}
static long l_afadd(int pe, long *d, long v) {
  long r = 0; die_if(pgas_amo(pe, R(d, pe), PGAS_TYPE_INT64, PGAS_AMO_ADD, PGAS_AMO_FETCH, &v, NULL, &r), "pgas_amo add"); return r;
}
static void l_await(int pe, long *d, long v) {
  if (pe == me) die_if(pgas_wait_until(d, PGAS_TYPE_INT64, PGAS_CMP_EQ, &v), "pgas_wait_until");
  else while (l_afetch(pe, d) != v) {}
}
static void l_put_signal(int pe, long *d, const long *s, size_t w, long *sig, long v) {
  die_if(pgas_put_signal(pe, R(d, pe), s, w * 8, R(sig, pe), PGAS_SIGNAL_SET, (uint64_t)v), "pgas_put_signal");
}
static void l_await_signal(long *sig, long v) {
  die_if(pgas_wait_until(sig, PGAS_TYPE_INT64, PGAS_CMP_EQ, &v), "pgas_wait_until");
}
static void l_put_nbi(int pe, long *d, const long *s, size_t w) {
  die_if(pgas_put_nb(pe, R(d, pe), s, w * 8, &NBI[NNBI++]), "pgas_put_nb");
}
static void l_fence(void) { die_if(pgas_fence(), "pgas_fence"); }
static void l_quiet(void) {
  for (int i = 0; i < NNBI; i++) die_if(pgas_wait(NBI[i]), "pgas_wait");
  NNBI = 0;
  die_if(pgas_quiet(), "pgas_quiet");
}
static long l_max(long v) {
  long r = 0; die_if(pgas_team_allreduce(pgas_team_world(), PGAS_TYPE_INT64, PGAS_OP_MAX, &v, &r, 1), "pgas_team_allreduce"); return r;
}
static void l_finalize(void) { pgas_finalize(); }
"#;

pub(super) const HARNESS: &str = r#"
#define MAXREP 8
#define MAXOUT 256
/* The instance being run (ARENA, REGS, NBIBUF: `use_instance`). */
static long *ARENA, *REGS, *OUTV, *NBIBUF;
static long *ARENA0, *REGS0, *NBIBUF0;
static long BUF[BUFWORDS];
static void use_instance(long i) {
  ARENA = ARENA0 + i * ARENA_WORDS; REGS = REGS0 + i * MAXREP; NBIBUF = NBIBUF0 + i * BUFWORDS;
}
static long stamp(long it, long v) { return (it << 8) | v; }
static void fill(long *p, size_t w, long v) { for (size_t i = 0; i < w; i++) ((volatile long *)p)[i] = v; }
/* A value read back: 254 = from another iteration, 255 = words differ. */
static long decode(const long *p, size_t w, long it) {
  long first = ((const volatile long *)p)[0];
  for (size_t i = 1; i < w; i++) if (((const volatile long *)p)[i] != first) return 255;
  if ((first >> 8) != it) return 254;
  return first & 0xff;
}
#include <sched.h>
#include <time.h>
static long now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000L + t.tv_nsec; }
static unsigned long long RNG;
static unsigned rnd(void) { RNG = RNG * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)(RNG >> 33); }
static void delay(void) { unsigned n = rnd() % 4; unsigned k = n == 0 ? 0 : rnd() % (n * 300); for (volatile unsigned i = 0; i < k; i++) {} }
struct prog { const char *name; int nrep; int holder[MAXREP]; long family_size;
  void (*reset)(long); void (*run)(long); void (*final)(long); };
"#;

pub(super) const MAIN: &str = r#"
struct seen { long v[MAXREP]; long count; };
static struct seen OUTS[MAXOUT];
/* Rounds of INST instances (iterations) of a program, each instance in
   words of its own: reset (own words of every instance), barrier, the
   runs, barrier, the finals (own words) of every instance into its row of
   HIST. The PEs start the instances of a round together by the clock
   (litmus7's "timebase" synchronisation): instance i at i x SPACING after
   the PE left the round's barrier, SPACING being 5/4 of the median run of
   the PE whose median was the longest in the program's previous round (an
   allreduce after each round; a median, so that a PE that lost its core
   once does not space out the next round). Run back to back instead, the PEs drift apart and most races
   the negative controls need are missed. The program's first round has a
   barrier before each instance instead. Nobody touches another PE's words
   outside run, so the next reset needs no barrier before it; PE 0 reads
   every holder's rows once per program.
   litmus MATCH ITERS [family]: ITERS per program, or with "family" per
   family (each program ITERS / its family's size, rounded up), rounded up
   to whole rounds. LITMUS_C_INSTANCES: instances per round (1 to 64,
   DEFAULT_INSTANCES). */
int main(int argc, char **argv) {
  l_init();
  const char *match = argc > 1 ? argv[1] : "";
  long iters = argc > 2 ? atol(argv[2]) : 100;
  int per_family = argc > 3 && strcmp(argv[3], "family") == 0;
  const char *inst_env = getenv("LITMUS_C_INSTANCES");
  long inst = inst_env && inst_env[0] ? atol(inst_env) : DEFAULT_INSTANCES;
  if (npes < 4) { if (me == 0) fprintf(stderr, "litmus-c: needs 4 PEs\n"); l_finalize(); return 2; }
  if (iters < 1) { if (me == 0) fprintf(stderr, "litmus-c: bad iteration count %s\n", argv[2]); l_finalize(); return 2; }
  if (inst < 1 || inst > 64) { if (me == 0) fprintf(stderr, "litmus-c: LITMUS_C_INSTANCES=%s: expected 1 to 64\n", inst_env); l_finalize(); return 2; }
  long rows = (iters + inst - 1) / inst * inst;
  ARENA0 = l_alloc((size_t)inst * ARENA_WORDS * 8); REGS0 = l_alloc((size_t)inst * MAXREP * 8);
  if (!(NBIBUF0 = malloc((size_t)inst * BUFWORDS * 8))) { fprintf(stderr, "litmus-c: out of memory\n"); return 2; }
  long *HIST = l_alloc((size_t)rows * MAXREP * 8);
  long *ROWS[4] = { HIST, NULL, NULL, NULL };
  if (me == 0)
    for (int pe = 1; pe < 4; pe++)
      if (!(ROWS[pe] = malloc((size_t)rows * MAXREP * 8))) { fprintf(stderr, "litmus-c: out of memory\n"); return 2; }
  RNG = 0x9e3779b97f4a7c15ULL * (unsigned long long)(me + 1);
  for (int p = 0; p < NPROGS; p++) {
    const struct prog *pr = &PROGS[p];
    if (match[0] && strcmp(match, "all") != 0 && !strstr(pr->name, match)) continue;
    int nout = 0;
    long n_it = per_family ? (iters + pr->family_size - 1) / pr->family_size : iters;
    n_it = (n_it + inst - 1) / inst * inst;
    long spacing = 0; /* ns; 0: a barrier before each instance */
    for (long first = 1; first <= n_it; first += inst) {
      for (long i = 0; i < inst; i++) {
        use_instance(i);
        pr->reset(first + i);
        OUTV = HIST + (first + i - 1) * MAXREP;
        for (int k = 0; k < MAXREP; k++) { REGS[k] = 253; OUTV[k] = 253; }
      }
      l_barrier();
      long t0 = now_ns(), took[64];
      for (long i = 0; i < inst; i++) {
        use_instance(i);
        if (spacing == 0) { if (i > 0) l_barrier(); }
        else while (now_ns() < t0 + i * spacing) sched_yield();
        long start = now_ns();
        delay();
        pr->run(first + i);
        took[i] = now_ns() - start;
      }
      l_barrier();
      for (long i = 0; i < inst; i++) {
        use_instance(i);
        OUTV = HIST + (first + i - 1) * MAXREP; /* final writes this iteration's row */
        pr->final(first + i);
      }
      for (long a = 1; a < inst; a++) /* insertion sort, for the median */
        for (long b = a; b > 0 && took[b - 1] > took[b]; b--) { long x = took[b]; took[b] = took[b - 1]; took[b - 1] = x; }
      spacing = l_max(took[inst / 2]) * 5 / 4 + 1;
    }
    l_barrier();
    if (me == 0) {
      int wanted[4] = { 0, 0, 0, 0 };
      for (int k = 0; k < pr->nrep; k++) wanted[pr->holder[k]] = 1;
      for (int pe = 1; pe < 4; pe++)
        if (wanted[pe]) l_get(pe, ROWS[pe], HIST, (size_t)n_it * MAXREP);
      for (long it = 1; it <= n_it; it++) {
        long v[MAXREP];
        for (int k = 0; k < pr->nrep; k++) v[k] = ROWS[pr->holder[k]][(it - 1) * MAXREP + k];
        int f = -1;
        for (int o = 0; o < nout; o++) if (memcmp(OUTS[o].v, v, sizeof(long) * (size_t)pr->nrep) == 0) { f = o; break; }
        if (f < 0 && nout < MAXOUT) { f = nout++; memcpy(OUTS[f].v, v, sizeof v); OUTS[f].count = 0; }
        if (f >= 0) OUTS[f].count++;
      }
    }
    /* Holders overwrite HIST with the next program's rows only after PE 0 read them. */
    l_barrier();
    if (me == 0) {
      for (int o = 0; o < nout; o++) {
        printf("litmus-c prog=%s vals=", pr->name);
        for (int k = 0; k < pr->nrep; k++) printf(k ? ",%ld" : "%ld", OUTS[o].v[k]);
        printf(" count=%ld\n", OUTS[o].count);
      }
      fflush(stdout);
    }
  }
  l_barrier();
  if (me == 0) { printf("litmus-c done\n"); fflush(stdout); }
  l_finalize();
  return 0;
}
"#;
