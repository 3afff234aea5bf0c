/**
 * Typed calls of the scripts that look up and steer single jobs and the whole queue:
 * get-job, cancel, pause, resume, clear-dedupe. KEYS are built here in the order each
 * script's header names them.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../redis/Client.ts"
import type { ScriptFailure } from "./Commands.ts"
import { LAYOUT_VERSION, type QueueKeys } from "./Keys.ts"
import { redisError, scriptError } from "./Replies.ts"
import { type Script, Scripts } from "./Scripts.ts"

/** Where a job is. `completed` and `cancelled` jobs are seen only while retained (`keepCompleted`). */
export type JobState = "waiting" | "delayed" | "active" | "completed" | "dead" | "cancelled"

/** What the queue knows about one job (see `getJob`). `P` is the payload's type. */
export interface JobInfo<P = unknown> {
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
  /** When the job was added (ms since the epoch, the producer's clock: from its ULID id). */
  readonly addedAt: number
  /** A delayed job: when it becomes due (ms, Redis clock). */
  readonly dueAt?: number
  /** An active job: its lease token and deadline (ms, Redis clock). */
  readonly lease?: { readonly token: number; readonly deadline: number }
  /** A retained completed job: what its handler returned (when it returned something). */
  readonly result?: unknown
  /** The last error, with its `reason` (a failure, a lost lease, an invalid payload), if any. */
  readonly error?: unknown
  /** Completed, dead or cancelled: when (ms, Redis clock). */
  readonly finishedAt?: number
  /** The dedupe key the job was added with. */
  readonly dedupeKey?: string
}

/** The states `cancel` can stop a job in. */
export type CancelledFrom = "waiting" | "delayed" | "active"

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

const parsed = (text: unknown): unknown => {
  if (typeof text !== "string") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The reply of get-job as a {@link JobInfo} with the payload as stored (JSON text). */
export const jobInfoOf = (id: string, r: ReadonlyArray<unknown>): JobInfo<string> | undefined => {
  if (r[0] !== 1) return undefined
  const state = String(r[1]) as JobState
  const failures = Number(r[4])
  const lostLeases = Number(r[5])
  const score = r[9] === null || r[9] === undefined ? undefined : Number(r[9])
  const used = failures + lostLeases
  const info: JobInfo<string> = {
    id,
    state,
    payload: String(r[2]),
    attempt: state === "dead" ? Math.max(used, 1) : used + 1,
    maxAttempts: Number(r[3]),
    failures,
    lostLeases,
    addedAt: ulidTimeOf(id),
    ...(state === "delayed" && score !== undefined ? { dueAt: score } : {}),
    ...(state === "active" && score !== undefined ? { lease: { token: Number(r[10]), deadline: score } } : {}),
    ...(typeof r[7] === "string" ? { result: parsed(r[7]) } : {}),
    ...(typeof r[6] === "string" ? { error: parsed(r[6]) } : {}),
    ...((state === "completed" || state === "dead" || state === "cancelled") && score !== undefined
      ? { finishedAt: score }
      : {}),
    ...(typeof r[8] === "string" ? { dedupeKey: r[8] } : {}),
  }
  return info
}

/** The job-control scripts of one queue, as Effects. */
export const makeJobCommands = (client: RedisClient, k: QueueKeys) => {
  const call = <A>(script: Script, keys: ReadonlyArray<string>, args: ReadonlyArray<string>) =>
    Effect.tryPromise({
      try: () => client.script(script, keys, [LAYOUT_VERSION, ...args]),
      catch: (e) => redisError(`${script.name} script`, e, client.describe, client.lastError?.()),
    }).pipe(
      Effect.flatMap((reply): Effect.Effect<A, ScriptFailure> => {
        const failure = scriptError(k, reply)
        return failure ? Effect.fail(failure) : Effect.succeed(reply as A)
      }),
    )
  // each script's KEYS, in the order its header names them
  const getJobKeys = [k.active, k.delayed, k.dead, k.done, k.cancelled, k.data, k.max, k.lease, k.fails]
  getJobKeys.push(k.lost, k.err, k.result, k.dkey, k.meta)
  const cancelKeys = [k.wait, k.active, k.delayed, k.dead, k.done, k.cancelled, k.meta, k.lease, k.data]
  cancelKeys.push(k.max, k.fails, k.lost, k.err, k.dkey, k.dedupe, k.dedupeid, k.events)
  return {
    /** Look a job up by id: O(1) hash reads and at most five O(log N) ZSCOREs. */
    getJob: (id: string) =>
      call<Array<unknown>>(Scripts.getJob, getJobKeys, [id]).pipe(Effect.map((r) => jobInfoOf(id, r))),
    /** Cancel a job: the state it was in, or undefined when unknown or already finished. */
    cancel: (id: string) =>
      call<[number, string?]>(Scripts.cancel, cancelKeys, [id]).pipe(
        Effect.map((r) => (r[0] === 1 ? (r[1] as CancelledFrom) : undefined)),
      ),
    /** Pause the queue: true when it was not paused before. */
    pause: call<[number]>(Scripts.pause, [k.meta, k.events], []).pipe(Effect.map((r) => r[0] === 1)),
    /** Resume the queue: true when it was paused. */
    resume: call<[number]>(Scripts.resume, [k.meta, k.wait, k.marker, k.events], []).pipe(
      Effect.map((r) => r[0] === 1),
    ),
    /** Free a dedupe key: true when it was held. */
    clearDedupe: (key: string) =>
      call<[number, string?]>(Scripts.clearDedupe, [k.dedupe, k.dedupeid, k.meta], [key]).pipe(
        Effect.map((r) => r[0] === 1),
      ),
  }
}

/** The job-control commands of one queue. */
export type JobCommands = ReturnType<typeof makeJobCommands>
