/**
 * The descriptors of the scripts about leased jobs: `reserve` (lease jobs, with the
 * completes that ride it) and `extend` (heartbeat); the acknowledgements are in AckScripts.ts.
 */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import type { WorkerRecord } from "../model/Registry.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** A lease to extend, complete or release. */
export interface LeaseRef {
  readonly id: string
  readonly token: number
}

/** A finished job to acknowledge, with its result (JSON text) when completed jobs are retained. */
export type Completion = LeaseRef & { readonly result?: string }

/** A leased job as `reserve` returns it. */
export interface Reservation {
  readonly id: string
  readonly token: number
  /** Lease deadline, ms since the epoch on the Redis clock. */
  readonly deadline: number
  readonly attempt: number
  readonly maxAttempts: number
  readonly payload: string
  /** The run's timeout in ms: the job's own, else the worker's default; 0 for none. */
  readonly timeoutMs: number
}

/** What one reserve call answered. */
export interface Reserved {
  readonly jobs: ReadonlyArray<Reservation>
  /** ms until the next delayed job is due (0: one is due now), or -1 when none is (or not looked up). */
  readonly nextDueMs: number
  /** Per completion carried by the call: true when it completed, false when its lease was lost. */
  readonly completed: ReadonlyArray<boolean>
  /**
   * Set when a flow limit (rate limit, concurrency cap, a RateLimited hold) leased fewer jobs
   * than asked: the ms until it may allow more, 0 when not known (the concurrency cap).
   */
  readonly limitMs?: number
  /** Set when a completion left notes for parents in the outbox (flows, docs/flows.md): drain it now. */
  readonly notes?: boolean
}

/** Most jobs a worker asks for in one reserve call (the script takes 0 to 1000). */
export const RESERVE_MAX_JOBS = 500

/** Most due delayed jobs one reserve call promotes (the script takes at most 1000). */
export const RESERVE_PROMOTE_LIMIT = 500

/** Most completions that ride one reserve call: Lua unpacks only a few thousand values at once. */
export const RESERVE_MAX_RIDERS = 500

/** One reserve call (see {@link reserve}). */
export interface ReserveInput {
  readonly workerId: string
  readonly requestId: string
  readonly count: number
  readonly leaseMs: number
  readonly promoteLimit: number
  /** The worker's default timeout for jobs added without one (0: none). */
  readonly timeoutMs: number
  readonly completes: ReadonlyArray<Completion>
  /**
   * Payloads of this many bytes or more are answered by reference: the script leaves them
   * out (payload "") and the reserve command reads them with a plain HMGET
   * (calls/PayloadRefs.ts). Default 0: every payload in the script's reply.
   */
  readonly refAt?: number
}

/** The triples `id, token, result` of completions, appended to `args`. */
export const pushCompletions = (args: Array<string | number>, items: ReadonlyArray<Completion>): Argv => {
  for (const l of items) args.push(l.id, l.token, l.result ?? "")
  return args
}

