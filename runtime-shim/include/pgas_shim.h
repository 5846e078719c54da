/*
 * pgas_shim.h: the C ABI of pgas-comm's runtime shim, for a PGAS language
 * runtime written in C. Guide: docs/embedding.md.
 *
 * Building against it: install the library (scripts/install PREFIX lays
 * out PREFIX/include/pgas_shim.h, PREFIX/lib/libpgas_shim.so.0 (SONAME) and
 * libpgas_shim.a, PREFIX/lib/pkgconfig/pgas-shim.pc, PREFIX/bin/pgasrun):
 *   export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
 *   cc prog.c $(pkg-config --cflags --libs pgas-shim) -o prog
 * statically (the archive, then its Libs.private: -lfabric -lgcc_s -lutil
 * -lrt -lpthread -lm -ldl -lc):
 *   cc prog.c $(pkg-config --static --cflags --libs pgas-shim |
 *               sed 's/-lpgas_shim/-l:libpgas_shim.a/') -o prog
 * and run it with PREFIX/bin/pgasrun -n 2 ./prog.
 *
 * Conventions
 *  - Every int-returning call returns PGAS_OK (0) or a negative PGAS_ERR_*
 *    code; pgas_last_error() gives this thread's last error message, which
 *    names the bad value. Bad input is an error code, never a crash.
 *  - Locales are int32_t, 0 .. pgas_num_locales()-1.
 *  - Remote addresses are the target's own addresses (void *), as its
 *    pgas_alloc / pgas_alloc_all returned them; every access is checked
 *    against the target's registered heap.
 *  - Transfer lengths must be non-zero and at most the registered heap
 *    size (PGAS_HEAP_SIZE): zero is PGAS_ERR_LENGTH (skip the call).
 *  - Pointers the caller passes must be valid for the length given; for
 *    non-blocking calls, until the handle completes.
 *
 * Kept in sync with runtime-shim/src/ffi/ by runtime-shim/tests/header.rs.
 */
#ifndef PGAS_SHIM_H
#define PGAS_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ----------------------------------------------------------- */
/* The version of this header (semantic versioning; the shared library's
 * SONAME is libpgas_shim.so.MAJOR). pgas_version gives the library's. */
#define PGAS_SHIM_VERSION_MAJOR 0
#define PGAS_SHIM_VERSION_MINOR 1
#define PGAS_SHIM_VERSION_PATCH 0

/* ---- error codes ------------------------------------------------------- */
#define PGAS_OK 0
#define PGAS_ERR_STATE (-1)     /* not initialized / already / finalized / not here */
#define PGAS_ERR_NULL (-2)      /* null pointer argument */
#define PGAS_ERR_LOCALE (-3)    /* locale out of range */
#define PGAS_ERR_LENGTH (-4)    /* zero, oversized or impossible length */
#define PGAS_ERR_ADDRESS (-5)   /* outside the registered heap, or not a live allocation */
#define PGAS_ERR_ALIGN (-6)     /* misaligned atomic target */
#define PGAS_ERR_ATOMIC (-7)    /* atomic type / op / flags not defined */
#define PGAS_ERR_STRIDES (-8)   /* bad strided transfer description */
#define PGAS_ERR_FUNCTION (-9)  /* function id not registered */
#define PGAS_ERR_REMOTE (-10)   /* on-statement body failed at the target */
#define PGAS_ERR_NOMEM (-11)    /* registered heap exhausted */
#define PGAS_ERR_ENV (-12)      /* bad environment variable */
#define PGAS_ERR_COMM (-13)     /* network layer failure */
#define PGAS_ERR_INTERNAL (-14) /* internal failure (task panicked) */
#define PGAS_ERR_COLLECTIVE (-15) /* collective failed on another locale */

/* ---- atomic types, ops, flags ------------------------------------------ */
#define PGAS_TYPE_INT8 0
#define PGAS_TYPE_INT16 1
#define PGAS_TYPE_INT32 2
#define PGAS_TYPE_INT64 3
#define PGAS_TYPE_UINT8 4
#define PGAS_TYPE_UINT16 5
#define PGAS_TYPE_UINT32 6
#define PGAS_TYPE_UINT64 7
#define PGAS_TYPE_REAL32 8
#define PGAS_TYPE_REAL64 9

