/* C11 generic interfaces of OpenSHMEM 1.5 (included by shmem.h under C11).
 * Each is a _Generic selection over the base C types of a table (the
 * <stdint.h> names are aliases of these), choosing the typed function; a
 * context as first argument is told apart by the number of arguments. */
#ifndef PGAS_SHMEM_GENERIC_H
#define PGAS_SHMEM_GENERIC_H

/* Never defined: selected only for a type the interface does not take,
 * where the call then fails to compile. */
void pgas_shmem_no_generic(void);

/* Base types of each table: X(TYPE, TYPENAME, SUFFIX). */
#define PGAS_G_RMA(X, S)                                                                 \
    X(float, float, S) X(double, double, S) X(long double, longdouble, S)               \
    X(char, char, S) X(signed char, schar, S) X(short, short, S) X(int, int, S)         \
    X(long, long, S) X(long long, longlong, S) X(unsigned char, uchar, S)               \
    X(unsigned short, ushort, S) X(unsigned int, uint, S) X(unsigned long, ulong, S)    \
    X(unsigned long long, ulonglong, S)
#define PGAS_G_AMO_STD(X, S)                                                             \
    X(int, int, S) X(long, long, S) X(long long, longlong, S) X(unsigned int, uint, S)  \
    X(unsigned long, ulong, S) X(unsigned long long, ulonglong, S)
#define PGAS_G_AMO_EXT(X, S) X(float, float, S) X(double, double, S) PGAS_G_AMO_STD(X, S)
#define PGAS_G_AMO_BIT(X, S)                                                             \
    X(unsigned int, uint, S) X(unsigned long, ulong, S)                                  \
    X(unsigned long long, ulonglong, S) X(int, int32, S) X(long, int64, S)
#define PGAS_G_P2P(X, S)                                                                 \
    X(short, short, S) X(int, int, S) X(long, long, S) X(long long, longlong, S)        \
    X(unsigned short, ushort, S) X(unsigned int, uint, S) X(unsigned long, ulong, S)    \
    X(unsigned long long, ulonglong, S)
#define PGAS_G_RED_BIT(X, S)                                                             \
    X(unsigned char, uchar, S) X(unsigned short, ushort, S) X(unsigned int, uint, S)    \
    X(unsigned long, ulong, S) X(unsigned long long, ulonglong, S)                      \
    X(signed char, int8, S) X(short, int16, S) X(int, int32, S) X(long, int64, S)
#define PGAS_G_RED_MINMAX(X, S)                                                          \
    X(char, char, S) X(signed char, schar, S) X(short, short, S) X(int, int, S)         \
    X(long, long, S) X(long long, longlong, S) X(unsigned char, uchar, S)               \
    X(unsigned short, ushort, S) X(unsigned int, uint, S) X(unsigned long, ulong, S)    \
    X(unsigned long long, ulonglong, S) X(float, float, S) X(double, double, S)         \
    X(long double, longdouble, S)
#define PGAS_G_RED_ARITH(X, S)                                                           \
    PGAS_G_RED_MINMAX(X, S) X(float _Complex, complexf, S) X(double _Complex, complexd, S)

#define PGAS_GA(T, N, S) T: shmem_##N##_##S,
#define PGAS_GAC(T, N, S) T: shmem_ctx_##N##_##S,

/* Selections: on the first argument; after a context; after a team. */
#define PGAS_GEN1(LIST, S, a1, ...) \
    _Generic(*(a1), LIST(PGAS_GA, S) default: pgas_shmem_no_generic)(a1, __VA_ARGS__)
#define PGAS_GENC(LIST, S, ctx, a1, ...) \
    _Generic(*(a1), LIST(PGAS_GAC, S) default: pgas_shmem_no_generic)(ctx, a1, __VA_ARGS__)
#define PGAS_GENT(LIST, S, team, a1, ...) \
    _Generic(*(a1), LIST(PGAS_GA, S) default: pgas_shmem_no_generic)(team, a1, __VA_ARGS__)

/* The name at position k+1 of the arguments: with k arguments the plain
 * form, with k+1 the context form. */
