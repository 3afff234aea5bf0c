// docs/workers.md, "Isolation": the handler module of docs/examples/isolation.ts. Its default
// export is the handler; it runs in a worker thread (or a child process), never in the worker's.
import type { Job } from "leaseq"

// #region handler
export default (job: Job<{ ms: number }>) => {
  // synchronous: it holds its thread and never yields to the event loop, as a CPU-bound
  // loop or a blocking native call would (this one waits, so the example costs no CPU)
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, job.payload.ms)
  return { blockedMs: job.payload.ms }
}
// #endregion
