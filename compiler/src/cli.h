/* cli.h — shared pieces of the `sfc` command line (main.c dispatches to cmd_*.c).
 *
 * Exit codes (docs/cli.md): 0 ok; 1 the plan does not fit its budget or a plan
 * failed verification; 2 bad input or usage; 3 internal error or out of memory.
 * Errors are one line on stderr: "sfc: <where>: <why>".
 */
#ifndef SFC_CLI_H
#define SFC_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "sfc/status.h"

enum { SFC_EXIT_OK = 0, SFC_EXIT_FAIL = 1, SFC_EXIT_BAD_INPUT = 2, SFC_EXIT_INTERNAL = 3 };

typedef struct sfc_command {
  const char *name;
  const char *summary;               /* one line for `sfc help` */
  const char *help;                  /* full help with an example, for `sfc help NAME` */
  int (*run)(int argc, char **argv); /* argv[0] is the command name */
} sfc_command_t;

extern const sfc_command_t sfc_cmd_compile, sfc_cmd_inspect, sfc_cmd_verify, sfc_cmd_config,
    sfc_cmd_pack, sfc_cmd_simulate, sfc_cmd_run, sfc_cmd_maxbatch;

/* Maps a status to the documented exit code. */
int sfc_cli_exit_code(sfc_status_t status);

/* Prints "sfc: <message>" and returns the exit code for err->status. */
int sfc_cli_fail(const sfc_error_t *err);

/* Prints "sfc <cmd>: <message> (try 'sfc help <cmd>')" and returns 2. */
int sfc_cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Option parsing for "--name VALUE", "--name=VALUE" and "-s VALUE". Returns true
 * when argv[*i] is this option; *value is then set (NULL when the value is
 * missing, which the caller reports) and *i advanced past it. */
bool sfc_cli_option(int argc, char **argv, int *i, const char *long_name, const char *short_name,
                    const char **value);

/* Reads a count option's value: decimal digits only (no sign, no spaces, no leading
 * "0x"), at least one, with a value in lo .. hi. Returns false (and leaves *out) otherwise;
 * the caller says which option and the range. */
bool sfc_cli_count(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A file name for a line on stdout or stderr: sfc_text_escape of its first 4096 bytes
 * (a newline or an escape sequence in a name cannot split a line or reach the terminal). */
#define SFC_PATH_SHOWN_BYTES (4 * 4096 + 8)
const char *sfc_cli_path_shown(const char *path, char out[SFC_PATH_SHOWN_BYTES]);

/* True when argv[i] is --help or -h. */
bool sfc_cli_is_help(const char *arg);

/* Prints the full help of a command to stdout and returns 0. */
int sfc_cli_print_help(const sfc_command_t *cmd);

#endif /* SFC_CLI_H */