#define PGAS_AMO_READ 0    /* fetches */
#define PGAS_AMO_WRITE 1
#define PGAS_AMO_XCHG 2    /* fetches */
#define PGAS_AMO_CMPXCHG 3 /* fetches; compare = expected, operand = desired */
#define PGAS_AMO_ADD 4
#define PGAS_AMO_SUB 5
#define PGAS_AMO_AND 6     /* integers only */
#define PGAS_AMO_OR 7      /* integers only */
#define PGAS_AMO_XOR 8     /* integers only */
#define PGAS_AMO_MIN 9
#define PGAS_AMO_MAX 10

#define PGAS_AMO_FETCH 1     /* return the old value in *result */
#define PGAS_AMO_UNORDERED 2 /* buffer until pgas_unordered_fence / task end */

/* ---- opaque types and callbacks ---------------------------------------- */
typedef struct pgas_handle pgas_handle_t; /* a non-blocking PUT/GET */
typedef struct pgas_task pgas_task_t;     /* a task from pgas_begin */
typedef struct pgas_on_ctx pgas_on_ctx_t; /* what an on-statement body sees */
typedef struct pgas_team pgas_team_t;     /* a team (pgas_team_world, splits) */
typedef struct pgas_amo_handle pgas_amo_handle_t; /* a non-blocking fetching atomic */

/* ---- comparisons and signal ops (point-to-point synchronisation) -------- */
#define PGAS_CMP_EQ 0
#define PGAS_CMP_NE 1
#define PGAS_CMP_GT 2
#define PGAS_CMP_GE 3
#define PGAS_CMP_LT 4
#define PGAS_CMP_LE 5
#define PGAS_SIGNAL_SET 0
#define PGAS_SIGNAL_ADD 1

/* ---- reduction ops (teams) --------------------------------------------- */
#define PGAS_OP_SUM 0
#define PGAS_OP_MIN 1
#define PGAS_OP_MAX 2
#define PGAS_OP_AND 3 /* integers only */
#define PGAS_OP_OR 4  /* integers only */
#define PGAS_OP_XOR 5 /* integers only */
#define PGAS_OP_PROD 6

/* An on-statement body: runs on the target locale, as a task on a worker
 * (or in the AM handler thread for the fast kinds). arg is NULL when
 * arg_len is 0; it is valid only during the call. */
typedef void (*pgas_on_fn)(pgas_on_ctx_t *ctx, const void *arg, size_t arg_len);
/* A task body for pgas_begin; arg must be usable from another thread. */
typedef void (*pgas_task_fn)(void *arg);

/* ---- lifecycle --------------------------------------------------------- */
/* Registers body under fid (< 2^63). Before pgas_init every locale registers
 * the same bodies; after it, every locale registers and then barriers before
 * any locale sends fid. */
int pgas_register(uint64_t fid, const char *name, pgas_on_fn body);
int pgas_init(void);                  /* collective */
int32_t pgas_here(void);              /* -1 before init */
int32_t pgas_num_locales(void);       /* -1 before init */
int32_t pgas_num_workers(void);       /* -1 before init */
const char *pgas_mode_name(void);     /* MCM mode; "" before init */
const char *pgas_provider_name(void); /* libfabric provider; "" before init */
int pgas_barrier(void);               /* collective; one caller per locale */
int pgas_finalize(void);              /* collective; from the main program */
void pgas_exit(int status);           /* finalize if needed, then exit(status) */
void pgas_abort(const char *msg);     /* take the whole job down */
const char *pgas_strerror(int err);
/* Copies this thread's last error message (NUL-terminated, truncated to
 * cap); returns its full length. buf may be NULL to ask for the length. */
size_t pgas_last_error(char *buf, size_t cap);
/* The loaded library's version (compare with PGAS_SHIM_VERSION_*: the
 * header a program was built with); any pointer may be NULL (skipped).
 * Returns PGAS_OK; works before pgas_init. */
