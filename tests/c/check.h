/*
 * Checking helpers shared by the C test programs under tests/c. Define PROG
 * (the program's name, a string) before including; keep `me` (this locale,
 * -1 before init) up to date. A failed check aborts the whole job with the
 * details; EXPECT prints each provoked error as "PROG bad input: ..." (on
 * locale 0, or on every locale when `report_all` is set).
 */
#ifndef PGAS_TEST_CHECK_H
#define PGAS_TEST_CHECK_H

#include <pgas_shim.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int32_t me = -1, n = 0;
static int report_all = 0;

static void fail(int line, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char full[1024];
  snprintf(full, sizeof full, PROG ": locale %d, line %d: %s", me, line, msg);
  fprintf(stderr, "%s\n", full);
  fflush(stderr);
  pgas_abort(full);
}

#define CHECK(cond, ...)                                                                         \
  do {                                                                                           \
    if (!(cond)) fail(__LINE__, __VA_ARGS__);                                                    \
  } while (0)

#define OK(call)                                                                                 \
  do {                                                                                           \
    int r_ = (call);                                                                             \
    if (r_ != PGAS_OK) {                                                                         \
      char e_[512];                                                                              \
      pgas_last_error(e_, sizeof e_);                                                            \
      fail(__LINE__, "%s returned %d (%s): %s", #call, r_, pgas_strerror(r_), e_);               \
    }                                                                                            \
  } while (0)

/* The call must fail with `code`; the last error must name `needle`. */
#define EXPECT(code, needle, call)                                                               \
  do {                                                                                           \
    int r_ = (call);                                                                             \
    char e_[512] = "";                                                                           \
    pgas_last_error(e_, sizeof e_);                                                              \
    if (r_ != (code))                                                                            \
      fail(__LINE__, "%s returned %d (%s), expected %d (%s); last error: %s", #call, r_,         \
           pgas_strerror(r_), (code), pgas_strerror(code), e_);                                  \
    if ((needle)[0] && !strstr(e_, (needle)))                                                    \
      fail(__LINE__, "%s: error \"%s\" does not name \"%s\"", #call, e_, (needle));              \
    if (me == 0 || report_all)                                                                   \
      printf(PROG " bad input: locale %d: %s -> %s: %s\n", me, #call, pgas_strerror(r_), e_);     \
  } while (0)

#endif
