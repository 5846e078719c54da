/* pgas-shmem has no extensions yet: every call is in shmem.h. */
#include <shmem.h>
