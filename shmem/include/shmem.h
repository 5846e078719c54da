/* OpenSHMEM 1.5 over pgas-comm (libpgas_shmem).
 *
 * The typed families are declared from the type tables below
 * (PGAS_SHMEM_*_TYPES), the same tables as shmem/src/types.rs; the C11
 * generic interfaces are _Generic selections over the tables' base types.
 * Handles: shmem_team_t and shmem_ctx_t are this PE's own small handles.
 * See docs/openshmem.md. */
#ifndef PGAS_SHMEM_H
#define PGAS_SHMEM_H

#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#include <complex.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ constants */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN 256
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING "pgas-comm OpenSHMEM"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

/* pSync / pWrk: accepted and unused (the teams' own areas do the work). */
#define SHMEM_SYNC_VALUE 0L
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define SHMEM_SYNC_SIZE 64
#define SHMEM_BCAST_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_BARRIER_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ------------------------------------------------------- teams, contexts */
typedef struct pgas_shmem_team *shmem_team_t;
typedef struct pgas_shmem_ctx *shmem_ctx_t;
typedef struct {
    int num_contexts;
} shmem_team_config_t;

#define SHMEM_TEAM_INVALID ((shmem_team_t) 0)
#define SHMEM_TEAM_WORLD ((shmem_team_t) 1)
#define SHMEM_TEAM_SHARED ((shmem_team_t) 2)
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

#define SHMEM_CTX_INVALID ((shmem_ctx_t) 0)
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t) 1)
#define SHMEM_CTX_PRIVATE (1L << 0)
#define SHMEM_CTX_SERIALIZED (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

/* ---------------------------------------------------------- type tables */
/* Table 5: standard RMA types (TYPE, TYPENAME). */
#define PGAS_SHMEM_RMA_TYPES(X)                                              \
    X(float, float) X(double, double) X(long double, longdouble)             \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)         \
    X(long, long) X(long long, longlong) X(unsigned char, uchar)            \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)      \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8)                   \
    X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)             \
    X(size_t, size) X(ptrdiff_t, ptrdiff)
/* Table 5 without long double (p / g by value from the library). */
#define PGAS_SHMEM_RMA_VALUE_TYPES(X)                                        \
    X(float, float) X(double, double)                                        \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)         \
    X(long, long) X(long long, longlong) X(unsigned char, uchar)            \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)      \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8)                   \
    X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)             \
    X(size_t, size) X(ptrdiff_t, ptrdiff)
/* Table 6: standard AMO types. */
#define PGAS_SHMEM_AMO_STD_TYPES(X)                                          \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)  \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                \
    X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)                 \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
/* Table 7: extended AMO types. */
#define PGAS_SHMEM_AMO_EXT_TYPES(X)                                          \
    X(float, float) X(double, double) PGAS_SHMEM_AMO_STD_TYPES(X)
/* Table 8: bitwise AMO types. */
#define PGAS_SHMEM_AMO_BITWISE_TYPES(X)                                      \
    X(unsigned int, uint) X(unsigned long, ulong)                            \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)    \
    X(uint32_t, uint32) X(uint64_t, uint64)
/* Table 9: point-to-point synchronization types. */
#define PGAS_SHMEM_P2P_TYPES(X)                                              \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)        \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)    \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)                 \
    X(ptrdiff_t, ptrdiff)
/* Table 10: reduction types. */
#define PGAS_SHMEM_REDUCE_BITWISE_TYPES(X)                                   \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint) \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                \
    X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)   \
    X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)               \
    X(uint64_t, uint64) X(size_t, size)
#define PGAS_SHMEM_REDUCE_MINMAX_TYPES(X)                                    \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)         \
    X(long, long) X(long long, longlong) X(ptrdiff_t, ptrdiff)              \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint) \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                \
    X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)   \
    X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)               \
    X(uint64_t, uint64) X(size_t, size) X(float, float) X(double, double)   \
    X(long double, longdouble)
/* C, and C++ compilers that take _Complex (GCC, Clang), have the complex rows. */
#if defined(__cplusplus) && !defined(__GNUC__)
#define PGAS_SHMEM_REDUCE_ARITH_TYPES(X) PGAS_SHMEM_REDUCE_MINMAX_TYPES(X)
#else
#define PGAS_SHMEM_REDUCE_ARITH_TYPES(X)                                     \
    PGAS_SHMEM_REDUCE_MINMAX_TYPES(X)                                        \
    X(float _Complex, complexf) X(double _Complex, complexd)
