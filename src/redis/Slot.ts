/**
 * Redis Cluster hash slots, computed locally (no round trip, no ioredis import):
 * used to find the master that holds a queue, for `WAIT`, and by tests to check
 * where queues and partitions land.
 */

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 8
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    table[i] = crc
  }
  return table
})()

/** The Redis Cluster hash slot of `key` (CRC16/XMODEM of its hash tag, mod 16384), as `CLUSTER KEYSLOT` answers. */
export const keySlot = (key: string): number => {
  let bytes = Buffer.from(key, "utf8")
  const open = bytes.indexOf(0x7b) // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1) // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close)
  }
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff]!
  return crc % 16384
}
