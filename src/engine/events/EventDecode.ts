/**
 * Job events as the events stream holds them (lua/include/events.lua) and as readers
 * pass them on: the typed events, decoding an entry (which may carry one change for
 * several jobs of one call), and where reading starts for `from`.
 */
import { InvalidOptions } from "../model/Errors.ts"

/** Fields every event has. */
export interface EventBase {
  /** The stream entry id (`<ms>-<seq>`): pass it as `from` to resume after this event. */
  readonly eventId: string
  /** The job's id ("" for queue-wide events: paused, resumed, drained). */
  readonly jobId: string
  /** When it was recorded: ms since the epoch, on the Redis clock (from the entry id). */
  readonly at: number
  /** The queue, or for a partitioned queue the partition's sub-queue `<name>~<index>`. */
  readonly queue: string
  /** The job's name (add's `name` option), on `added` and `dead` events of a job added with one. */
  readonly name?: string
}

/** One job event, by kind. */
export type JobEvent =
  | (EventBase & { readonly kind: "added" })
  /** An add named this job's id or dedupe key: nothing was added, the add answered this id. */
  | (EventBase & { readonly kind: "deduplicated" })
  | (EventBase & { readonly kind: "active"; readonly token: number; readonly workerId: string })
  | (EventBase & { readonly kind: "progress"; readonly progress: unknown })
  | (EventBase & {
      readonly kind: "completed"
      /** The handler's result (decoded JSON) when it returned one of at most {@link RESULT_IN_EVENT_BYTES} (see {@link RESULTS_PER_ENTRY_BYTES}). */
      readonly result?: unknown
      /** A larger result is not in the event, only its size in bytes: `getJob(id).result` has it while the job is retained. */
      readonly resultBytes?: number
    })
  | (EventBase & {
      readonly kind: "failed"
      readonly willRetry: boolean
      readonly reason: string
      readonly attempt: number
    })
  | (EventBase & { readonly kind: "lease-lost"; readonly attempt: number })
  | (EventBase & { readonly kind: "released" })
  | (EventBase & { readonly kind: "dead"; readonly reason: string })
  | (EventBase & { readonly kind: "cancelled"; readonly was: string })
  /** The handler threw `Snooze`: the job went to delayed for `delayMs`, no attempt spent. */
  | (EventBase & { readonly kind: "snoozed"; readonly delayMs: number })
  /** The handler threw `RateLimited`: the job went back to the front, the queue held for `delayMs`. */
  | (EventBase & { readonly kind: "rate-limited"; readonly delayMs: number })
  | (EventBase & { readonly kind: "paused" })
  | (EventBase & { readonly kind: "resumed" })
  /** drain or clean deleted the job for good; `was` its state then. */
  | (EventBase & { readonly kind: "removed"; readonly was: string })
  /** promote made the delayed job ready; updatePayload replaced its payload. */
  | (EventBase & { readonly kind: "promoted" | "updated" })
  /** reschedule made the job due at `dueAt` (ms, Redis clock). */
  | (EventBase & { readonly kind: "rescheduled"; readonly dueAt: number })
  /** retry queued the finished job again; `was` its state then. */
  | (EventBase & { readonly kind: "retried"; readonly was: string })
  /** The queue-wide `drained`: a job left (completed, failed, cancelled, swept to dead) and none is left waiting or active. */
  | (EventBase & { readonly kind: "drained" })
  /** A parent's last dependency ended: it left waiting-children (flows, docs/flows.md). */
  | (EventBase & { readonly kind: "dependencies-done" })

/** The kind of a {@link JobEvent}. */
export type JobEventKind = JobEvent["kind"]

/** Where a reader starts: "now" (only events recorded from here on), "start" (every retained event), or after an event id. */
export type EventsFrom = "now" | "start" | string

/**
 * Largest result (JSON, in bytes) a `completed` event carries; a larger one is referred to by
 * its size (lua/include/events.lua). The results of one stream entry (up to 100 jobs of one
 * call) stay within {@link RESULTS_PER_ENTRY_BYTES}; those beyond are referred to as well.
 */
export const RESULT_IN_EVENT_BYTES = 1024

/** Most result bytes one events-stream entry carries (lua/include/events.lua). */
export const RESULTS_PER_ENTRY_BYTES = 4096

/** Default event retention of a queue (meta field `eventsMaxLen`), as lua/include/events.lua has it. */
export const DEFAULT_EVENTS_MAXLEN = 10_000

const EVENT_ID = /^([0-9]{1,20}(?:-[0-9]{1,20})?)(?:\.([0-9]{1,4}))?$/

/** Throws {@link InvalidOptions} unless `from` is "now", "start" or a stream id `<ms>-<seq>`. */
export const validateFrom = (from: unknown): EventsFrom => {
  if (from === undefined) return "now"
  if (from === "now" || from === "start" || (typeof from === "string" && EVENT_ID.test(from))) return from
  throw new InvalidOptions({
    field: "from",
    value: from,
    reason:
      'must be "now", "start" or an event id such as "1700000000000-0" or "1700000000000-0.3" (the eventId of an event)',
  })
}

/** Throws {@link InvalidOptions} unless `maxLen` is a whole number 0 … 10,000,000 (0: record no events). */
export const validateRetention = (maxLen: unknown): number => {
  if (typeof maxLen !== "number" || !Number.isInteger(maxLen) || maxLen < 0 || maxLen > 10_000_000) {
    throw new InvalidOptions({
      field: "maxLen",
      value: maxLen,
      reason: `must be a whole number from 0 (record no events) to 10000000; the default is ${DEFAULT_EVENTS_MAXLEN}`,
    })
  }
  return maxLen
}