#endif
#define PGAS_SHMEM_TO_ALL_INT_TYPES(X)                                       \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define PGAS_SHMEM_TO_ALL_FLOAT_TYPES(X)                                     \
    X(float, float) X(double, double) X(long double, longdouble)
#if defined(__cplusplus) && !defined(__GNUC__)
#define PGAS_SHMEM_TO_ALL_ARITH_TYPES(X)                                     \
    PGAS_SHMEM_TO_ALL_INT_TYPES(X) PGAS_SHMEM_TO_ALL_FLOAT_TYPES(X)
#else
#define PGAS_SHMEM_TO_ALL_ARITH_TYPES(X)                                     \
    PGAS_SHMEM_TO_ALL_INT_TYPES(X) PGAS_SHMEM_TO_ALL_FLOAT_TYPES(X)          \
    X(float _Complex, complexf) X(double _Complex, complexd)
#endif
/* Sized families: (BITS, BYTES). */
#define PGAS_SHMEM_SIZES(X) X(8) X(16) X(32) X(64) X(128)

/* ---------------------------------------------------- setup and query */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void shmem_pcontrol(int level);
void shmem_clear_cache_inv(void);
void shmem_set_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_set_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);

/* --------------------------------------------------------------- memory */
void *shmem_malloc(size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);

/* ---------------------------------------------------- teams, contexts */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* ------------------------------------------------------------------ RMA */
#define PGAS_DECL_RMA(T, N)                                                              \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);             \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);             \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);         \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);         \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t nelems, int pe);                                       \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t nelems, int pe);                                       \
    void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                             int pe);                                                   \
    void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                             int pe);                                                   \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source,            \
                                 size_t nelems, int pe);                                \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source,            \
                                 size_t nelems, int pe);                                \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,\
                              ptrdiff_t sst, size_t nelems, int pe);                    \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,\
                              ptrdiff_t sst, size_t nelems, int pe);                    \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems,               \
                                uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);\
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,           \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op,    \
                                    int pe);                                            \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source,         \
                                    size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                    int sig_op, int pe);                                \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source,     \
                                        size_t nelems, uint64_t *sig_addr,              \
                                        uint64_t signal, int sig_op, int pe);
PGAS_SHMEM_RMA_TYPES(PGAS_DECL_RMA)

#define PGAS_DECL_PG(T, N)                                                     \
    void shmem_##N##_p(T *dest, T value, int pe);                             \
    T shmem_##N##_g(const T *source, int pe);                                 \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);        \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);
PGAS_SHMEM_RMA_VALUE_TYPES(PGAS_DECL_PG)

/* long double p / g: inline over putmem / getmem (no Rust long double). */
void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
static inline void shmem_longdouble_p(long double *dest, long double value, int pe)
{
    shmem_putmem(dest, &value, sizeof value, pe);
}
static inline long double shmem_longdouble_g(const long double *source, int pe)
{
    long double v;
    shmem_getmem(&v, source, sizeof v, pe);
    return v;
}
static inline void shmem_ctx_longdouble_p(shmem_ctx_t ctx, long double *dest,
                                          long double value, int pe)
{
    (void) ctx;
    shmem_putmem(dest, &value, sizeof value, pe);
}
static inline long double shmem_ctx_longdouble_g(shmem_ctx_t ctx, const long double *source,
                                                 int pe)
{
    long double v;
    (void) ctx;
    shmem_getmem(&v, source, sizeof v, pe);
    return v;
}

#define PGAS_DECL_SIZED(B)                                                               \
    void shmem_put##B(void *dest, const void *source, size_t nelems, int pe);           \
    void shmem_get##B(void *dest, const void *source, size_t nelems, int pe);           \
    void shmem_put##B##_nbi(void *dest, const void *source, size_t nelems, int pe);     \
    void shmem_get##B##_nbi(void *dest, const void *source, size_t nelems, int pe);     \
    void shmem_iput##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,    \
                       size_t nelems, int pe);                                           \
    void shmem_iget##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,    \
                       size_t nelems, int pe);                                           \
    void shmem_ctx_put##B(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,\
                          int pe);                                                       \
    void shmem_ctx_get##B(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,\
                          int pe);                                                       \
    void shmem_ctx_put##B##_nbi(shmem_ctx_t ctx, void *dest, const void *source,        \
                                size_t nelems, int pe);                                  \
    void shmem_ctx_get##B##_nbi(shmem_ctx_t ctx, void *dest, const void *source,        \
                                size_t nelems, int pe);                                  \
    void shmem_ctx_iput##B(shmem_ctx_t ctx, void *dest, const void *source,             \
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);         \
    void shmem_ctx_iget##B(shmem_ctx_t ctx, void *dest, const void *source,             \
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);         \
    void shmem_put##B##_signal(void *dest, const void *source, size_t nelems,           \
                               uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    void shmem_put##B##_signal_nbi(void *dest, const void *source, size_t nelems,       \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op,      \
                                   int pe);                                              \
    void shmem_ctx_put##B##_signal(shmem_ctx_t ctx, void *dest, const void *source,     \
                                   size_t nelems, uint64_t *sig_addr, uint64_t signal,   \
                                   int sig_op, int pe);                                  \
    void shmem_ctx_put##B##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                       size_t nelems, uint64_t *sig_addr,                \
                                       uint64_t signal, int sig_op, int pe);
