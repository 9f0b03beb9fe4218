/* replay.c: run a fuzz target's inputs without libFuzzer.
 *
 *   tests/fuzz/replay-NAME FILE|DIR...
 *
 * Linked with one tests/fuzz/fuzz-NAME.c and built with the ordinary
 * compiler (and SANITIZE=, if given), it feeds every file given, or every
 * file in a directory given, to LLVMFuzzerTestOneInput.  make check runs
 * it on the committed corpus (tests/test-fuzz-corpus.sh): each crash that
 * fuzzing found keeps its input there, so a regression fails the suite
 * even where clang and libFuzzer are not installed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned long nr_inputs;

static void
replay_file (const char *path)
{
  FILE *f = fopen (path, "rb");
  uint8_t *data = NULL;
  size_t len = 0, cap = 0, n;

  if (!f) {
    fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
    exit (1);
  }
  do {
    if (len == cap) {
      cap = cap ? 2 * cap : 4096;
      data = realloc (data, cap);
      if (!data) {
        perror ("replay: realloc");
        exit (1);
      }
    }
    n = fread (data + len, 1, cap - len, f);
    len += n;
  } while (n > 0);
  if (ferror (f)) {
    fprintf (stderr, "replay: %s: read error\n", path);
    exit (1);
  }
  fclose (f);
  LLVMFuzzerTestOneInput (data, len);
  free (data);
  nr_inputs++;
}

static int
by_name (const struct dirent **a, const struct dirent **b)
{
  return strcmp ((*a)->d_name, (*b)->d_name);
}

static void
replay (const char *path)
{
  struct stat st;
  struct dirent **ents;
  int n;

  if (stat (path, &st) == -1) {
    fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
    exit (1);
  }
  if (!S_ISDIR (st.st_mode)) {
    replay_file (path);
    return;
  }
  n = scandir (path, &ents, NULL, by_name);
  if (n == -1) {
    fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
    exit (1);
  }
  for (int i = 0; i < n; i++) {
    char *sub;
    if (ents[i]->d_name[0] != '.') {
      if (asprintf (&sub, "%s/%s", path, ents[i]->d_name) == -1) {
        perror ("replay: asprintf");
        exit (1);
      }
      replay (sub);
      free (sub);
    }
    free (ents[i]);
  }
  free (ents);
}

int
main (int argc, char **argv)
{
  if (argc < 2) {
    fprintf (stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; i++)
    replay (argv[i]);
  printf ("%s: %lu inputs replayed\n", argv[0], nr_inputs);
  return 0;
}
