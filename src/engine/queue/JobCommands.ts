/**
 * Typed calls of the scripts that look up and steer single jobs and the whole queue:
 * get-job, cancel, change-priority, pause, resume, clear-dedupe, set-retention (descriptors in scripts/JobScripts.ts), and
 * what a job look-up answers ({@link JobInfo}).
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { runScript } from "../calls/Commands.ts"
import { priorityChanged, redisError } from "../calls/Replies.ts"
import { Scripts } from "../calls/Scripts.ts"
import { splitPayload } from "../model/Carrier.ts"
import type { RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { scheduledForOf } from "../model/Schedule.ts"
import type { CancelChildren, LimitChange } from "../scripts/JobScripts.ts"
import { decodeRetention, RETENTION_FIELDS, type Retention, retentionArgs } from "./Retention.ts"

/** Where a job is. `completed` and `cancelled` jobs are seen while retained (the queue's retention, `setRetention`). */
export type JobState = "waiting" | "waiting-children" | "delayed" | "active" | "completed" | "dead" | "cancelled"

/** What the queue knows about one job (see `getJob`). `P` is the payload's type. */
export interface JobInfo<P = unknown, R = unknown> {
  readonly id: string
  readonly state: JobState
  readonly payload: P
  /**
   * The attempt running now (active), next (waiting, delayed) or last (completed,
   * cancelled, dead): failures + lost leases + 1, and for a dead job the attempts it used.
   */
  readonly attempt: number
  readonly maxAttempts: number
  /** Handler failures so far. */
  readonly failures: number
  /** Leases lost so far (reclaimed by a sweep). */
  readonly lostLeases: number
  /**
   * When the job was added (ms since the epoch): from its ULID id (the producer's clock), or
   * stored by the add for an id that carries no time (a custom id, a tick's job: Redis clock).
   * 0 for such a job added by an earlier version.
   */
  readonly addedAt: number
  /** A delayed job: when it becomes due (ms, Redis clock). */
  readonly dueAt?: number
  /**
   * An active job: its lease token and deadline (ms, Redis clock), and the id of the
   * worker holding it (`<host>:<pid>:<random>`; absent for a lease taken by an earlier
   * version, which recorded no holder).
   */
  readonly lease?: { readonly token: number; readonly deadline: number; readonly workerId?: string }
  /** A retained completed job: what its handler returned (when it returned something; `R` as the queue declares it). */
  readonly result?: R
  /** The last error, with its `reason` (a failure, a lost lease, an invalid payload), if any. */
  readonly error?: unknown
  /** Completed, dead or cancelled: when (ms, Redis clock). */
  readonly finishedAt?: number
  /** An active job: when its run started; a retained completed job: when the run that completed it did (ms, Redis clock). */
  readonly startedAt?: number
  /** The dedupe key the job was added with. */
  readonly dedupeKey?: string
  /** The latest value its handler reported with `job.progress(value)` (kept until the job's data goes). */
  readonly progress?: unknown
  /** The job's own `timeoutMs` (absent: none, the worker's default applies). */
  readonly timeoutMs?: number
  /** A job a schedule made: the tick it was made for (ms since the epoch, Redis clock; from its id `<schedule>@<tick>`). */
  readonly scheduledFor?: number
  /** Its priority: 0 (the default, runs first) to 1 000 000. */
  readonly priority: number
  /** The job's name (add's `name` option); absent for a job added without one. */
  readonly name?: string
  /**
   * The errors of its failed attempts (handler failures, timeouts, lost leases), oldest
   * first: the newest 10, each bounded as the last error is (docs/jobs.md). Absent: none.
   */
  readonly errors?: ReadonlyArray<AttemptError>
  /** Its log lines (`job.log(line)`), oldest first: the newest 100, each at most 1 KiB. Absent: none. */
  readonly logs?: ReadonlyArray<string>
}

/** One failed attempt's error, as `getJob`'s `errors` list it. */
export interface AttemptError {
  /** The attempt that failed (1 for the first run). */
  readonly attempt: number
  /** When it failed (ms, Redis clock). */
  readonly at: number
  /** Why: `failed` (the handler), `timeout`, `lease-expired`, `invalid-payload`. */
  readonly reason?: string
  readonly name?: string
  readonly message?: string
  readonly stack?: string
  /** An Effect tagged error's `_tag`. */
  readonly tag?: string
  /** The error's own fields (a tagged error's data), JSON-safe and bounded. */
  readonly fields?: Record<string, unknown>
}

