/* check.h: assertions for the unit tests that survive -DNDEBUG and say
 * what they saw.
 *
 *   CHECK (cond)               cond must hold
 *   CHECK_OP (a, op, b)        a op b must hold, e.g. CHECK_OP (n, <=, 8):
 *                              on failure both values are printed.  For
 *                              numbers: both are converted to the type of
 *                              a + b, which is what the comparison does
 *                              anyway
 *   CHECK_EQ (a, b)            CHECK_OP (a, ==, b), and so on for
 *   CHECK_NE, CHECK_LT, CHECK_LE, CHECK_GT, CHECK_GE
 *   CHECK_PTR_EQ (a, b)        pointers equal; CHECK_PTR_NE, CHECK_NULL (p),
 *                              CHECK_NOTNULL (p)
 *   CHECK_STREQ (a, b)         strcmp (a, b) == 0 (NULL-safe)
 *   CHECK_NEAR (a, b, tol)     |a - b| <= tol, as doubles
 *
 * Each operand is evaluated exactly once.  A failure prints
 * "FILE:LINE: check failed: EXPR (VALUES)" on stderr and exits with
 * status 1 (not abort: the runner reports it as a failure, and no core
 * file is left behind).  check_count says how many checks ran, so a test
 * can end with check_done () and its log shows that it did something.
 * A libFuzzer target defines CHECK_FAIL_ABORT first: there a failure must
 * abort, which libFuzzer reports as a crash and keeps the input of.
 */
#ifndef CFQ_TEST_CHECK_H
#define CFQ_TEST_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long check_count;

static inline void __attribute__ ((noreturn))
check_exit_ (void)
{
  fflush (stderr);
#ifdef CHECK_FAIL_ABORT
  abort ();
#else
  exit (1);
#endif
}

static inline void __attribute__ ((noreturn))
check_fail_ (const char *file, int line, const char *expr, const char *vals)
{
  fprintf (stderr, "%s:%d: check failed: %s%s%s%s\n", file, line, expr,
           vals ? " (" : "", vals ? vals : "", vals ? ")" : "");
  check_exit_ ();
}

/* Strings are printed whole: an error message is often what differs. */
static inline void __attribute__ ((noreturn))
check_fail_str_ (const char *file, int line, const char *expr,
                 const char *a, const char *b)
{
  const char *qa = a ? "\"" : "", *qb = b ? "\"" : "";

  fprintf (stderr, "%s:%d: check failed: %s (%s%s%s vs %s%s%s)\n",
           file, line, expr, qa, a ? a : "(null)", qa,
           qb, b ? b : "(null)", qb);
  check_exit_ ();
}

static inline void
check_fmt_i_ (char *buf, size_t len, long long v)
{
  snprintf (buf, len, "%lld", v);
}

static inline void
check_fmt_u_ (char *buf, size_t len, unsigned long long v)
{
  snprintf (buf, len, "%llu", v);
}

static inline void
check_fmt_d_ (char *buf, size_t len, double v)
{
  snprintf (buf, len, "%.17g", v);
}

static inline void
check_fmt_p_ (char *buf, size_t len, const void *v)
{
  snprintf (buf, len, "%p", v);
}

#define CHECK_FMT_(buf, x)                                              \
  _Generic ((x),                                                        \
            float: check_fmt_d_, double: check_fmt_d_,                  \
            long double: check_fmt_d_,                                  \
            _Bool: check_fmt_u_,                                        \
            char: check_fmt_i_, signed char: check_fmt_i_,              \
            short: check_fmt_i_, int: check_fmt_i_, long: check_fmt_i_, \
            long long: check_fmt_i_,                                    \
            unsigned char: check_fmt_u_, unsigned short: check_fmt_u_,  \
            unsigned int: check_fmt_u_, unsigned long: check_fmt_u_,    \
            unsigned long long: check_fmt_u_,                           \
            default: check_fmt_p_) ((buf), sizeof (buf), (x))

#define CHECK(cond)                                                     \
  do {                                                                  \
    check_count++;                                                      \
    if (!(cond))                                                        \
      check_fail_ (__FILE__, __LINE__, #cond, NULL);                    \
  } while (0)

#define CHECK_OP(a, op, b)                                              \
  do {                                                                  \
    __typeof__ ((a) + (b)) check_a_ = (a), check_b_ = (b);              \
    check_count++;                                                      \
    if (!(check_a_ op check_b_)) {                                      \
      char check_sa_[48], check_sb_[48], check_v_[112];                 \
      CHECK_FMT_ (check_sa_, check_a_);                                 \
      CHECK_FMT_ (check_sb_, check_b_);                                 \
      snprintf (check_v_, sizeof check_v_, "%s " #op " %s",             \
                check_sa_, check_sb_);                                  \
      check_fail_ (__FILE__, __LINE__, #a " " #op " " #b, check_v_);    \
    }                                                                   \
  } while (0)

#define CHECK_EQ(a, b) CHECK_OP (a, ==, b)
#define CHECK_NE(a, b) CHECK_OP (a, !=, b)
#define CHECK_LT(a, b) CHECK_OP (a, <, b)
#define CHECK_LE(a, b) CHECK_OP (a, <=, b)
#define CHECK_GT(a, b) CHECK_OP (a, >, b)
#define CHECK_GE(a, b) CHECK_OP (a, >=, b)

#define CHECK_PTR_OP_(a, op, b)                                         \
  do {                                                                  \
    const void *check_a_ = (a), *check_b_ = (b);                        \
    check_count++;                                                      \
    if (!(check_a_ op check_b_)) {                                      \
      char check_v_[64];                                                \
      snprintf (check_v_, sizeof check_v_, "%p " #op " %p",             \
                check_a_, check_b_);                                    \
      check_fail_ (__FILE__, __LINE__, #a " " #op " " #b, check_v_);    \
    }                                                                   \
  } while (0)
#define CHECK_PTR_EQ(a, b) CHECK_PTR_OP_ (a, ==, b)
#define CHECK_PTR_NE(a, b) CHECK_PTR_OP_ (a, !=, b)
#define CHECK_NULL(p) CHECK_PTR_OP_ (p, ==, NULL)
#define CHECK_NOTNULL(p) CHECK_PTR_OP_ (p, !=, NULL)

#define CHECK_STREQ(a, b)                                               \
  do {                                                                  \
    const char *check_a_ = (a), *check_b_ = (b);                        \
    check_count++;                                                      \
    if (!check_a_ || !check_b_ || strcmp (check_a_, check_b_) != 0)    \
      check_fail_str_ (__FILE__, __LINE__, #a " == " #b,                \
                       check_a_, check_b_);                             \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                           \
  do {                                                                  \
    double check_a_ = (a), check_b_ = (b), check_t_ = (tol);            \
    check_count++;                                                      \
    if (!(fabs (check_a_ - check_b_) <= check_t_)) {                    \
      char check_v_[128];                                               \
      snprintf (check_v_, sizeof check_v_, "%.17g vs %.17g, tol %g",    \
                check_a_, check_b_, check_t_);                          \
      check_fail_ (__FILE__, __LINE__, "|" #a " - " #b "| <= " #tol,    \
                   check_v_);                                           \
    }                                                                   \
  } while (0)

/* Print how many checks ran; call at the end of main. */
static inline void
check_done (const char *name)
{
  printf ("%s: %lu checks passed\n", name, check_count);
}

#endif /* CFQ_TEST_CHECK_H */