int pgas_version(int *major, int *minor, int *patch);

/* ---- memory ------------------------------------------------------------ */
int pgas_alloc(size_t size, void **out); /* registered memory on this locale */
int pgas_free(void *p);
/* Collective: size zeroed bytes on every locale; addrs[l] = locale l's
 * address (addrs has pgas_num_locales() entries). */
int pgas_alloc_all(size_t size, void **addrs);
/* Collective: locale 0's len bytes at buf land in buf on every locale.
 * Collectives agree on failure: if one locale's part fails (bad argument,
 * heap exhausted), it gets its own error and every other locale
 * PGAS_ERR_COLLECTIVE naming it; none waits forever. */
int pgas_broadcast(void *buf, size_t len);

/* ---- PUT / GET ----------------------------------------------------------- */
int pgas_put(int32_t locale, void *raddr, const void *src, size_t len);
int pgas_get(void *dst, int32_t locale, const void *raddr, size_t len);
/* Non-blocking: src / dst must not be touched until the handle completes. */
int pgas_put_nb(int32_t locale, void *raddr, const void *src, size_t len, pgas_handle_t **handle);
int pgas_get_nb(void *dst, int32_t locale, const void *raddr, size_t len, pgas_handle_t **handle);
int pgas_test(pgas_handle_t *handle, int *done); /* handle stays valid */
int pgas_wait(pgas_handle_t *handle);            /* waits, releases the handle */
/* Waits until one of n handles (NULL entries skipped) completes, releases it,
 * sets handles[*index] = NULL. All NULL is PGAS_ERR_LENGTH. */
int pgas_wait_any(pgas_handle_t **handles, size_t n, size_t *index);
/* Strided, in bytes: count[0] contiguous bytes per chunk, count[i] (i >= 1)
 * repetitions at level i, rstrides[i-1] / lstrides[i-1] the distance in bytes
 * between repetitions on the remote / local side; levels strides, levels + 1
 * counts, 0 <= levels <= 32. */
int pgas_put_strided(int32_t locale, void *raddr, const size_t *rstrides, const void *src,
                     const size_t *lstrides, const size_t *count, int32_t levels);
int pgas_get_strided(void *dst, const size_t *lstrides, int32_t locale, const void *raddr,
                     const size_t *rstrides, const size_t *count, int32_t levels);
/* Unordered (buffered per task, done by the next pgas_unordered_fence, task
 * end, on-statement end or barrier). A GET's dst must be this locale's
 * registered memory; read it only after the fence. */
int pgas_put_unordered(int32_t locale, void *raddr, const void *src, size_t len);
int pgas_get_unordered(void *dst, int32_t locale, const void *raddr, size_t len);
int pgas_unordered_fence(void);

/* ---- atomics ------------------------------------------------------------- */
/* One atomic on the `type` word at raddr: operand (every op but read) and
 * compare (cmpxchg) point to one value of the type; result receives the old
 * value when the op fetches (read, xchg, cmpxchg, or PGAS_AMO_FETCH).
 * Native where the provider does every op of the type, else through active
 * messages (PGAS_AMO_VIA_AM=1 forces that). */
int pgas_amo(int32_t locale, void *raddr, int type, int op, int flags, const void *operand,
             const void *compare, void *result);

/* ---- on-statements ------------------------------------------------------- */
/* Blocking: the body's reply (pgas_on_reply) is copied to reply; *reply_len
 * (if reply_len is not NULL) gets its length; longer than reply_cap is
 * PGAS_ERR_LENGTH. */
int pgas_execute_on(int32_t locale, uint64_t fid, const void *arg, size_t arg_len, void *reply,
                    size_t reply_cap, size_t *reply_len);
int pgas_execute_on_nb(int32_t locale, uint64_t fid, const void *arg, size_t arg_len);
/* Fast: the body runs in the target's AM handler thread (no communication in it). */
int pgas_execute_on_fast(int32_t locale, uint64_t fid, const void *arg, size_t arg_len,
                         void *reply, size_t reply_cap, size_t *reply_len);
