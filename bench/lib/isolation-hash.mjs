// The handler of bench/isolation.ts, for both leaseq (job.payload) and BullMQ's sandboxed
// processors (job.data): `n` rounds of SHA-256 over a 64-byte buffer, a fixed amount of CPU
// work (calibrated by the bench to about 20 ms on one core); `n: 0` is a no-op.
import { createHash } from "node:crypto"

export default (job) => {
  const { n } = job.payload ?? job.data
  let h = Buffer.alloc(64, 1)
  for (let i = 0; i < n; i++) h = createHash("sha256").update(h).digest()
  return n === 0 ? undefined : h.length
}