PGAS_SHMEM_SIZES(PGAS_DECL_SIZED)

void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);
void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                         uint64_t signal, int sig_op, int pe);
void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems,
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                                 size_t nelems, uint64_t *sig_addr, uint64_t signal,
                                 int sig_op, int pe);
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* -------------------------------------------------------------- atomics */
#define PGAS_DECL_AMO_EXT(T, N)                                                            \
    T shmem_##N##_atomic_fetch(const T *source, int pe);                                  \
    void shmem_##N##_atomic_set(T *dest, T value, int pe);                                \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe);                                  \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                 \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);                 \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe);             \
    void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe);           \
    T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe);             \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source,     \
                                          int pe);                                         \
    void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value,     \
                                         int pe);
PGAS_SHMEM_AMO_EXT_TYPES(PGAS_DECL_AMO_EXT)

#define PGAS_DECL_AMO_STD(T, N)                                                            \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);                  \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                                      \
    void shmem_##N##_atomic_inc(T *dest, int pe);                                         \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                             \
    void shmem_##N##_atomic_add(T *dest, T value, int pe);                                \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe); \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                     \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);            \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value,      \
                                          int pe);                                         \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);                 \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);                    \
    T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe);        \
    void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe);           \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest,      \
                                                 T cond, T value, int pe);                 \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe);\
    void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest,         \
                                              T value, int pe);
PGAS_SHMEM_AMO_STD_TYPES(PGAS_DECL_AMO_STD)

#define PGAS_DECL_AMO_BIT_OP(T, N, OP)                                                     \
    T shmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe);                            \
    void shmem_##N##_atomic_##OP(T *dest, T value, int pe);                               \
    void shmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe);         \
    T shmem_ctx_##N##_atomic_fetch_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);       \
    void shmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);          \
    void shmem_ctx_##N##_atomic_fetch_##OP##_nbi(shmem_ctx_t ctx, T *fetch, T *dest,      \
                                                 T value, int pe);
#define PGAS_DECL_AMO_BIT(T, N)                                                            \
    PGAS_DECL_AMO_BIT_OP(T, N, and) PGAS_DECL_AMO_BIT_OP(T, N, or)                        \
    PGAS_DECL_AMO_BIT_OP(T, N, xor)
PGAS_SHMEM_AMO_BITWISE_TYPES(PGAS_DECL_AMO_BIT)

/* ------------------------------------------------------------- ordering */
void shmem_fence(void);
void shmem_quiet(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);

/* --------------------------------------------------------- point-to-point */
#define PGAS_DECL_P2P(T, N)                                                                \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                           \
    void shmem_##N##_wait(T *ivar, T cmp_value);                                          \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                  \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,  \
                                    T cmp_value);                                          \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status,         \
                                      int cmp, T cmp_value);                               \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,          \
                                       const int *status, int cmp, T cmp_value);           \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp,         \
                             T cmp_value);                                                 \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,      \
                                T cmp_value);                                              \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,                \
                                 const int *status, int cmp, T cmp_value);                 \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status,    \
                                           int cmp, const T *cmp_values);                  \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,  \
                                             int cmp, const T *cmp_values);                \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,   \
                                              const int *status, int cmp,                  \
                                              const T *cmp_values);                        \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,  \
                                    const T *cmp_values);                                  \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status,        \
                                       int cmp, const T *cmp_values);                      \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,         \
                                        const int *status, int cmp, const T *cmp_values);
PGAS_SHMEM_P2P_TYPES(PGAS_DECL_P2P)