const num = (v: string | undefined): number => Number(v ?? 0)

/** A `completed` event's result fields: `result` (JSON text) or `stored` (its size), as decodeEntry passes them for one job. */
const completedResult = (f: Record<string, string | undefined>): { result?: unknown; resultBytes?: number } => {
  if (f.stored !== undefined) return { resultBytes: Number(f.stored) }
  if (f.result === undefined) return {}
  try {
    return { result: JSON.parse(f.result) }
  } catch {
    return { result: f.result }
  }
}

/** One job's event from an entry's fields `f` (`id` one job id), or undefined for a kind this version does not know. */
const decodeOne = (base: EventBase, f: Record<string, string | undefined>): JobEvent | undefined => {
  switch (f.kind) {
    case "completed":
      return { ...base, kind: "completed", ...completedResult(f) }
    case "added":
    case "deduplicated":
    case "released":
    case "paused":
    case "resumed":
    case "drained":
    case "dependencies-done":
      return { ...base, kind: f.kind }
    case "active":
      return { ...base, kind: "active", token: num(f.token), workerId: f.worker ?? "" }
    case "progress": {
      let progress: unknown = f.value
      try {
        progress = JSON.parse(f.value ?? "null")
      } catch {}
      return { ...base, kind: "progress", progress }
    }
    case "failed":
      return {
        ...base,
        kind: "failed",
        willRetry: f.willRetry === "1",
        reason: f.reason ?? "",
        attempt: num(f.attempt),
      }
    case "snoozed":
    case "rate-limited":
      return { ...base, kind: f.kind, delayMs: num(f.delayMs) }
    case "lease-lost":
      return { ...base, kind: "lease-lost", attempt: num(f.attempt) }
    case "dead":
      return { ...base, kind: "dead", reason: f.reason ?? "" }
    case "cancelled":
    case "removed":
    case "retried":
      return { ...base, kind: f.kind, was: f.was ?? "" }
    case "promoted":
    case "updated":
      return { ...base, kind: f.kind }
    case "rescheduled":
      return { ...base, kind: "rescheduled", dueAt: num(f.dueAt) }
    default:
      return undefined
  }
}

/** `base` with the k-th job's name (field `name:<k>`) when the entry carries one. */
const baseOf = (f: Record<string, string>, k: number, base: EventBase): EventBase => {
  const name = f[`name:${k}`]
  return name === undefined ? base : { ...base, name }
}

/** The k-th job's result fields of a `completed` entry (`result:<k>`, `stored:<k>`), as `result` and `stored`. */
const resultOf = (f: Record<string, string>, k: number) => ({ result: f[`result:${k}`], stored: f[`stored:${k}`] })

/**
 * The events of one stream entry. An entry may carry one change for several jobs of one
 * call (`id` "a,b,c", and `token` "1,2,3" for active, `attempt` "2,1,3" for lease-lost):
 * one event per job, in order, with
 * eventIds `<entry id>.0`, `<entry id>.1`, …; an entry for one job gives the entry id itself.
 */
export const decodeEntry = (queue: string, entryId: string, fields: ReadonlyArray<string>): JobEvent[] => {
  const f: Record<string, string> = {}
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!
  const at = num(entryId.split("-")[0])
  const ids = (f.id ?? "").split(",")
  if (ids.length === 1) {
    const one = decodeOne(baseOf(f, 0, { eventId: entryId, jobId: ids[0]!, at, queue }), { ...f, ...resultOf(f, 0) })
    return one ? [one] : []
  }
  // per-job fields, joined in the order of the ids: active's token, lease-lost's attempt
  const tokens = f.token?.split(",")
  const attempts = f.attempt?.split(",")
  const out: JobEvent[] = []
  for (const [i, jobId] of ids.entries()) {
    const one = decodeOne(baseOf(f, i, { eventId: `${entryId}.${i}`, jobId, at, queue }), {
      ...f,
      token: tokens?.[i],
      attempt: attempts?.[i],
      ...resultOf(f, i),
    })
    if (one) out.push(one)
  }
  return out
}

/**
 * Where reading starts for an explicit event id: after entry `after`, but when the id
 * names an event inside an entry (`<entry>.<k>`), from that entry on with its first
 * k + 1 events skipped (`skip`).
 */
export interface Start {
  readonly after: string
  readonly skip?: { readonly entry: string; readonly count: number }
}

/** The stream id just before `id` (`<ms>-<seq>`), so that reading after it starts at `id`. */
const before = (id: string): string => {
  const [ms, seq = "0"] = id.split("-")
  const s = BigInt(seq)
  if (s > 0n) return `${ms}-${s - 1n}`
  const m = BigInt(ms!)
  return m > 0n ? `${m - 1n}-18446744073709551615` : "0-0"
}

export const startOf = (eventId: string): Start => {
  const m = EVENT_ID.exec(eventId)
  if (!m?.[2]) return { after: eventId }
  const entry = m[1]!.includes("-") ? m[1]! : `${m[1]}-0`
  return { after: before(entry), skip: { entry, count: Number(m[2]) + 1 } }
}

/** Drop the events of `skip.entry` a resumed read has already passed on. */
export const skipDone = (events: JobEvent[], entryId: string, skip: Start["skip"]): JobEvent[] =>
  skip && entryId === skip.entry ? events.slice(skip.count) : events
