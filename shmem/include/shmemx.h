/* pgas-comm's OpenSHMEM has no extensions: every call is in shmem.h. This
 * header exists because programs include it (SOS, Open MPI and Cray SHMEM
 * ship one). */
#ifndef PGAS_SHMEMX_H
#define PGAS_SHMEMX_H
#include <shmem.h>
#endif
