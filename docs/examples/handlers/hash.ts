// docs/workers.md, "Isolation": the handler module of docs/examples/isolation.ts. Its default
// export is the handler; it runs in a worker thread (or a child process), never in the worker's.
import { createHash } from "node:crypto"
import type { Job } from "leaseq"

// #region handler
export default (job: Job<{ rounds: number }>) => {
  let digest = Buffer.from(job.id)
  // CPU-bound and synchronous: it never yields to the event loop
  for (let i = 0; i < job.payload.rounds; i++) digest = createHash("sha256").update(digest).digest()
  return { hash: digest.toString("hex").slice(0, 16) }
}
// #endregion
