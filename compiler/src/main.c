/* main.c — `sfc`: the command-line front end. Parses the command name and hands the
 * rest to the command's file (cmd_*.c). See `sfc help` and docs/cli.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sfc/plan_format.h"

static const sfc_command_t *const commands[] = {
    &sfc_cmd_compile, &sfc_cmd_inspect,  &sfc_cmd_verify, &sfc_cmd_config,
    &sfc_cmd_pack,    &sfc_cmd_simulate, &sfc_cmd_run,    &sfc_cmd_maxbatch};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

int sfc_cli_exit_code(sfc_status_t status) {
  switch (status) {
    case SFC_OK:
      return SFC_EXIT_OK;
    case SFC_ERR_DOES_NOT_FIT:
    case SFC_ERR_VERIFY:
    case SFC_ERR_INTEGRITY:
      return SFC_EXIT_FAIL;
    case SFC_ERR_INTERNAL:
    case SFC_ERR_OUT_OF_MEMORY:
      return SFC_EXIT_INTERNAL;
    default:
      return SFC_EXIT_BAD_INPUT;
  }
}

int sfc_cli_fail(const sfc_error_t *err) {
  fprintf(stderr, "sfc: %s\n", err->message);
  return sfc_cli_exit_code(err->status);
}

int sfc_cli_usage(const char *cmd, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "sfc %s: %s (try 'sfc help %s')\n", cmd, msg, cmd);
  return SFC_EXIT_BAD_INPUT;
}

bool sfc_cli_option(int argc, char **argv, int *i, const char *long_name, const char *short_name,
                    const char **value) {
  const char *a = argv[*i];
  size_t n = long_name ? strlen(long_name) : 0;
  if (long_name && strncmp(a, long_name, n) == 0 && a[n] == '=') {
    *value = a + n + 1;
    return true;
  }
  if ((long_name && strcmp(a, long_name) == 0) || (short_name && strcmp(a, short_name) == 0)) {
    /* the next argument, unless it is another option: `--budget --json` lacks a value
     * (a negative number is a value; `--opt=-x` passes one that looks like an option) */
    const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    bool option = next && next[0] == '-' &&
                  (next[1] == '-' || (next[1] >= 'a' && next[1] <= 'z') ||
                   (next[1] >= 'A' && next[1] <= 'Z'));
    *value = next && !option ? argv[++*i] : NULL;
    return true;
  }
  return false;
}

bool sfc_cli_count(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!s || !*s)
    return false;
  int64_t v = 0;
  for (const char *c = s; *c; c++) {
    if (*c < '0' || *c > '9')
      return false;
    if (v > (INT64_MAX - (*c - '0')) / 10)
      return false; /* past any range a count option has */
    v = v * 10 + (*c - '0');
  }
  if (v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

const char *sfc_cli_path_shown(const char *path, char out[SFC_PATH_SHOWN_BYTES]) {
  return sfc_text_escape(path ? path : "", SIZE_MAX, 4096, out, SFC_PATH_SHOWN_BYTES);
}

bool sfc_cli_is_help(const char *arg) {
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int sfc_cli_print_help(const sfc_command_t *cmd) {
  fputs(cmd->help, stdout);
  return SFC_EXIT_OK;
}

static void print_usage(FILE *out) {
  fprintf(out,
          "sfc %s — plan the memory of a training iteration offline, replay it exactly.\n"
          "\n"
          "usage: sfc <command> [options]\n"
          "\n"
          "commands:\n",
          SFC_VERSION_STRING);
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf(out, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(out, "  %-9s %s\n", "help", "help [COMMAND]: this text, or one command's help");
  fprintf(out,
          "\n"
          "example:\n"
          "  sfc compile model.json --budget 16GiB -o model.plan   # plan one iteration\n"
          "  sfc verify model.plan                                  # check it independently\n"
          "  sfc inspect model.plan --json                          # every block's offset\n"
          "\n"
          "exit status: 0 ok, 1 plan does not fit / verification failed,\n"
          "             2 bad input or usage, 3 internal error or out of memory\n"
          "docs: docs/cli.md, docs/graph-format.md, docs/config-format.md, docs/plan-format.md\n");
}

/* Standard output written in full, or one line on stderr and exit 2: a full disk or a
 * closed stdout must not pass for success (`sfc config --print > v100.yaml` would leave
 * an empty config, which is valid). An exit status that already says failure stays. */
static int finish(int rc) {
  errno = 0;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "sfc: standard output: write failed: %s\n",
            errno ? strerror(errno) : "I/O error");
    return rc == SFC_EXIT_OK ? SFC_EXIT_BAD_INPUT : rc;
  }
  return rc;
}

static int unknown_command(const char *name) {
  char shown[SFC_NAME_SHOWN_BYTES];
  fprintf(stderr, "sfc: unknown command '%s' (try 'sfc help')\n", sfc_name_shown(name, shown));
  return SFC_EXIT_BAD_INPUT;
}

static const sfc_command_t *find_command(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(commands[i]->name, name) == 0)
      return commands[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_usage(stderr);
    return SFC_EXIT_BAD_INPUT;
  }
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("sfc %s (plan format %d.%d)\n", SFC_VERSION_STRING, SFC_PLAN_VERSION_MAJOR,
           SFC_PLAN_VERSION_MINOR);
    return finish(SFC_EXIT_OK);
  }
  if (sfc_cli_is_help(name) || strcmp(name, "help") == 0) {
    if (argc > 2 && strcmp(name, "help") == 0 && strcmp(argv[2], "help") != 0) {
      const sfc_command_t *cmd = find_command(argv[2]);
      if (!cmd)
        return unknown_command(argv[2]);
      return finish(sfc_cli_print_help(cmd));
    }
    print_usage(stdout); /* `sfc help help` too: this text says what help does */
    return finish(SFC_EXIT_OK);
  }
  const sfc_command_t *cmd = find_command(name);
  if (!cmd)
    return unknown_command(name);
  return finish(cmd->run(argc - 1, argv + 1));
}