/** The lines of an errors or logs field, each parsed; a line that does not parse (cut by a bounded read) is left out. */
export const linesOf = <A>(text: unknown): Array<A> | undefined => {
  if (typeof text !== "string" || text === "") return undefined
  const out: Array<A> = []
  for (const line of text.split("\n")) {
    try {
      out.push(JSON.parse(line) as A)
    } catch {}
  }
  return out
}

export type { CancelChildren, CancelledFrom } from "../scripts/JobScripts.ts"

const ULID = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
/** The time (ms) in a ULID's first 10 characters, or 0 for an id that is not a ULID. */
export const ulidTimeOf = (id: string): number => {
  if (id.length !== 26) return 0
  let t = 0
  for (let i = 0; i < 10; i++) {
    const v = ULID.indexOf(id[i]!)
    if (v < 0) return 0
    t = t * 32 + v
  }
  return t
}

/** When job `id` was added: the time the add stored (`stored`, a number), else its ULID's (0 for neither). */
const addedAtOf = (id: string, stored: unknown): number => (typeof stored === "number" ? stored : ulidTimeOf(id))

const parsed = (text: unknown): unknown => {
  if (typeof text !== "string") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The reply of get-job as a {@link JobInfo} with the payload as stored (JSON text). */
/** When the run of an active or a retained completed job started, from its holder entry ("<workerId>|<startedAt>|<until>"). */
const startedAtOf = (state: JobState, holder: unknown): Pick<JobInfo, "startedAt"> => {
  if ((state !== "active" && state !== "completed") || typeof holder !== "string") return {}
  const at = /\|(\d+)\|\d*$/.exec(holder)?.[1] // the second to last field, in either layout's form
  return at === undefined ? {} : { startedAt: Number(at) }
}

/** An active job's lease from get-job's reply: token, deadline and (when recorded) the holder's worker id. */
const leaseOf = (r: ReadonlyArray<unknown>, deadline: number): NonNullable<JobInfo["lease"]> => {
  const holder = r[11]
  const token = Number(r[10])
  if (typeof holder !== "string") return { token, deadline }
  const bar = holder.indexOf("|")
  return { token, deadline, workerId: bar < 0 ? holder : holder.slice(0, bar) }
}

/** The fields of get-job's reply a job may lack: dedupe key, progress, own timeout. */
const extrasOf = (r: ReadonlyArray<unknown>): Pick<JobInfo, "dedupeKey" | "progress" | "timeoutMs"> => ({
  ...(typeof r[8] === "string" ? { dedupeKey: r[8] } : {}),
  ...(typeof r[12] === "string" ? { progress: parsed(r[12]) } : {}),
  ...(typeof r[13] === "string" ? { timeoutMs: Number(r[13]) } : {}),
})

/** A job's last error, decoded; one recorded without a reason (by an older worker) is a handler failure: `failed`. */
const lastError = (text: string): unknown => {
  const e = parsed(text)
  return e !== null && typeof e === "object" && typeof (e as { reason?: unknown }).reason !== "string"
    ? { reason: "failed", ...e }
    : e
}

/** A job's name, errors and logs from get-job's (or job-peek's) reply, each only when it has one. */
const nameAndListsOf = (
  name: string | undefined,
  r: ReadonlyArray<unknown>,
  at: { readonly errors: number; readonly logs: number },
): Pick<JobInfo, "name" | "errors" | "logs"> => {
  const errors = linesOf<AttemptError>(r[at.errors])
  const logs = linesOf<string>(r[at.logs])
  return {
    ...(name === undefined ? {} : { name }),
    ...(errors === undefined ? {} : { errors }),
    ...(logs === undefined ? {} : { logs }),
  }
}

export const jobInfoOf = (
  id: string,
  r: ReadonlyArray<unknown>,
  /** Where the reply holds the priority (the added time follows it): get-job's 15th field; job-peek's 19th (after its lengths). */
  priorityAt = 14,
  /** Where it holds the errors and the logs: get-job's 17th and 18th; job-peek's 21st and 23rd. */
  listsAt: { readonly errors: number; readonly logs: number } = { errors: 16, logs: 17 },
): JobInfo<string> | undefined => {
  if (r[0] !== 1) return undefined
  const state = String(r[1]) as JobState
  const failures = Number(r[4])
  const lostLeases = Number(r[5])
  const score = r[9] === null || r[9] === undefined ? undefined : Number(r[9])
  const used = failures + lostLeases
  // a traced or named job carries its context and name in front of its payload (model/Carrier.ts)
  const carried = splitPayload(String(r[2]))
  const info: JobInfo<string> = {
    id,
    state,
    payload: carried.payload,
    attempt: state === "dead" ? Math.max(used, 1) : used + 1,
    maxAttempts: Number(r[3]),
    failures,
    lostLeases,
    addedAt: addedAtOf(id, r[priorityAt + 1]),
    ...(state === "delayed" && score !== undefined ? { dueAt: score } : {}),
    ...(state === "active" && score !== undefined ? { lease: leaseOf(r, score) } : {}),
    ...(typeof r[7] === "string" ? { result: parsed(r[7]) } : {}),
    ...(typeof r[6] === "string" ? { error: lastError(r[6]) } : {}),
    ...((state === "completed" || state === "dead" || state === "cancelled") && score !== undefined
      ? { finishedAt: score }
      : {}),
    ...startedAtOf(state, r[11]),
    ...extrasOf(r),
    priority: Number(r[priorityAt] ?? 0),
    ...nameAndListsOf(carried.name, r, listsAt),
  }
  const scheduledFor = scheduledForOf(id)
  return scheduledFor === undefined ? info : { ...info, scheduledFor }
}

/** `info` with its payload parsed as JSON (a payload that is not JSON, written around leaseq, is kept as stored). */
export const withJsonPayload = <T>(info: JobInfo<string>): JobInfo<T> => {
  let payload: unknown = info.payload
  try {
    payload = JSON.parse(info.payload)
  } catch {}
  return { ...info, payload: payload as T }
}

/** The job-control scripts of one queue, as Effects (KEYS and ARGV from their descriptors, scripts/JobScripts.ts). */
export const makeJobCommands = (client: RedisClient, k: QueueKeys) => ({
  /** Look a job up by id: O(1) hash reads and at most five O(log N) ZSCOREs. */
  getJob: (id: string) => runScript(client, k, Scripts.getJob, id).pipe(Effect.map((r) => jobInfoOf(id, r))),
  /** Cancel a job: the state it was in, or undefined when unknown or already finished. */
  cancel: (id: string, children: CancelChildren = "cancel") => runScript(client, k, Scripts.cancel, { id, children }),
  /** Give a waiting or delayed job a new priority (`lifo`: at its front): the state it is in, else `JobNotWaiting`. */
  changePriority: (id: string, priority: number, lifo = false) =>
    runScript(client, k, Scripts.changePriority, { id, priority, lifo }).pipe(
      Effect.flatMap((r) => priorityChanged(id, r)),
    ),
  /** Pause the queue: true when it was not paused before. */
  pause: runScript(client, k, Scripts.pause, undefined),
  /** Resume the queue: true when it was paused. */
  resume: runScript(client, k, Scripts.resume, undefined),
  /** Free a dedupe key: true when it was held. */
  clearDedupe: (key: string) => runScript(client, k, Scripts.clearDedupe, key),
  /** Set or clear a queue-wide flow limit, or lift a hold (checked by the caller): true when a hold in force was lifted. */
  setLimits: (change: LimitChange) => runScript(client, k, Scripts.setLimits, change),
  /** Store the retention policy (validated by the caller). */
  setRetention: (r: Retention) => runScript(client, k, Scripts.setRetention, retentionArgs(r)),
  /** The stored retention policy, the default where unset: one HMGET. */
  retention: Effect.tryPromise({
    try: () => client.command("HMGET", [k.meta, ...RETENTION_FIELDS]),
    catch: (e): RedisError => redisError("HMGET", e, client.describe, client.lastError?.()),
  }).pipe(Effect.map(decodeRetention)),
})

/** The job-control commands of one queue. */
export type JobCommands = ReturnType<typeof makeJobCommands>
