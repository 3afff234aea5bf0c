/**
 * The worker registry of a queue: each worker's heartbeat (the extend call it sends
 * anyway) writes its record to the `workers` hash and its staleness time to `workersAt`;
 * `workers()` reads the live ones; a sweep drops the stale ones; a closing worker takes
 * its own out. No call is added per heartbeat.
 */
import { hostname } from "node:os"
import { LAYOUT_VERSION } from "./Keys.ts"

/** The registry record a worker's heartbeat writes (see {@link WorkerInfo} for what is read back). */
export interface WorkerRecord {
  readonly id: string
  /** The record as JSON text (an object: the script adds `lastSeenAt`). */
  readonly json: string
  /** The record goes stale (a sweep drops it) this long after the heartbeat. */
  readonly ttlMs: number
  /** Leases self-fenced since the last record stored: added to the queue's `selfFenced` counter. */
  readonly selfFenced?: number | undefined
}

/** A live worker of a queue, as its last heartbeat recorded it. */
export interface WorkerInfo {
  /** `<host>:<pid>:<random>`, also recorded on each lease it holds. */
  readonly id: string
  readonly host: string
  readonly pid: number
  readonly concurrency: number
  /** Handlers running at its last heartbeat. */
  readonly running: number
  /** Its lifecycle state at its last heartbeat (running, draining, releasing, failed). */
  readonly state: string
  /** When it started (ms since the epoch, its own clock). */
  readonly startedAt: number
  /** Its last heartbeat (ms since the epoch, Redis clock). */
  readonly lastSeenAt: number
}

/** What a worker reports of itself on each heartbeat. */
export interface WorkerSelf {
  readonly id: string
  readonly concurrency: number
  readonly startedAt: number
  readonly running: () => number
  readonly state: () => string
  /** Leases this worker self-fenced since it started. */
  readonly selfFenced: () => number
}

/**
 * When a worker's heartbeat sends its record: always when it rides an extend of held
 * leases (no extra call); alone (an idle worker) only when the record changed or half its
 * ttl passed since the last one stored, so an idle worker costs one small call per half
 * ttl, not one per heartbeat.
 */
export const makeRegistryBeat = (self: WorkerSelf, ttlMs: number) => {
  let lastJson = ""
  let lastAt = Number.NEGATIVE_INFINITY
  let reported = 0
  return {
    next: (riding: boolean): WorkerRecord | undefined => {
      const record = { ...workerRecord(self, ttlMs), selfFenced: self.selfFenced() - reported }
      const due = performance.now() - lastAt >= ttlMs / 2 || record.selfFenced > 0
      return riding || due || record.json !== lastJson ? record : undefined
    },
    sent: (record: WorkerRecord): void => {
      lastJson = record.json
      lastAt = performance.now()
      reported += record.selfFenced ?? 0
    },
  }
}

/**
 * The record of `self` as its heartbeat writes it. The record goes stale `ttlMs` after
 * the heartbeat: the worker's lease length (with grace), at least two heartbeat periods.
 */
export const workerRecord = (self: WorkerSelf, ttlMs: number): WorkerRecord => ({
  id: self.id,
  json: JSON.stringify({
    id: self.id,
    host: hostname(),
    pid: process.pid,
    concurrency: self.concurrency,
    running: self.running(),
    state: self.state(),
    startedAt: self.startedAt,
    // the key layout it speaks: `upgrade` waits for the workers of an older one to leave
    layout: LAYOUT_VERSION,
  }),
  ttlMs,
})

/** A registry record as {@link WorkerInfo}; a record that does not parse is left out. */
export const parseWorker = (text: string): WorkerInfo[] => {
  try {
    const o = JSON.parse(text) as Record<string, unknown>
    return [
      {
        id: String(o.id),
        host: String(o.host),
        pid: Number(o.pid),
        concurrency: Number(o.concurrency),
        running: Number(o.running),
        state: String(o.state),
        startedAt: Number(o.startedAt),
        lastSeenAt: Number(o.lastSeenAt),
      },
    ]
  } catch {
    return []
  }
}