/** `reserve`: lease up to `count` jobs, after acknowledging the completions it carries. */
export const reserve = defineScript({
  name: "reserve",
  keys: [
    "active",
    "meta",
    "data",
    "lease",
    "fails",
    "lost",
    "max",
    "dead",
    "err",
    "done",
    "result",
    "receipts",
    "receiptsAt",
    "reqs",
    "holder",
    "timeout",
    "progress",
    "dkey",
    "dedupe",
    "dedupeid",
    "events",
    "cancelled",
    "rate",
    "backoff",
    "errors",
    "logs",
    ...READY_KEYS,
  ],
  argv: ["layout", "workerId", "requestId", "count", "leaseMs", "promoteLimit", "timeoutMs", "refAt", "m", "riders"],
  rest: ["result"],
  args: (i: ReserveInput): Argv => {
    // the riders as one "id|token|…" entry (fewer ARGV for the client to encode and Redis
    // to parse), and their results only when one has a result
    let riders = ""
    let results = false
    for (const c of i.completes) {
      riders = riders === "" ? `${c.id}|${c.token}` : `${riders}|${c.id}|${c.token}`
      if (c.result !== undefined && c.result !== "") results = true
    }
    const args: Array<string | number> = [
      LAYOUT_VERSION,
      i.workerId,
      i.requestId,
      i.count,
      i.leaseMs,
      i.promoteLimit,
      i.timeoutMs,
      i.refAt ?? 0,
      i.completes.length,
      riders,
    ]
    if (results) for (const c of i.completes) args.push(c.result ?? "")
    return args
  },
  decode: (reply): Reserved => {
    // nextDueMs, deadline, statuses ("1"/"2"/"0" a rider), jobs ("id|token|attempt|max|timeoutMs"
    // of each job, joined with "|"), then one payload a job: few elements for ioredis to decode
    const r = list(reply)
    const statuses = String(r[2])
    const completed: boolean[] = []
    // "2": completed, and notes for its parents went to the outbox (lua/include/deps.lua)
    let notes = false
    for (let i = 0; i < statuses.length; i++) {
      const c = statuses.charCodeAt(i)
      completed.push(c === 49 || c === 50)
      if (c === 50) notes = true
    }
    const jobs: Reservation[] = []
    const fields = r[3] === "" ? [] : String(r[3]).split("|")
    const deadline = Number(r[1])
    for (let i = 0, p = 4; i + 4 < fields.length; i += 5, p++) {
      jobs.push({
        id: fields[i] as string,
        token: Number(fields[i + 1]),
        deadline,
        attempt: Number(fields[i + 2]),
        maxAttempts: Number(fields[i + 3]),
        payload: String(r[p]),
        timeoutMs: Number(fields[i + 4]),
      })
    }
    // a flow limit's wait comes last, after the payloads, only when one held the call back
    const more = notes ? { notes } : {}
    if (r.length > 4 + jobs.length)
      return { jobs, nextDueMs: Number(r[0]), completed, limitMs: Number(r.at(-1)), ...more }
    return { jobs, nextDueMs: Number(r[0]), completed, ...more }
  },
})

/** A lease to extend, with the progress its handler reported since the last heartbeat. */
export interface ExtendRef extends LeaseRef {
  /** JSON text of the latest progress value, stored with the extend (absent: none new). */
  readonly progress?: string | undefined
}

/** One extend call: leases, the lease length, and optionally the calling worker's record. */
export interface ExtendInput {
  readonly leases: ReadonlyArray<ExtendRef>
  readonly leaseMs: number
  readonly worker?: WorkerRecord | undefined
}

/**
 * What one extend answers per lease, read from its raw number: the new deadline (ms,
 * Redis clock), or why the lease is not extended: "lost", "cancelled" (the job was
 * cancelled), "timeout" (it reached its timeout limit; a sweep reclaims it as a failure).
 */
export type ExtendAnswer = number | "lost" | "cancelled" | "timeout"

/** One raw extend reply entry (a deadline, 0 lost, -1 cancelled, -2 timeout) as an {@link ExtendAnswer}. */
export const extendAnswer = (x: number): ExtendAnswer =>
  x > 0 ? x : x === -1 ? "cancelled" : x === -2 ? "timeout" : "lost"

/**
 * `extend`: per lease its new deadline (> 0), or 0 lost, -1 cancelled, -2 at its timeout
 * limit (see {@link extendAnswer}); stores progress and the worker's registry record.
 */
export const extend = defineScript({
  name: "extend",
  keys: ["active", "lease", "meta", "holder", "cancelled", "progress", "workers", "workersAt", "events"],
  argv: ["layout", "leaseMs", "workerId", "record", "ttlMs", "selfFenced"],
  rest: ["id", "token", "progress"],
  args: ({ leases, leaseMs, worker }: ExtendInput): Argv => {
    const args: Array<string | number> = [
      LAYOUT_VERSION,
      leaseMs,
      worker?.id ?? "",
      worker?.json ?? "",
      worker?.ttlMs ?? 0,
      worker?.selfFenced ?? 0,
    ]
    for (const l of leases) args.push(l.id, l.token, l.progress ?? "")
    return args
  },
  decode: (reply) => list<number>(reply),
})
