/* <mpp/shmemx.h>: the legacy include path (SOS, Open MPI and Cray SHMEM ship
 * one; OpenSHMEM 1.5 lists it as deprecated). The same as <shmemx.h>. */
#include <shmemx.h>
