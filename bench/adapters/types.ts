/**
 * One small interface per library, so every scenario is written once.
 * Each adapter maps these calls onto the library's own public API (and, where
 * a peer's recovery path is not public, onto the exact script its worker runs).
 */

export type LibName = "leaseq" | "bullmq" | "beequeue"
export const LIBS: ReadonlyArray<LibName> = ["leaseq", "bullmq", "beequeue"]

/** The payload every library gets: a small JSON object. */
export interface Payload {
  readonly n: number
  readonly s: string
  /** Marks the jobs whose completion the complete-cost scenario times. */
  readonly probe?: boolean
}

/** The payload of job `n`: its string of `chars` (default 32) characters. */
export const payload = (n: number, probe?: boolean, chars = 32): Payload =>
  probe ? { n, s: "x".repeat(chars), probe: true } : { n, s: "x".repeat(chars) }

export interface BenchJob {
  readonly id: string
  readonly payload: Payload
  /** Fires when the library tells the handler to stop (leaseq only). */
  readonly signal?: AbortSignal
}

export interface Producer {
  add(p: Payload): Promise<void>
  /** Add many in as few calls as the library allows (leaseq: one call; BullMQ: addBulk; Bee-Queue: saveAll). */
  addBulk(ps: ReadonlyArray<Payload>): Promise<void>
  close(): Promise<void>
}

export interface WorkerOptions {
  readonly concurrency: number
  readonly handler: (job: BenchJob) => Promise<unknown>
  /** Called once the library has acknowledged the job in Redis. */
  readonly onCompleted?: (id: string) => void
  /** Lease / lock duration. Default: the library's default. */
  readonly leaseMs?: number
  /**
   * A job holder: the worker only keeps jobs in flight (no in-process sweep or
   * stalled checker of its own, so the harness decides when recovery runs).
   */
  readonly holder?: boolean
}

export interface RunningWorker {
  /** Stop at once: do not wait for handlers (the harness flushes Redis first). */
  close(): Promise<void>
}

export interface Counts {
  readonly waiting: number
  readonly active: number
}

export interface RecoveryPass {
  /** Jobs moved back to waiting (or to dead) by this pass. */
  readonly reclaimed: number
  /** Redis calls made by the pass. */
  readonly calls: number
}

export interface Recovery {
  /**
   * One tick of the library's own recovery for lost leases/locks, run as the
   * library runs it (leaseq: sweep calls until `more` is false; BullMQ: one
   * stalled-checker tick; Bee-Queue: one checkStalledJobs tick). The interval
   * guard between ticks is cleared first, as if the interval had passed.
   */
  pass(): Promise<RecoveryPass>
  close(): Promise<void>
}

export interface Adapter {
  readonly name: LibName
  producer(queue: string): Promise<Producer>
  worker(queue: string, options: WorkerOptions): Promise<RunningWorker>
  counts(queue: string): Promise<Counts>
  /** Undefined when the library has no recovery for lost jobs. */
  recovery?(queue: string): Promise<Recovery>
}