/* ---------------------------------------------------------------- locks */
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* ---------------------------------------------------------- collectives */
void shmem_barrier_all(void);
void shmem_sync_all(void);
int shmem_team_sync(shmem_team_t team);
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void pgas_shmem_sync_active_set(int PE_start, int logPE_stride, int PE_size, long *pSync);
#if defined(__cplusplus)
}
static inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }
static inline void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    pgas_shmem_sync_active_set(PE_start, logPE_stride, PE_size, pSync);
}
extern "C" {
#else
/* shmem_sync(team) (1.5) or shmem_sync(PE_start, logPE_stride, PE_size, pSync). */
#define PGAS_SYNC_N4(_1, _2, _3, _4, NAME, ...) NAME
#define shmem_sync(...) \
    PGAS_SYNC_N4(__VA_ARGS__, pgas_shmem_sync_active_set, ~, ~, shmem_team_sync, ~)(__VA_ARGS__)
#endif

#define PGAS_DECL_MOVE(T, N)                                                               \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, \
                              int PE_root);                                                \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);  \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems);
PGAS_SHMEM_RMA_TYPES(PGAS_DECL_MOVE)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

#define PGAS_DECL_ACTIVE_MOVE(B)                                                           \
    void shmem_broadcast##B(void *dest, const void *source, size_t nelems, int PE_root,   \
                            int PE_start, int logPE_stride, int PE_size, long *pSync);     \
    void shmem_collect##B(void *dest, const void *source, size_t nelems, int PE_start,    \
                          int logPE_stride, int PE_size, long *pSync);                     \
    void shmem_fcollect##B(void *dest, const void *source, size_t nelems, int PE_start,   \
                           int logPE_stride, int PE_size, long *pSync);                    \
    void shmem_alltoall##B(void *dest, const void *source, size_t nelems, int PE_start,   \
                           int logPE_stride, int PE_size, long *pSync);                    \
    void shmem_alltoalls##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size,    \
                            long *pSync);
PGAS_DECL_ACTIVE_MOVE(32)
PGAS_DECL_ACTIVE_MOVE(64)

#define PGAS_DECL_REDUCE(T, N, OP)                                                         \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source,            \
                                  size_t nreduce);
#define PGAS_DECL_REDUCE_BIT(T, N)                                                         \
    PGAS_DECL_REDUCE(T, N, and) PGAS_DECL_REDUCE(T, N, or) PGAS_DECL_REDUCE(T, N, xor)
#define PGAS_DECL_REDUCE_MINMAX(T, N) PGAS_DECL_REDUCE(T, N, min) PGAS_DECL_REDUCE(T, N, max)
#define PGAS_DECL_REDUCE_ARITH(T, N) PGAS_DECL_REDUCE(T, N, sum) PGAS_DECL_REDUCE(T, N, prod)
PGAS_SHMEM_REDUCE_BITWISE_TYPES(PGAS_DECL_REDUCE_BIT)
PGAS_SHMEM_REDUCE_MINMAX_TYPES(PGAS_DECL_REDUCE_MINMAX)
PGAS_SHMEM_REDUCE_ARITH_TYPES(PGAS_DECL_REDUCE_ARITH)

#define PGAS_DECL_TO_ALL(T, N, OP)                                                         \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,   \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define PGAS_DECL_TO_ALL_INT(T, N)                                                         \
    PGAS_DECL_TO_ALL(T, N, and) PGAS_DECL_TO_ALL(T, N, or) PGAS_DECL_TO_ALL(T, N, xor)    \
    PGAS_DECL_TO_ALL(T, N, min) PGAS_DECL_TO_ALL(T, N, max)
#define PGAS_DECL_TO_ALL_FLOAT(T, N) PGAS_DECL_TO_ALL(T, N, min) PGAS_DECL_TO_ALL(T, N, max)
#define PGAS_DECL_TO_ALL_ARITH(T, N) PGAS_DECL_TO_ALL(T, N, sum) PGAS_DECL_TO_ALL(T, N, prod)
PGAS_SHMEM_TO_ALL_INT_TYPES(PGAS_DECL_TO_ALL_INT)
PGAS_SHMEM_TO_ALL_FLOAT_TYPES(PGAS_DECL_TO_ALL_FLOAT)
PGAS_SHMEM_TO_ALL_ARITH_TYPES(PGAS_DECL_TO_ALL_ARITH)

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------- C11 generic interfaces */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#include <shmem-generic.h>
#endif

#endif /* PGAS_SHMEM_H */
