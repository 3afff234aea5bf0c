/** The descriptor of `lua/sweep.lua`: one bounded pass over expired leases, due jobs and cleanup. */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { defineScript, list } from "./Script.ts"

/** A job a sweep moved to dead (its lease expired once too often). */
export interface SweptDead {
  readonly id: string
  /** The token of the lease that expired last. */
  readonly token: number
  /** The message stored in its last error (reason `lease-expired`). */
  readonly message: string
}

/** What one `sweep` call did. */
export interface SweepResult {
  readonly reclaimed: number
  readonly dead: number
  readonly promoted: number
  /** Expired dedupe keys removed. */
  readonly dedupeDropped: number
  /** Finished jobs (completed, cancelled, dead) deleted by the queue's retention (count or age). */
  readonly trimmed: number
  /** True when expired leases, due delayed jobs, expired dedupe keys, finished jobs beyond the retention or dropped parents' edges remain: call again. */
  readonly more: boolean
  /** ms until the earliest live lease expires, or -1 when nothing is active. */
  readonly nextDeadlineMs: number
  /** The jobs this call moved to dead (`dead` of them). */
  readonly deadJobs: ReadonlyArray<SweptDead>
}

/** The reply of `sweep.lua` as a {@link SweepResult}. */
const sweepResult = (reply: unknown): SweepResult => {
  const r = list(reply)
  const deadJobs: SweptDead[] = []
  for (let i = 9; i + 2 < r.length; i += 3) {
    deadJobs.push({ id: String(r[i]), token: Number(r[i + 1]), message: String(r[i + 2]) })
  }
  return {
    reclaimed: Number(r[0]),
    dead: Number(r[1]),
    promoted: Number(r[2]),
    dedupeDropped: Number(r[6]),
    trimmed: Number(r[7]),
    more: r[3] === 1 || r[4] === 1 || r[8] === 1,
    nextDeadlineMs: Number(r[5]),
    deadJobs,
  }
}

/** `sweep`: at most `limit` of each kind of work (see lua/sweep.lua). */
export const sweep = defineScript({
  name: "sweep",
  keys: [
    "active",
    "lease",
    "meta",
    "dead",
    "err",
    "fails",
    "lost",
    "max",
    "dedupe",
    "dedupeid",
    "done",
    "result",
    "data",
    "holder",
    "workers",
    "workersAt",
    "progress",
    "timeout",
    "dkey",
    "events",
    "cancelled",
    "backoff",
    "errors",
    "logs",
    ...READY_KEYS,
  ],
  argv: ["layout", "limit"],
  args: (limit: number) => [LAYOUT_VERSION, limit],
  decode: sweepResult,
})