int pgas_execute_on_fast_nb(int32_t locale, uint64_t fid, const void *arg, size_t arg_len);
int32_t pgas_on_caller(const pgas_on_ctx_t *ctx); /* inside a body */
int pgas_on_reply(pgas_on_ctx_t *ctx, const void *data, size_t len);

/* ---- tasks --------------------------------------------------------------- */
/* MCM hooks for a runtime that runs its own tasks: pgas_task_create before a
 * task creates a child (the child must see the creator's stores), and
 * pgas_task_end when a task's body returns (before anyone waiting is
 * released). Tasks from pgas_begin call them by themselves. */
int pgas_task_create(void);
int pgas_task_end(void);
/* A transmit context of its own for the calling thread (a runtime's own
 * thread that communicates; pgas_init binds its caller): 1 bound, 0 none left
 * (stays unbound: correct, slower), < 0 error. pgas_unbind_thread gives it
 * back (a boundary); call it before a bound thread exits. */
int pgas_bind_thread(void);
int pgas_unbind_thread(void);
/* Runs fn(arg) as a task on a worker; task NULL: nobody waits (finalize does). */
int pgas_begin(pgas_task_fn fn, void *arg, pgas_task_t **task);
int pgas_task_wait(pgas_task_t *task); /* waits, releases the handle */

/* ---- typed atomics ------------------------------------------------------- */
/* ---- point-to-point synchronisation ------------------------------------
 * Waiting is on a word of this locale (addr: a local heap address); a task
 * runs other tasks meanwhile. */
int pgas_wait_until(void *addr, int type, int cmp, const void *value);
int pgas_test_local(void *addr, int type, int cmp, const void *value, int *result);
/* PUT, then the uint64 signal word on the same locale: whoever sees the
 * signal sees the data. */
int pgas_put_signal(int32_t locale, void *raddr, const void *src, size_t len, void *sig_raddr,
                    int sig_op, uint64_t value);
/* Quiet: all of this task's operations complete and visible (a boundary).
 * Fence: this task's operations ordered before its next ones. */
int pgas_quiet(void);
int pgas_fence(void);

/* Comm diagnostics (Chapel's CommDiagnostics): per-locale operation counts
 * while counting is on. They include the runtime's own operations (barrier
 * flags, collectives): start and stop around the code of interest. start /
 * stop / reset / get act on this locale; get_all is collective and fills
 * one entry per locale (n must be the number of locales). */
typedef struct pgas_comm_diags {
  uint64_t put, put_bytes, get, get_bytes; /* PUTs / GETs, whatever path */
  uint64_t put_nb, get_nb;                 /* of which non-blocking */
  uint64_t rma_local;                      /* of which copies (mapped path, own heap) */
  uint64_t amo_native, amo_cpu, amo_via_am; /* atomics by route */
  uint64_t on_blocking, on_fast, on_nb;    /* on-statements started here */
  uint64_t on_handled;                     /* on-statement bodies run here */
  uint64_t force_get, force_proof;         /* the MCM mode's forcing operations */
  uint64_t fenced;                         /* operations posted with FI_FENCE */
} pgas_comm_diags_t;
int pgas_comm_diags_start(void);
int pgas_comm_diags_stop(void);
int pgas_comm_diags_reset(void);
int pgas_comm_diags_get(pgas_comm_diags_t *out);
int pgas_comm_diags_get_all(pgas_comm_diags_t *out, size_t n);
/* How many atomics the calling thread left in flight and has not awaited
 * yet (non-blocking ones, and non-fetching ones sent as active messages
 * whose answers wait for the next boundary); pgas_quiet awaits them. */
int pgas_pending_amos(size_t *out);
/* Runs one ready task on a worker: 1 if it ran one, 0 if not. */
int pgas_yield(void);
/* Non-blocking fetching atomic (PGAS_AMO_*): the old value comes with
 * pgas_amo_wait, which releases the handle. */
