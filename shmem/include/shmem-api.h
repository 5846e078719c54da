/* The function declarations of shmem.h, with every name written
 * PGAS_FN(name): shmem.h includes this file with PGAS_FN(n) = shmem_##n,
 * pshmem.h (the profiling interface) again with PGAS_FN(n) = pshmem_##n.
 * No include guard on purpose; include <shmem.h> or <pshmem.h>, not this. */
#ifndef PGAS_FN
#error "shmem-api.h is included by shmem.h / pshmem.h only"
#endif

/* ---------------------------------------------------- setup and query */
void PGAS_FN(init)(void);
int PGAS_FN(init_thread)(int requested, int *provided);
void PGAS_FN(query_thread)(int *provided);
void PGAS_FN(finalize)(void);
void PGAS_FN(global_exit)(int status);
int PGAS_FN(my_pe)(void);
int PGAS_FN(n_pes)(void);
int PGAS_FN(pe_accessible)(int pe);
int PGAS_FN(addr_accessible)(const void *addr, int pe);
void *PGAS_FN(ptr)(const void *dest, int pe);
void PGAS_FN(info_get_version)(int *major, int *minor);
void PGAS_FN(info_get_name)(char *name);
void PGAS_FN(pcontrol)(int level);
void PGAS_FN(clear_cache_inv)(void);
void PGAS_FN(set_cache_inv)(void);
void PGAS_FN(clear_cache_line_inv)(void *dest);
void PGAS_FN(set_cache_line_inv)(void *dest);
void PGAS_FN(udcflush)(void);
void PGAS_FN(udcflush_line)(void *dest);

/* --------------------------------------------------------------- memory */
void *PGAS_FN(malloc)(size_t size);
void *PGAS_FN(malloc_with_hints)(size_t size, long hints);
void *PGAS_FN(calloc)(size_t count, size_t size);
void *PGAS_FN(align)(size_t alignment, size_t size);
void *PGAS_FN(realloc)(void *ptr, size_t size);
void PGAS_FN(free)(void *ptr);

