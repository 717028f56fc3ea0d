/* replay_main.c — runs a fuzz target over every file of the given files/folders.
 * Used as a regular test: with ASan/UBSan any memory error or UB in a loader on a
 * corpus file aborts the run. Exit 0 when every input was processed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, long *count) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 4096;
      uint8_t *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return 1;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  (*count)++;
  return 0;
}

static int run_path(const char *path, long *count) {
  struct stat st;
  if (stat(path, &st) != 0)
    return 0; /* an absent corpus folder is an empty corpus */
  if (!S_ISDIR(st.st_mode))
    return run_file(path, count);
  DIR *d = opendir(path);
  if (!d)
    return 1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".err") == 0)
      continue; /* expected-error sidecars are not inputs */
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    rc |= run_path(sub, count);
  }
  closedir(d);
  return rc;
}

int main(int argc, char **argv) {
  long count = 0;
  int rc = 0;
  for (int i = 1; i < argc; i++)
    rc |= run_path(argv[i], &count);
  fprintf(stderr, "replayed %ld inputs\n", count);
  return rc;
}