int pgas_amo_nb(int32_t locale, void *raddr, int type, int op, const void *operand,
                const void *compare, pgas_amo_handle_t **handle);
int pgas_amo_test(pgas_amo_handle_t *handle, int *done);
int pgas_amo_wait(pgas_amo_handle_t *handle, void *result);

/* ---- symmetric memory -------------------------------------------------
 * pgas_alloc_sym: collective, like pgas_alloc_all but at the same heap
 * offset on every locale; pgas_sym_addr: the address on `locale` at the same
 * offset as `local` here (NULL on bad input). */
int pgas_alloc_sym(size_t size, void **addrs);
void *pgas_sym_addr(void *local, int32_t locale);
/* pgas_static_addr: the address on `locale` of the static variable (global
 * or static storage of the executable: .data / .bss) at `local` here, for
 * PUT / GET / atomics on it (NULL on bad input, e.g. a heap or stack
 * address). The executable's writable data is registered at init. */
void *pgas_static_addr(const void *local, int32_t locale);

/* ---- locks (MCS queue locks over atomics) ------------------------------
 * The lock word is 8 bytes of some locale's heap, made free by its owner
 * with pgas_lock_init; the token from acquire goes to release. */
int pgas_lock_init(void *word);
int pgas_lock_acquire(int32_t locale, void *word, uint64_t *token);
int pgas_lock_release(int32_t locale, void *word, uint64_t token);

/* ---- teams and collectives ---------------------------------------------
 * A team is an ordered set of locales (ranks 0..size-1). Every collective is
 * called by one task on every member, in the same order; a failure on one
 * member (e.g. no heap room for its contribution) is returned by all of them.
 * Collectives are MCM boundaries. */
/* The world team; NULL if not initialized. Rank and size: >= 0, or a
 * PGAS_ERR_* code. */
pgas_team_t *pgas_team_world(void);
int pgas_team_rank(pgas_team_t *t);
int pgas_team_size(pgas_team_t *t);
/* Collective over parent: *out is the new team, or NULL for non-members
 * (a colour < 0 joins no team). */
int pgas_team_split_strided(pgas_team_t *parent, int start, int stride, int size,
                            pgas_team_t **out);
int pgas_team_split_color(pgas_team_t *parent, int color, int64_t key, pgas_team_t **out);
/* Split teams only. */
int pgas_team_destroy(pgas_team_t *t);
int pgas_team_barrier(pgas_team_t *t);
/* In place: len bytes of buf at root land in buf on every member. */
int pgas_team_broadcast(pgas_team_t *t, int root, void *buf, size_t len);
/* count elements of type (PGAS_TYPE_*), op PGAS_OP_*; dst at root only. */
int pgas_team_reduce(pgas_team_t *t, int root, int type, int op, const void *src, void *dst,
                     size_t count);
int pgas_team_allreduce(pgas_team_t *t, int type, int op, const void *src, void *dst,
                        size_t count);
/* dst: size * len bytes, rank order. */
int pgas_team_fcollect(pgas_team_t *t, const void *src, void *dst, size_t len);
/* src, dst: size blocks of block bytes; block i of src goes to rank i. */
int pgas_team_alltoall(pgas_team_t *t, const void *src, void *dst, size_t block);

/* pgas_atomic_{write,read,xchg,cmpxchg}_T, pgas_atomic_{add,sub,min,max}_T,
 * pgas_atomic_fetch_{add,sub,min,max}_T, pgas_atomic_{add,sub,min,max}_unordered_T,
 * and for the integer types also and/or/xor in the three forms, for T in
 * int8 .. int64, uint8 .. uint64, real32, real64 (C types int8_t .. double).
 * cmpxchg sets *ok to whether it swapped. */