/* ---------------------------------------------------- teams, contexts */
int PGAS_FN(team_my_pe)(shmem_team_t team);
int PGAS_FN(team_n_pes)(shmem_team_t team);
int PGAS_FN(team_get_config)(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int PGAS_FN(team_translate_pe)(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int PGAS_FN(team_split_strided)(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int PGAS_FN(team_split_2d)(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void PGAS_FN(team_destroy)(shmem_team_t team);
void *PGAS_FN(team_ptr)(shmem_team_t team, const void *dest, int pe);
int PGAS_FN(ctx_create)(long options, shmem_ctx_t *ctx);
int PGAS_FN(team_create_ctx)(shmem_team_t team, long options, shmem_ctx_t *ctx);
void PGAS_FN(ctx_destroy)(shmem_ctx_t ctx);
int PGAS_FN(ctx_get_team)(shmem_ctx_t ctx, shmem_team_t *team);

/* ------------------------------------------------------------------ RMA */
#define PGAS_DECL_RMA(T, N)                                                                 \
    void PGAS_FN(N##_put)(T *dest, const T *source, size_t nelems, int pe);                 \
    void PGAS_FN(N##_get)(T *dest, const T *source, size_t nelems, int pe);                 \
    void PGAS_FN(N##_put_nbi)(T *dest, const T *source, size_t nelems, int pe);             \
    void PGAS_FN(N##_get_nbi)(T *dest, const T *source, size_t nelems, int pe);             \
    void PGAS_FN(N##_iput)(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,          \
                          size_t nelems, int pe);                                           \
    void PGAS_FN(N##_iget)(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,          \
                          size_t nelems, int pe);                                           \
    void PGAS_FN(ctx_##N##_put)(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,   \
                             int pe);                                                       \
    void PGAS_FN(ctx_##N##_get)(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,   \
                             int pe);                                                       \
    void PGAS_FN(ctx_##N##_put_nbi)(shmem_ctx_t ctx, T *dest, const T *source,              \
                                 size_t nelems, int pe);                                    \
    void PGAS_FN(ctx_##N##_get_nbi)(shmem_ctx_t ctx, T *dest, const T *source,              \
                                 size_t nelems, int pe);                                    \
    void PGAS_FN(ctx_##N##_iput)(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,  \
                              ptrdiff_t sst, size_t nelems, int pe);                        \
    void PGAS_FN(ctx_##N##_iget)(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,  \
                              ptrdiff_t sst, size_t nelems, int pe);                        \
    void PGAS_FN(N##_put_signal)(T *dest, const T *source, size_t nelems,                   \
                                uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);   \
    void PGAS_FN(N##_put_signal_nbi)(T *dest, const T *source, size_t nelems,               \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op,        \
                                    int pe);                                                \
    void PGAS_FN(ctx_##N##_put_signal)(shmem_ctx_t ctx, T *dest, const T *source,           \
                                    size_t nelems, uint64_t *sig_addr, uint64_t signal,     \
                                    int sig_op, int pe);                                    \
    void PGAS_FN(ctx_##N##_put_signal_nbi)(shmem_ctx_t ctx, T *dest, const T *source,       \
                                        size_t nelems, uint64_t *sig_addr,                  \
                                        uint64_t signal, int sig_op, int pe);
PGAS_SHMEM_RMA_TYPES(PGAS_DECL_RMA)

#define PGAS_DECL_PG(T, N)                                                                  \
    void PGAS_FN(N##_p)(T *dest, T value, int pe);                                          \
    T PGAS_FN(N##_g)(const T *source, int pe);                                              \
    void PGAS_FN(ctx_##N##_p)(shmem_ctx_t ctx, T *dest, T value, int pe);                   \
    T PGAS_FN(ctx_##N##_g)(shmem_ctx_t ctx, const T *source, int pe);
PGAS_SHMEM_RMA_VALUE_TYPES(PGAS_DECL_PG)

/* long double p / g: inline over putmem / getmem (no Rust long double). */
void PGAS_FN(putmem)(void *dest, const void *source, size_t nelems, int pe);
void PGAS_FN(getmem)(void *dest, const void *source, size_t nelems, int pe);
static inline void PGAS_FN(longdouble_p)(long double *dest, long double value, int pe)
{
    PGAS_FN(putmem)(dest, &value, sizeof value, pe);
}
static inline long double PGAS_FN(longdouble_g)(const long double *source, int pe)
{
    long double v;
    PGAS_FN(getmem)(&v, source, sizeof v, pe);
    return v;
}
static inline void PGAS_FN(ctx_longdouble_p)(shmem_ctx_t ctx, long double *dest,
                                          long double value, int pe)
{
    (void) ctx;
    PGAS_FN(putmem)(dest, &value, sizeof value, pe);
}
static inline long double PGAS_FN(ctx_longdouble_g)(shmem_ctx_t ctx, const long double *source,
                                                 int pe)
{
    long double v;
    (void) ctx;
    PGAS_FN(getmem)(&v, source, sizeof v, pe);
    return v;
}

#define PGAS_DECL_SIZED(B)                                                                  \
    void PGAS_FN(put##B)(void *dest, const void *source, size_t nelems, int pe);            \
    void PGAS_FN(get##B)(void *dest, const void *source, size_t nelems, int pe);            \
    void PGAS_FN(put##B##_nbi)(void *dest, const void *source, size_t nelems, int pe);      \
    void PGAS_FN(get##B##_nbi)(void *dest, const void *source, size_t nelems, int pe);      \
    void PGAS_FN(iput##B)(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,     \
                       size_t nelems, int pe);                                              \
    void PGAS_FN(iget##B)(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,     \
                       size_t nelems, int pe);                                              \
    void PGAS_FN(ctx_put##B)(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                          int pe);                                                          \
    void PGAS_FN(ctx_get##B)(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                          int pe);                                                          \
    void PGAS_FN(ctx_put##B##_nbi)(shmem_ctx_t ctx, void *dest, const void *source,         \
                                size_t nelems, int pe);                                     \
    void PGAS_FN(ctx_get##B##_nbi)(shmem_ctx_t ctx, void *dest, const void *source,         \
                                size_t nelems, int pe);                                     \
    void PGAS_FN(ctx_iput##B)(shmem_ctx_t ctx, void *dest, const void *source,              \
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);            \
    void PGAS_FN(ctx_iget##B)(shmem_ctx_t ctx, void *dest, const void *source,              \
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);            \
    void PGAS_FN(put##B##_signal)(void *dest, const void *source, size_t nelems,            \
                               uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);    \
    void PGAS_FN(put##B##_signal_nbi)(void *dest, const void *source, size_t nelems,        \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op,         \
                                   int pe);                                                 \
    void PGAS_FN(ctx_put##B##_signal)(shmem_ctx_t ctx, void *dest, const void *source,      \
                                   size_t nelems, uint64_t *sig_addr, uint64_t signal,      \
                                   int sig_op, int pe);                                     \
    void PGAS_FN(ctx_put##B##_signal_nbi)(shmem_ctx_t ctx, void *dest, const void *source,  \
                                       size_t nelems, uint64_t *sig_addr,                   \
                                       uint64_t signal, int sig_op, int pe);
PGAS_SHMEM_SIZES(PGAS_DECL_SIZED)

void PGAS_FN(putmem_nbi)(void *dest, const void *source, size_t nelems, int pe);
void PGAS_FN(getmem_nbi)(void *dest, const void *source, size_t nelems, int pe);
void PGAS_FN(ctx_putmem)(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void PGAS_FN(ctx_getmem)(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void PGAS_FN(ctx_putmem_nbi)(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);
void PGAS_FN(ctx_getmem_nbi)(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);
void PGAS_FN(putmem_signal)(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                         uint64_t signal, int sig_op, int pe);
void PGAS_FN(putmem_signal_nbi)(void *dest, const void *source, size_t nelems,
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
void PGAS_FN(ctx_putmem_signal)(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
void PGAS_FN(ctx_putmem_signal_nbi)(shmem_ctx_t ctx, void *dest, const void *source,
                                 size_t nelems, uint64_t *sig_addr, uint64_t signal,
                                 int sig_op, int pe);
uint64_t PGAS_FN(signal_fetch)(const uint64_t *sig_addr);
uint64_t PGAS_FN(signal_wait_until)(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* -------------------------------------------------------------- atomics */
#define PGAS_DECL_AMO_EXT(T, N)                                                             \
    T PGAS_FN(N##_atomic_fetch)(const T *source, int pe);                                   \
    void PGAS_FN(N##_atomic_set)(T *dest, T value, int pe);                                 \
    T PGAS_FN(N##_atomic_swap)(T *dest, T value, int pe);                                   \
    void PGAS_FN(N##_atomic_fetch_nbi)(T *fetch, const T *source, int pe);                  \
    void PGAS_FN(N##_atomic_swap_nbi)(T *fetch, T *dest, T value, int pe);                  \
    T PGAS_FN(ctx_##N##_atomic_fetch)(shmem_ctx_t ctx, const T *source, int pe);            \
    void PGAS_FN(ctx_##N##_atomic_set)(shmem_ctx_t ctx, T *dest, T value, int pe);          \
    T PGAS_FN(ctx_##N##_atomic_swap)(shmem_ctx_t ctx, T *dest, T value, int pe);            \
    void PGAS_FN(ctx_##N##_atomic_fetch_nbi)(shmem_ctx_t ctx, T *fetch, const T *source,    \
                                          int pe);                                          \
    void PGAS_FN(ctx_##N##_atomic_swap_nbi)(shmem_ctx_t ctx, T *fetch, T *dest, T value,    \
                                         int pe);
PGAS_SHMEM_AMO_EXT_TYPES(PGAS_DECL_AMO_EXT)

#define PGAS_DECL_AMO_STD(T, N)                                                             \
    T PGAS_FN(N##_atomic_compare_swap)(T *dest, T cond, T value, int pe);                   \
    T PGAS_FN(N##_atomic_fetch_inc)(T *dest, int pe);                                       \
    void PGAS_FN(N##_atomic_inc)(T *dest, int pe);                                          \
    T PGAS_FN(N##_atomic_fetch_add)(T *dest, T value, int pe);                              \
    void PGAS_FN(N##_atomic_add)(T *dest, T value, int pe);                                 \
    void PGAS_FN(N##_atomic_compare_swap_nbi)(T *fetch, T *dest, T cond, T value, int pe);  \
    void PGAS_FN(N##_atomic_fetch_inc_nbi)(T *fetch, T *dest, int pe);                      \
    void PGAS_FN(N##_atomic_fetch_add_nbi)(T *fetch, T *dest, T value, int pe);             \
    T PGAS_FN(ctx_##N##_atomic_compare_swap)(shmem_ctx_t ctx, T *dest, T cond, T value,     \
                                          int pe);                                          \
    T PGAS_FN(ctx_##N##_atomic_fetch_inc)(shmem_ctx_t ctx, T *dest, int pe);                \
    void PGAS_FN(ctx_##N##_atomic_inc)(shmem_ctx_t ctx, T *dest, int pe);                   \
    T PGAS_FN(ctx_##N##_atomic_fetch_add)(shmem_ctx_t ctx, T *dest, T value, int pe);       \
    void PGAS_FN(ctx_##N##_atomic_add)(shmem_ctx_t ctx, T *dest, T value, int pe);          \
    void PGAS_FN(ctx_##N##_atomic_compare_swap_nbi)(shmem_ctx_t ctx, T *fetch, T *dest,     \
                                                 T cond, T value, int pe);                  \
    void PGAS_FN(ctx_##N##_atomic_fetch_inc_nbi)(shmem_ctx_t ctx, T *fetch, T *dest, int pe); \
    void PGAS_FN(ctx_##N##_atomic_fetch_add_nbi)(shmem_ctx_t ctx, T *fetch, T *dest,        \
                                              T value, int pe);
PGAS_SHMEM_AMO_STD_TYPES(PGAS_DECL_AMO_STD)

#define PGAS_DECL_AMO_BIT_OP(T, N, OP)                                                      \
    T PGAS_FN(N##_atomic_fetch_##OP)(T *dest, T value, int pe);                             \
    void PGAS_FN(N##_atomic_##OP)(T *dest, T value, int pe);                                \
    void PGAS_FN(N##_atomic_fetch_##OP##_nbi)(T *fetch, T *dest, T value, int pe);          \
    T PGAS_FN(ctx_##N##_atomic_fetch_##OP)(shmem_ctx_t ctx, T *dest, T value, int pe);      \
    void PGAS_FN(ctx_##N##_atomic_##OP)(shmem_ctx_t ctx, T *dest, T value, int pe);         \
    void PGAS_FN(ctx_##N##_atomic_fetch_##OP##_nbi)(shmem_ctx_t ctx, T *fetch, T *dest,     \
                                                 T value, int pe);
#define PGAS_DECL_AMO_BIT(T, N)                                                             \
    PGAS_DECL_AMO_BIT_OP(T, N, and) PGAS_DECL_AMO_BIT_OP(T, N, or)                          \
    PGAS_DECL_AMO_BIT_OP(T, N, xor)
PGAS_SHMEM_AMO_BITWISE_TYPES(PGAS_DECL_AMO_BIT)

/* ------------------------------------------------------------- ordering */
void PGAS_FN(fence)(void);
void PGAS_FN(quiet)(void);
void PGAS_FN(ctx_fence)(shmem_ctx_t ctx);
void PGAS_FN(ctx_quiet)(shmem_ctx_t ctx);

/* --------------------------------------------------------- point-to-point */
#define PGAS_DECL_P2P(T, N)                                                                 \
    void PGAS_FN(N##_wait_until)(T *ivar, int cmp, T cmp_value);                            \
    void PGAS_FN(N##_wait)(T *ivar, T cmp_value);                                           \
    int PGAS_FN(N##_test)(T *ivar, int cmp, T cmp_value);                                   \
    void PGAS_FN(N##_wait_until_all)(T *ivars, size_t nelems, const int *status, int cmp,   \
                                    T cmp_value);                                           \
    size_t PGAS_FN(N##_wait_until_any)(T *ivars, size_t nelems, const int *status,          \
                                      int cmp, T cmp_value);                                \
    size_t PGAS_FN(N##_wait_until_some)(T *ivars, size_t nelems, size_t *indices,           \
                                       const int *status, int cmp, T cmp_value);            \
    int PGAS_FN(N##_test_all)(T *ivars, size_t nelems, const int *status, int cmp,          \
                             T cmp_value);                                                  \
    size_t PGAS_FN(N##_test_any)(T *ivars, size_t nelems, const int *status, int cmp,       \
                                T cmp_value);                                               \
    size_t PGAS_FN(N##_test_some)(T *ivars, size_t nelems, size_t *indices,                 \
                                 const int *status, int cmp, T cmp_value);                  \
    void PGAS_FN(N##_wait_until_all_vector)(T *ivars, size_t nelems, const int *status,     \
                                           int cmp, const T *cmp_values);                   \
    size_t PGAS_FN(N##_wait_until_any_vector)(T *ivars, size_t nelems, const int *status,   \
                                             int cmp, const T *cmp_values);                 \
    size_t PGAS_FN(N##_wait_until_some_vector)(T *ivars, size_t nelems, size_t *indices,    \
                                              const int *status, int cmp,                   \
                                              const T *cmp_values);                         \
    int PGAS_FN(N##_test_all_vector)(T *ivars, size_t nelems, const int *status, int cmp,   \
                                    const T *cmp_values);                                   \
    size_t PGAS_FN(N##_test_any_vector)(T *ivars, size_t nelems, const int *status,         \
                                       int cmp, const T *cmp_values);                       \
    size_t PGAS_FN(N##_test_some_vector)(T *ivars, size_t nelems, size_t *indices,          \
                                        const int *status, int cmp, const T *cmp_values);
PGAS_SHMEM_P2P_TYPES(PGAS_DECL_P2P)

/* ---------------------------------------------------------------- locks */
void PGAS_FN(set_lock)(long *lock);
void PGAS_FN(clear_lock)(long *lock);
int PGAS_FN(test_lock)(long *lock);

/* ---------------------------------------------------------- collectives */
void PGAS_FN(barrier_all)(void);
void PGAS_FN(sync_all)(void);
int PGAS_FN(team_sync)(shmem_team_t team);
void PGAS_FN(barrier)(int PE_start, int logPE_stride, int PE_size, long *pSync);

#define PGAS_DECL_MOVE(T, N)                                                                \
    int PGAS_FN(N##_broadcast)(shmem_team_t team, T *dest, const T *source, size_t nelems,  \
                              int PE_root);                                                 \
    int PGAS_FN(N##_collect)(shmem_team_t team, T *dest, const T *source, size_t nelems);   \
    int PGAS_FN(N##_fcollect)(shmem_team_t team, T *dest, const T *source, size_t nelems);  \
    int PGAS_FN(N##_alltoall)(shmem_team_t team, T *dest, const T *source, size_t nelems);  \
    int PGAS_FN(N##_alltoalls)(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,  \
                              ptrdiff_t sst, size_t nelems);
PGAS_SHMEM_RMA_TYPES(PGAS_DECL_MOVE)
int PGAS_FN(broadcastmem)(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int PGAS_FN(collectmem)(shmem_team_t team, void *dest, const void *source, size_t nelems);
int PGAS_FN(fcollectmem)(shmem_team_t team, void *dest, const void *source, size_t nelems);
int PGAS_FN(alltoallmem)(shmem_team_t team, void *dest, const void *source, size_t nelems);
int PGAS_FN(alltoallsmem)(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

#define PGAS_DECL_ACTIVE_MOVE(B)                                                            \
    void PGAS_FN(broadcast##B)(void *dest, const void *source, size_t nelems, int PE_root,  \
                            int PE_start, int logPE_stride, int PE_size, long *pSync);      \
    void PGAS_FN(collect##B)(void *dest, const void *source, size_t nelems, int PE_start,   \
                          int logPE_stride, int PE_size, long *pSync);                      \
    void PGAS_FN(fcollect##B)(void *dest, const void *source, size_t nelems, int PE_start,  \
                           int logPE_stride, int PE_size, long *pSync);                     \
    void PGAS_FN(alltoall##B)(void *dest, const void *source, size_t nelems, int PE_start,  \
                           int logPE_stride, int PE_size, long *pSync);                     \
    void PGAS_FN(alltoalls##B)(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size,     \
                            long *pSync);
PGAS_DECL_ACTIVE_MOVE(32)
PGAS_DECL_ACTIVE_MOVE(64)

#define PGAS_DECL_REDUCE(T, N, OP)                                                          \
    int PGAS_FN(N##_##OP##_reduce)(shmem_team_t team, T *dest, const T *source,             \
                                  size_t nreduce);
#define PGAS_DECL_REDUCE_BIT(T, N)                                                          \
    PGAS_DECL_REDUCE(T, N, and) PGAS_DECL_REDUCE(T, N, or) PGAS_DECL_REDUCE(T, N, xor)
#define PGAS_DECL_REDUCE_MINMAX(T, N) PGAS_DECL_REDUCE(T, N, min) PGAS_DECL_REDUCE(T, N, max)
#define PGAS_DECL_REDUCE_ARITH(T, N) PGAS_DECL_REDUCE(T, N, sum) PGAS_DECL_REDUCE(T, N, prod)
PGAS_SHMEM_REDUCE_BITWISE_TYPES(PGAS_DECL_REDUCE_BIT)
PGAS_SHMEM_REDUCE_MINMAX_TYPES(PGAS_DECL_REDUCE_MINMAX)
PGAS_SHMEM_REDUCE_ARITH_TYPES(PGAS_DECL_REDUCE_ARITH)

#define PGAS_DECL_TO_ALL(T, N, OP)                                                          \
    void PGAS_FN(N##_##OP##_to_all)(T *dest, const T *source, int nreduce, int PE_start,    \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define PGAS_DECL_TO_ALL_INT(T, N)                                                          \
    PGAS_DECL_TO_ALL(T, N, and) PGAS_DECL_TO_ALL(T, N, or) PGAS_DECL_TO_ALL(T, N, xor)      \
    PGAS_DECL_TO_ALL(T, N, min) PGAS_DECL_TO_ALL(T, N, max)
#define PGAS_DECL_TO_ALL_FLOAT(T, N) PGAS_DECL_TO_ALL(T, N, min) PGAS_DECL_TO_ALL(T, N, max)
#define PGAS_DECL_TO_ALL_ARITH(T, N) PGAS_DECL_TO_ALL(T, N, sum) PGAS_DECL_TO_ALL(T, N, prod)
PGAS_SHMEM_TO_ALL_INT_TYPES(PGAS_DECL_TO_ALL_INT)
PGAS_SHMEM_TO_ALL_FLOAT_TYPES(PGAS_DECL_TO_ALL_FLOAT)
PGAS_SHMEM_TO_ALL_ARITH_TYPES(PGAS_DECL_TO_ALL_ARITH)

/* ------------------------------------------- deprecated (1.5's annex) */
/* The 1.3 atomic names: table 6 (cswap, finc, inc, fadd, add) and table 7
 * (fetch, set, swap); the untyped long forms; the 1.2 setup and memory
 * names. With PGAS_VERBOSE set, the first call of each in the job says so
 * on stderr. */
#define PGAS_DECL_AMO_STD_13(T, N)                                                          \
    T PGAS_FN(N##_cswap)(T *dest, T cond, T value, int pe);                                 \
    T PGAS_FN(N##_finc)(T *dest, int pe);                                                   \
    void PGAS_FN(N##_inc)(T *dest, int pe);                                                 \
    T PGAS_FN(N##_fadd)(T *dest, T value, int pe);                                          \
    void PGAS_FN(N##_add)(T *dest, T value, int pe);
PGAS_SHMEM_AMO_STD_TYPES(PGAS_DECL_AMO_STD_13)
#define PGAS_DECL_AMO_EXT_13(T, N)                                                          \
    T PGAS_FN(N##_fetch)(const T *source, int pe);                                          \
    void PGAS_FN(N##_set)(T *dest, T value, int pe);                                        \
    T PGAS_FN(N##_swap)(T *dest, T value, int pe);
PGAS_SHMEM_AMO_EXT_TYPES(PGAS_DECL_AMO_EXT_13)
long PGAS_FN(swap)(long *dest, long value, int pe);
void PGAS_FN(wait)(long *ivar, long cmp_value);
void PGAS_FN(wait_until)(long *ivar, int cmp, long cmp_value);
