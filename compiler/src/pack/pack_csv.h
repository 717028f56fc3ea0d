/* pack_csv.h — read and write DSA instances in the minimalloc CSV format.
 *
 *   id,lower,upper,size[,offset]
 *   0,995328,1000448,656384
 *
 * One buffer per row; its lifetime is the half-open [lower, upper); an `offset`
 * column, when present, is a solution (IREE's own in the idealloc traces). The
 * header row is required; its columns may come in any order; no other columns are
 * allowed. Ids are names (minimalloc's examples use "b1"): 1..64 printable bytes
 * without spaces, unique. The other fields are decimal integers: lower < upper,
 * 0 < size <= 2^50, offset >= 0. At most 2^24 rows, files at most 1 GiB. Errors name the line and
 * the column: "blocks.csv:7: size: expected a positive integer, got '-5'".
 *
 *   sfc_pack_csv_t csv;
 *   if (sfc_pack_csv_read_file("A.1048576.csv", &csv, &err) != SFC_OK) ...
 *   sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
 *   ...
 *   sfc_pack_csv_write(stdout, &csv, true);   // with the offset column
 *   sfc_pack_csv_free(&csv);
 */
#ifndef SFC_PACK_CSV_H
#define SFC_PACK_CSV_H

#include <stdbool.h>
#include <stdio.h>

#include "pack.h"

#define SFC_PACK_CSV_MAX_ROWS  (UINT32_C(1) << 24)
#define SFC_PACK_CSV_MAX_BYTES (UINT64_C(1) << 30)
#define SFC_PACK_CSV_MAX_SIZE  (UINT64_C(1) << 50)
#define SFC_PACK_CSV_MAX_ID    64u

typedef struct sfc_pack_csv {
  sfc_pack_block_t *blocks; /* [count] size, start = lower, end = upper, offset */
  const char **ids;         /* [count] the id column, pointing into id_text */
  char *id_text;            /* owns the ids, NUL-terminated one after another */
  size_t count;
  bool has_offsets; /* the file had an offset column (blocks[i].offset set) */
} sfc_pack_csv_t;

/* `name` prefixes messages ("name:line: ..."); NULL for none. */
sfc_status_t sfc_pack_csv_read_buffer(const char *data, size_t bytes, const char *name,
                                      sfc_pack_csv_t *out, sfc_error_t *err);
sfc_status_t sfc_pack_csv_read_file(const char *path, sfc_pack_csv_t *out, sfc_error_t *err);

/* Writes the header and one row per block, with the offset column when asked. */
void sfc_pack_csv_write(FILE *out, const sfc_pack_csv_t *csv, bool with_offsets);

/* The same, with the offsets, to a file by the safe output rules (outfile.h). */
sfc_status_t sfc_pack_csv_write_file(const char *path, const sfc_pack_csv_t *csv, sfc_error_t *err);

void sfc_pack_csv_free(sfc_pack_csv_t *csv);

#endif /* SFC_PACK_CSV_H */
