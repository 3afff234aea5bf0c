/**
 * The descriptors of the scripts that look up and steer single jobs and the queue:
 * `get-job`, `cancel`, `change-priority`, `pause`, `resume`, `clear-dedupe`, `set-limits`.
 */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { newRequestId } from "../model/RequestId.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** The states `cancel` can stop a job in. */
export type CancelledFrom = "waiting" | "delayed" | "active" | "waiting-children"

/**
 * What a cancel does to a parent's pending children (flows, docs/flows.md): `"cancel"` them too
 * (those no other parent waits on), or `"keep"` them.
 */
export type CancelChildren = "cancel" | "keep"

/** The keys of a job look-up (get-job, and the dashboard's job-peek): every state and per-job hash, then the ready group. */
export const JOB_LOOKUP_KEYS = [
  "active",
  "dead",
  "done",
  "cancelled",
  "data",
  "max",
  "lease",
  "fails",
  "lost",
  "err",
  "result",
  "dkey",
  "holder",
  "progress",
  "timeout",
  "meta",
  "errors",
  "logs",
  ...READY_KEYS,
] as const

/** `get-job`: everything the queue knows about one job (the raw reply; see JobCommands.jobInfoOf). */
export const getJob = defineScript({
  name: "get-job",
  keys: JOB_LOOKUP_KEYS,
  argv: ["layout", "id"],
  args: (id: string): Argv => [LAYOUT_VERSION, id],
  decode: (reply): ReadonlyArray<unknown> => list<unknown>(reply),
})

/** One `log` call: a leased job's id, its lease token and the lines (each JSON text of a string). */
export interface LogInput {
  readonly id: string
  readonly token: number
  readonly lines: ReadonlyArray<string>
}

/** `log`: the lines the job's log holds after the call, or undefined when its lease was not held under the token. */
export const log = defineScript({
  name: "log",
  keys: ["meta", "lease", "logs", "holder"],
  argv: ["layout", "id", "token"],
  rest: ["line"],
  args: (p: LogInput): Argv => [LAYOUT_VERSION, p.id, p.token, ...p.lines],
  decode: (reply): number | undefined => {
    const r = list<number>(reply)
    return r[0] === 1 ? Number(r[1]) : undefined
  },
})

/** `cancel`: the state the job was in, or undefined when unknown or already finished. */
export const cancel = defineScript({
  name: "cancel",
  keys: [
    "active",
    "dead",
    "done",
    "cancelled",
    "meta",
    "lease",
    "data",
    "max",
    "fails",
    "lost",
    "err",
    "dkey",
    "progress",
    "timeout",
    "dedupe",
    "dedupeid",
    "holder",
    "events",
    "backoff",
    "receipts",
    "receiptsAt",
    "errors",
    "logs",
    ...READY_KEYS,
  ],
  argv: ["layout", "id", "requestId", "children"],
  // the request id (default: drawn when the call's ARGV is built, so a re-send carries the same) is the call's receipt
  args: (
    i:
      | string
      | {
          readonly id: string
          readonly requestId?: string | undefined
          /** A parent's pending children: cancelled too (default) or kept. */
          readonly children?: CancelChildren | undefined
        },
  ): Argv =>
    typeof i === "string"
      ? [LAYOUT_VERSION, i, newRequestId(), "cancel"]
      : [LAYOUT_VERSION, i.id, i.requestId ?? newRequestId(), i.children ?? "cancel"],
  decode: (reply): CancelledFrom | undefined => {
    const r = list<number | string>(reply)
    return r[0] === 1 ? (r[1] as CancelledFrom) : undefined
  },
})

/** What `change-priority` answers: the state the job was in (moved), or the state that kept it from moving. */
export type PriorityChange =
  | { readonly changed: true; readonly was: "waiting" | "delayed" }
  | { readonly changed: false; readonly state: string }

/** `change-priority`: give a waiting or delayed job a new priority. */
export const changePriority = defineScript({
  name: "change-priority",
  keys: [
    "meta",
    "data",
    "active",
    "dead",
    "done",
    "cancelled",
    "lease",
    "holder",
    "receipts",
    "receiptsAt",
    ...READY_KEYS,
  ],
  argv: ["layout", "id", "priority", "requestId", "lifo"],
  // the request id as cancel's
  args: ({
    id,
    priority,
    requestId = newRequestId(),
    lifo = false,
  }: {
    readonly id: string
    readonly priority: number
    readonly requestId?: string
    readonly lifo?: boolean
  }): Argv => [LAYOUT_VERSION, id, priority, requestId, lifo ? "1" : "0"],
  decode: (reply): PriorityChange => {
    const r = list<number | string>(reply)
    return r[0] === 1 ? { changed: true, was: r[1] as "waiting" | "delayed" } : { changed: false, state: String(r[1]) }
  },
})

/** `pause`: true when the queue was not paused before. */
export const pause = defineScript({
  name: "pause",
  keys: ["meta", "events"],
  argv: ["layout"],
  args: (_: undefined): Argv => [LAYOUT_VERSION],
  decode: (reply): boolean => list(reply)[0] === 1,
})

/** `resume`: true when the queue was paused. */
export const resume = defineScript({
  name: "resume",
  keys: ["meta", "events", ...READY_KEYS],
  argv: ["layout"],
  args: (_: undefined): Argv => [LAYOUT_VERSION],
  decode: (reply): boolean => list(reply)[0] === 1,
})

/** `set-retention`: store a queue's retention policy (the values of RETENTION_FIELDS, "" for no bound). */
export const setRetention = defineScript({
  name: "set-retention",
  keys: ["meta"],
  argv: ["layout", "keep", "keepMs", "keepCancelled", "keepCancelledMs", "keepDead", "keepDeadMs"],
  args: (values: ReadonlyArray<string | number>): Argv => [LAYOUT_VERSION, ...values],
  decode: (reply): boolean => list(reply)[0] === 1,
})

/** `clear-dedupe`: true when the key was held. */
export const clearDedupe = defineScript({
  name: "clear-dedupe",
  keys: ["dedupe", "dedupeid", "meta"],
  argv: ["layout", "key"],
  args: (key: string): Argv => [LAYOUT_VERSION, key],
  decode: (reply): boolean => list(reply)[0] === 1,
})

/**
 * What `set-limits` sets: the rate limit (`value` max, `perMs`) or the concurrency cap
 * (`value`); null `value` clears it (clearing the rate limit lifts a RateLimited hold too).
 * `hold` only clears (value null): it lifts a RateLimited hold.
 */
export interface LimitChange {
  readonly limit: "rate" | "concurrency" | "hold"
  readonly value: number | null
  readonly perMs?: number
}

/** `set-limits`: set or clear a queue-wide flow limit, or lift a hold (see lua/include/flow.lua): true when a hold in force was lifted. */
export const setLimits = defineScript({
  name: "set-limits",
  keys: ["meta", "rate", ...READY_KEYS],
  argv: ["layout", "limit", "value", "perMs"],
  args: (c: LimitChange): Argv => [LAYOUT_VERSION, c.limit, c.value ?? "", c.perMs ?? ""],
  decode: (reply): boolean => list(reply)[1] === 1,
})
