/* The OpenSHMEM profiling interface of pgas-comm's library: every call
 * shmem_X (and the 1.2 names start_pes, _my_pe, _num_pes, shmalloc, shfree,
 * shrealloc, shmemalign) also exists as pshmem_X (pstart_pes, p_my_pe, ...),
 * the same code under a second name, as MPI's PMPI_ names. A tool defines
 * shmem_X itself, does its work, and calls pshmem_X to reach the library.
 * (The C11 generic interfaces and shmem_sync's two forms are macros, not
 * calls: use the typed pshmem_ names.) See docs/openshmem.md. */
#ifndef PGAS_PSHMEM_H
#define PGAS_PSHMEM_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PGAS_FN(name) pshmem_##name
#include <shmem-api.h>
#undef PGAS_FN

void pstart_pes(int npes);
int p_my_pe(void);
int p_num_pes(void);
void *pshmalloc(size_t size);
void pshfree(void *ptr);
void *pshrealloc(void *ptr, size_t size);
void *pshmemalign(size_t alignment, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* PGAS_PSHMEM_H */