#define PGAS_N3(_1, _2, _3, NAME, ...) NAME
#define PGAS_N4(_1, _2, _3, _4, NAME, ...) NAME
#define PGAS_N5(_1, _2, _3, _4, _5, NAME, ...) NAME
#define PGAS_N6(_1, _2, _3, _4, _5, _6, NAME, ...) NAME
#define PGAS_N7(_1, _2, _3, _4, _5, _6, _7, NAME, ...) NAME
#define PGAS_N8(_1, _2, _3, _4, _5, _6, _7, _8, NAME, ...) NAME
#define PGAS_CTX2(L, S, ...) PGAS_N3(__VA_ARGS__, PGAS_GENC, PGAS_GEN1, ~)(L, S, __VA_ARGS__)
#define PGAS_CTX3(L, S, ...) PGAS_N4(__VA_ARGS__, PGAS_GENC, PGAS_GEN1, ~)(L, S, __VA_ARGS__)
#define PGAS_CTX4(L, S, ...) PGAS_N5(__VA_ARGS__, PGAS_GENC, PGAS_GEN1, ~)(L, S, __VA_ARGS__)
#define PGAS_CTX5(L, S, ...) PGAS_N6(__VA_ARGS__, PGAS_GENC, PGAS_GEN1, ~)(L, S, __VA_ARGS__)
#define PGAS_CTX6(L, S, ...) PGAS_N7(__VA_ARGS__, PGAS_GENC, PGAS_GEN1, ~)(L, S, __VA_ARGS__)
#define PGAS_CTX7(L, S, ...) PGAS_N8(__VA_ARGS__, PGAS_GENC, PGAS_GEN1, ~)(L, S, __VA_ARGS__)

/* RMA */
#define shmem_put(...) PGAS_CTX4(PGAS_G_RMA, put, __VA_ARGS__)
#define shmem_get(...) PGAS_CTX4(PGAS_G_RMA, get, __VA_ARGS__)
#define shmem_put_nbi(...) PGAS_CTX4(PGAS_G_RMA, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) PGAS_CTX4(PGAS_G_RMA, get_nbi, __VA_ARGS__)
#define shmem_iput(...) PGAS_CTX6(PGAS_G_RMA, iput, __VA_ARGS__)
#define shmem_iget(...) PGAS_CTX6(PGAS_G_RMA, iget, __VA_ARGS__)
#define shmem_p(...) PGAS_CTX3(PGAS_G_RMA, p, __VA_ARGS__)
#define shmem_g(...) PGAS_CTX2(PGAS_G_RMA, g, __VA_ARGS__)
#define shmem_put_signal(...) PGAS_CTX7(PGAS_G_RMA, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) PGAS_CTX7(PGAS_G_RMA, put_signal_nbi, __VA_ARGS__)

