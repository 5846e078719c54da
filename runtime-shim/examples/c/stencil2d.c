/* 2-D Jacobi stencil: rows split over locales, halo rows exchanged by PUT,
 * the global residual by allreduce.   pgasrun -n 3 ./stencil2d */
#include <math.h>
#include <pgas_shim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define R 32 /* rows per locale, plus a halo row above (0) and below (R + 1) */
#define C 64 /* columns; locale 0's upper halo is the hot edge */

int main(void) {
  char msg[256];
  if (pgas_init() != PGAS_OK && pgas_last_error(msg, sizeof msg)) return fprintf(stderr, "%s\n", msg), 1;
  int n = pgas_num_locales(), me = pgas_here();
  double **grid = malloc(n * sizeof(double *)), u[R + 2][C] = {{0}}, old[R + 2][C], res = 0;
  if (pgas_alloc_all(sizeof u, (void **)grid) != PGAS_OK) return 1;
  for (int j = 0; me == 0 && j < C; j++) u[0][j] = 100.0;
  for (int it = 0; it < 400; it++) {
    if (me > 0) pgas_put(me - 1, grid[me - 1] + (R + 1) * C, u[1], sizeof u[1]);
    if (me + 1 < n) pgas_put(me + 1, grid[me + 1], u[R], sizeof u[R]);
    pgas_barrier(); /* the neighbours' rows are in my halos after it */
    if (me > 0) memcpy(u[0], grid[me], sizeof u[0]);
    if (me + 1 < n) memcpy(u[R + 1], grid[me] + (R + 1) * C, sizeof u[0]);
    memcpy(old, u, sizeof u);
    double diff = 0;
    for (int i = 1; i <= R; i++)
      for (int j = 1; j < C - 1; j++) {
        u[i][j] = 0.25 * (old[i - 1][j] + old[i + 1][j] + old[i][j - 1] + old[i][j + 1]);
        diff = fmax(diff, fabs(u[i][j] - old[i][j]));
      }
    /* the allreduce also orders the next PUTs after everyone's reads */
    pgas_team_allreduce(pgas_team_world(), PGAS_TYPE_REAL64, PGAS_OP_MAX, &diff, &res, 1);
  }
  if (me == 0) printf("stencil2d: %d x %d x %d grid, residual %.5f after 400 sweeps\n", n, R, C, res);
  pgas_finalize();
  return 0;
}
