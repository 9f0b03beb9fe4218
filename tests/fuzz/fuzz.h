/* fuzz.h: reading a libFuzzer input as a stream of arguments.
 *
 * Past the end every read returns 0, so any input, however short, is a
 * complete program.
 */
#ifndef CFQ_FUZZ_H
#define CFQ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_in {
  const uint8_t *p;
  size_t len;
};

static inline uint8_t
fuzz_u8 (struct fuzz_in *in)
{
  if (!in->len)
    return 0;
  in->len--;
  return *in->p++;
}

static inline uint16_t
fuzz_u16 (struct fuzz_in *in)
{
  uint16_t v = fuzz_u8 (in);
  return (uint16_t) (v | fuzz_u8 (in) << 8);
}

static inline uint32_t
fuzz_u32 (struct fuzz_in *in)
{
  uint32_t v = fuzz_u16 (in);
  return v | (uint32_t) fuzz_u16 (in) << 16;
}

static inline uint64_t
fuzz_u64 (struct fuzz_in *in)
{
  uint64_t v = fuzz_u32 (in);
  return v | (uint64_t) fuzz_u32 (in) << 32;
}

/* The entry point libFuzzer calls, and tests/fuzz/replay.c without it. */
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#endif /* CFQ_FUZZ_H */
