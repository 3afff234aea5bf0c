/**
 * Ids that make a re-sent script call recognisable. The Redis client re-sends a call
 * whose reply it lost (after a reconnect) with the same arguments, so an id drawn once
 * per call lets the script tell a re-send from a new call (see lua/add.lua, lua/reserve.lua).
 */
import { randomBytes, randomFillSync } from "node:crypto"
import { hostname } from "node:os"

/** Random bytes for request ids, drawn from the OS 4 KiB at a time (one call per 256 ids, not one per id). */
const pool = Buffer.alloc(4096)
let used = pool.length

/** A fresh request id: 128 random bits, base64url (22 characters). */
export const newRequestId = (): string => {
  if (used === pool.length) {
    randomFillSync(pool)
    used = 0
  }
  used += 16
  return pool.toString("base64url", used - 16, used)
}

/**
 * A fresh worker id, one per started worker: `<host>:<pid>:<random>` (no "|", which
 * the reserve record uses as a separator).
 */
export const newWorkerId = (): string =>
  `${hostname().replace(/[|,]/g, "_")}:${process.pid}:${randomBytes(6).toString("base64url")}`
