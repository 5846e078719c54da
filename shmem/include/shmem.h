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
/* Table 5: standard RMA types (TYPE, TYPENAME). */
#define PGAS_SHMEM_RMA_TYPES(X) PGAS_SHMEM_RMA_VALUE_TYPES(X) X(long double, longdouble)
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

#define PGAS_FN(name) shmem_##name
#include <shmem-api.h>
#undef PGAS_FN

/* 1.2 names of setup and memory (deprecated). */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
void *shmalloc(size_t size);
void shfree(void *ptr);
void *shrealloc(void *ptr, size_t size);
void *shmemalign(size_t alignment, size_t size);

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

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------- C11 generic interfaces */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#include <shmem-generic.h>
#endif

#endif /* PGAS_SHMEM_H */
