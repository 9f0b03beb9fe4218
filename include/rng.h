/* rng.h: the small deterministic PRNGs the device models, the simulator
 * and the benchmarks share.  Same seed, same sequence, on every machine:
 * repeatability of a simulation depends on it.
 *
 * splitmix64 turns any seed (even 0) into a well-mixed state;
 * xorshift64* then draws from a non-zero state.
 */
#ifndef CFQ_RNG_H
#define CFQ_RNG_H

#include <stdint.h>

static inline uint64_t
splitmix64 (uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* *state must not be 0 (seed it with splitmix64). */
static inline uint64_t
xorshift64s (uint64_t *state)
{
  uint64_t x = *state;

  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545f4914f6cdd1dULL;
}

#endif /* CFQ_RNG_H */