/* AMO */
#define shmem_atomic_fetch(...) PGAS_CTX2(PGAS_G_AMO_EXT, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...) PGAS_CTX3(PGAS_G_AMO_EXT, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) PGAS_CTX3(PGAS_G_AMO_EXT, atomic_swap, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) PGAS_CTX3(PGAS_G_AMO_EXT, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) PGAS_CTX4(PGAS_G_AMO_EXT, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) \
    PGAS_CTX4(PGAS_G_AMO_STD, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
    PGAS_CTX5(PGAS_G_AMO_STD, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) PGAS_CTX2(PGAS_G_AMO_STD, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...) PGAS_CTX2(PGAS_G_AMO_STD, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) \
    PGAS_CTX3(PGAS_G_AMO_STD, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) PGAS_CTX3(PGAS_G_AMO_STD, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...) PGAS_CTX3(PGAS_G_AMO_STD, atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) \
    PGAS_CTX4(PGAS_G_AMO_STD, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) PGAS_CTX3(PGAS_G_AMO_BIT, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...) PGAS_CTX3(PGAS_G_AMO_BIT, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
    PGAS_CTX4(PGAS_G_AMO_BIT, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) PGAS_CTX3(PGAS_G_AMO_BIT, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...) PGAS_CTX3(PGAS_G_AMO_BIT, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) \
    PGAS_CTX4(PGAS_G_AMO_BIT, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) PGAS_CTX3(PGAS_G_AMO_BIT, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...) PGAS_CTX3(PGAS_G_AMO_BIT, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
    PGAS_CTX4(PGAS_G_AMO_BIT, atomic_fetch_xor_nbi, __VA_ARGS__)

/* Point-to-point */
#define shmem_wait_until(...) PGAS_GEN1(PGAS_G_P2P, wait_until, __VA_ARGS__)
#define shmem_wait_until_all(...) PGAS_GEN1(PGAS_G_P2P, wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...) PGAS_GEN1(PGAS_G_P2P, wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...) PGAS_GEN1(PGAS_G_P2P, wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...) \
    PGAS_GEN1(PGAS_G_P2P, wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...) \
    PGAS_GEN1(PGAS_G_P2P, wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...) \
    PGAS_GEN1(PGAS_G_P2P, wait_until_some_vector, __VA_ARGS__)
#define shmem_test(...) PGAS_GEN1(PGAS_G_P2P, test, __VA_ARGS__)
#define shmem_test_all(...) PGAS_GEN1(PGAS_G_P2P, test_all, __VA_ARGS__)
#define shmem_test_any(...) PGAS_GEN1(PGAS_G_P2P, test_any, __VA_ARGS__)
#define shmem_test_some(...) PGAS_GEN1(PGAS_G_P2P, test_some, __VA_ARGS__)
#define shmem_test_all_vector(...) PGAS_GEN1(PGAS_G_P2P, test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...) PGAS_GEN1(PGAS_G_P2P, test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...) PGAS_GEN1(PGAS_G_P2P, test_some_vector, __VA_ARGS__)
#define shmem_wait(...) PGAS_GEN1(PGAS_G_P2P, wait, __VA_ARGS__)

/* Deprecated 1.3 atomic names (no context forms). */
#define shmem_fetch(...) PGAS_GEN1(PGAS_G_AMO_EXT, fetch, __VA_ARGS__)
#define shmem_set(...) PGAS_GEN1(PGAS_G_AMO_EXT, set, __VA_ARGS__)
#define shmem_swap(...) PGAS_GEN1(PGAS_G_AMO_EXT, swap, __VA_ARGS__)
#define shmem_cswap(...) PGAS_GEN1(PGAS_G_AMO_STD, cswap, __VA_ARGS__)
#define shmem_finc(...) PGAS_GEN1(PGAS_G_AMO_STD, finc, __VA_ARGS__)
#define shmem_inc(...) PGAS_GEN1(PGAS_G_AMO_STD, inc, __VA_ARGS__)
#define shmem_fadd(...) PGAS_GEN1(PGAS_G_AMO_STD, fadd, __VA_ARGS__)
#define shmem_add(...) PGAS_GEN1(PGAS_G_AMO_STD, add, __VA_ARGS__)

/* Team collectives */
#define shmem_broadcast(...) PGAS_GENT(PGAS_G_RMA, broadcast, __VA_ARGS__)
#define shmem_collect(...) PGAS_GENT(PGAS_G_RMA, collect, __VA_ARGS__)
#define shmem_fcollect(...) PGAS_GENT(PGAS_G_RMA, fcollect, __VA_ARGS__)
#define shmem_alltoall(...) PGAS_GENT(PGAS_G_RMA, alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) PGAS_GENT(PGAS_G_RMA, alltoalls, __VA_ARGS__)
#define shmem_and_reduce(...) PGAS_GENT(PGAS_G_RED_BIT, and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...) PGAS_GENT(PGAS_G_RED_BIT, or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...) PGAS_GENT(PGAS_G_RED_BIT, xor_reduce, __VA_ARGS__)
#define shmem_min_reduce(...) PGAS_GENT(PGAS_G_RED_MINMAX, min_reduce, __VA_ARGS__)
#define shmem_max_reduce(...) PGAS_GENT(PGAS_G_RED_MINMAX, max_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...) PGAS_GENT(PGAS_G_RED_ARITH, sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...) PGAS_GENT(PGAS_G_RED_ARITH, prod_reduce, __VA_ARGS__)

#endif /* PGAS_SHMEM_GENERIC_H */
