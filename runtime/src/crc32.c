/* crc32.c — CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), zlib-compatible.
 * Slicing-by-one table, built at compile time so the function is reentrant. */
#include "sfc/plan_format.h"

#define CRC_ROW(n)  CRC_ENTRY(n), CRC_ENTRY(n + 1), CRC_ENTRY(n + 2), CRC_ENTRY(n + 3)
#define CRC_STEP(c) (((c)&1u) ? 0xEDB88320u ^ ((c) >> 1) : ((c) >> 1))
#define CRC_ENTRY(n)                                                                               \
  CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP((uint32_t)(n)))))))))
#define CRC_ROW16(n) CRC_ROW(n), CRC_ROW(n + 4), CRC_ROW(n + 8), CRC_ROW(n + 12)

static const uint32_t crc_table[256] = {
    CRC_ROW16(0),   CRC_ROW16(16),  CRC_ROW16(32),  CRC_ROW16(48),  CRC_ROW16(64),  CRC_ROW16(80),
    CRC_ROW16(96),  CRC_ROW16(112), CRC_ROW16(128), CRC_ROW16(144), CRC_ROW16(160), CRC_ROW16(176),
    CRC_ROW16(192), CRC_ROW16(208), CRC_ROW16(224), CRC_ROW16(240)};

uint32_t sfc_crc32(uint32_t crc, const void *data, size_t bytes) {
  const uint8_t *p = data;
  crc = ~crc;
  while (bytes--)
    crc = crc_table[(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}
