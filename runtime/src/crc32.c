/* crc32.c — CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), zlib-compatible.
 * Slicing-by-8 (eight bytes a round, eight table lookups) with constant tables
 * (crc32_table.h, tools/gen-crc32-table), so the function is reentrant; byte order does
 * not matter (words are assembled from bytes). The compiler checksums every candidate
 * plan it predicts, written and read back: the byte-at-a-time loop was 18 % of a
 * ResNet-50 compile. */
#include "sfc/plan_format.h"

#include "crc32_table.h"

static inline uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t sfc_crc32(uint32_t crc, const void *data, size_t bytes) {
  const uint8_t *p = data;
  crc = ~crc;
  for (; bytes >= 8; bytes -= 8, p += 8) {
    uint32_t lo = le32(p) ^ crc, hi = le32(p + 4);
    crc = crc_tables[7][lo & 0xFFu] ^ crc_tables[6][(lo >> 8) & 0xFFu] ^
          crc_tables[5][(lo >> 16) & 0xFFu] ^ crc_tables[4][lo >> 24] ^ crc_tables[3][hi & 0xFFu] ^
          crc_tables[2][(hi >> 8) & 0xFFu] ^ crc_tables[1][(hi >> 16) & 0xFFu] ^
          crc_tables[0][hi >> 24];
  }
  while (bytes--)
    crc = crc_tables[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}