#define PGAS_ATOMIC_BASIC_(T, CT, CODE)                                                        \
  static inline int pgas_atomic_write_##T(int32_t l, void *a, CT v) {                         \
    return pgas_amo(l, a, CODE, PGAS_AMO_WRITE, 0, &v, NULL, NULL);                            \
  }                                                                                            \
  static inline int pgas_atomic_read_##T(int32_t l, void *a, CT *out) {                       \
    return pgas_amo(l, a, CODE, PGAS_AMO_READ, 0, NULL, NULL, out);                            \
  }                                                                                            \
  static inline int pgas_atomic_xchg_##T(int32_t l, void *a, CT v, CT *old) {                 \
    return pgas_amo(l, a, CODE, PGAS_AMO_XCHG, 0, &v, NULL, old);                              \
  }                                                                                            \
  static inline int pgas_atomic_cmpxchg_##T(int32_t l, void *a, CT expected, CT desired,      \
                                            CT *old, int *ok) {                               \
    CT o;                                                                                      \
    int r = pgas_amo(l, a, CODE, PGAS_AMO_CMPXCHG, 0, &desired, &expected, &o);                \
    if (r == PGAS_OK) {                                                                        \
      if (old) *old = o;                                                                       \
      if (ok) *ok = (o == expected);                                                           \
    }                                                                                          \
    return r;                                                                                  \
  }
#define PGAS_ATOMIC_OP_(T, CT, CODE, NAME, OP)                                                 \
  static inline int pgas_atomic_##NAME##_##T(int32_t l, void *a, CT v) {                      \
    return pgas_amo(l, a, CODE, OP, 0, &v, NULL, NULL);                                        \
  }                                                                                            \
  static inline int pgas_atomic_fetch_##NAME##_##T(int32_t l, void *a, CT v, CT *old) {       \
    return pgas_amo(l, a, CODE, OP, PGAS_AMO_FETCH, &v, NULL, old);                            \
  }                                                                                            \
  static inline int pgas_atomic_##NAME##_unordered_##T(int32_t l, void *a, CT v) {            \
    return pgas_amo(l, a, CODE, OP, PGAS_AMO_UNORDERED, &v, NULL, NULL);                       \
  }
#define PGAS_ATOMIC_ARITH_(T, CT, CODE)                                                        \
  PGAS_ATOMIC_BASIC_(T, CT, CODE)                                                              \
  PGAS_ATOMIC_OP_(T, CT, CODE, add, PGAS_AMO_ADD)                                              \
  PGAS_ATOMIC_OP_(T, CT, CODE, sub, PGAS_AMO_SUB)                                              \
  PGAS_ATOMIC_OP_(T, CT, CODE, min, PGAS_AMO_MIN)                                              \
  PGAS_ATOMIC_OP_(T, CT, CODE, max, PGAS_AMO_MAX)
#define PGAS_ATOMIC_INT_(T, CT, CODE)                                                          \
  PGAS_ATOMIC_ARITH_(T, CT, CODE)                                                              \
  PGAS_ATOMIC_OP_(T, CT, CODE, and, PGAS_AMO_AND)                                              \
  PGAS_ATOMIC_OP_(T, CT, CODE, or, PGAS_AMO_OR)                                                \
  PGAS_ATOMIC_OP_(T, CT, CODE, xor, PGAS_AMO_XOR)

PGAS_ATOMIC_INT_(int8, int8_t, PGAS_TYPE_INT8)
PGAS_ATOMIC_INT_(int16, int16_t, PGAS_TYPE_INT16)
PGAS_ATOMIC_INT_(int32, int32_t, PGAS_TYPE_INT32)
PGAS_ATOMIC_INT_(int64, int64_t, PGAS_TYPE_INT64)
PGAS_ATOMIC_INT_(uint8, uint8_t, PGAS_TYPE_UINT8)
PGAS_ATOMIC_INT_(uint16, uint16_t, PGAS_TYPE_UINT16)
PGAS_ATOMIC_INT_(uint32, uint32_t, PGAS_TYPE_UINT32)
PGAS_ATOMIC_INT_(uint64, uint64_t, PGAS_TYPE_UINT64)
PGAS_ATOMIC_ARITH_(real32, float, PGAS_TYPE_REAL32)
PGAS_ATOMIC_ARITH_(real64, double, PGAS_TYPE_REAL64)

#ifdef __cplusplus
}
#endif

#endif /* PGAS_SHIM_H */
