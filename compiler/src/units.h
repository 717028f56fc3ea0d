/* units.h — parse and print sizes, rates and durations with units.
 *
 *   sizes:     "16GiB" "16 GiB" "1.5GB" "256" (bytes) "4KiB" "2MB"   -> bytes
 *              binary: KiB MiB GiB TiB PiB; decimal: kB KB MB GB TB PB; B
 *   rates:     "55GB/s" "25.6 GiB/s" "1e9B/s"                         -> bytes per second
 *   durations: "10us" "1.5ms" "2s" "250ns" "60" (no unit: seconds) "0" -> seconds
 *
 * Parsing is strict: the whole string must be consumed, the value finite and
 * non-negative, a size integral in bytes and <= 2^60. On failure the functions
 * return false and write a short reason ("unknown unit 'GBs'") into why.
 */
#ifndef SFC_UNITS_H
#define SFC_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool sfc_parse_size(const char *text, uint64_t *out_bytes, char *why, size_t why_bytes);
bool sfc_parse_rate(const char *text, double *out_bytes_per_s, char *why, size_t why_bytes);
bool sfc_parse_duration(const char *text, double *out_seconds, char *why, size_t why_bytes);

/* Human form with a binary unit and 2 decimals: "16.00 GiB", "512 B". Returns buf. */
const char *sfc_format_size(uint64_t bytes, char *buf, size_t buf_bytes);

/* Exact form that sfc_parse_size reads back to the same value, using the unit that
 * gives the smallest whole mantissa: "16GiB", "141GB", "1536MiB", "1000001B". */
const char *sfc_format_size_exact(uint64_t bytes, char *buf, size_t buf_bytes);

/* "55GB/s", "10us": the shortest text that sfc_parse_rate / sfc_parse_duration read
 * back to exactly the same double. */
const char *sfc_format_rate(double bytes_per_s, char *buf, size_t buf_bytes);
const char *sfc_format_duration(double seconds, char *buf, size_t buf_bytes);

/* A monotonic clock in seconds (CLOCK_MONOTONIC), for timing passes, packers and
 * commands; only differences mean anything. */
double sfc_clock_seconds(void);

#endif /* SFC_UNITS_H */
