/**
 * The descriptors of the acknowledgements of leased jobs: `complete`, `fail` and
 * `release`, each sent on the caller's ack lane (model/AckLanes.ts) so that a re-send
 * answers what the first run did.
 */
import { type AckInput, laneArgs, type OnLane } from "../model/AckLanes.ts"
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Completion, type LeaseRef, pushCompletions } from "./LeaseScripts.ts"
import { type Argv, defineScript, flags, list } from "./Script.ts"

/** `complete`: true per job completed, false when its lease was lost. */
export const complete = defineScript({
  name: "complete",
  keys: [
    "active",
    "lease",
    "meta",
    "data",
    "max",
    "fails",
    "lost",
    "err",
    "done",
    "result",
    "holder",
    "progress",
    "timeout",
    "dkey",
    "dedupe",
    "dedupeid",
    "events",
    "cancelled",
    "backoff",
    "reqs",
    "errors",
    "logs",
    ...READY_KEYS,
  ],
  // fan-in: the parent queue's keys, when the caller gives them (same slot: Commands.ts)
  peer: ["meta", "events", ...READY_KEYS],
  argv: ["layout", "lane", "requestId", "peer", "queue"],
  rest: ["id", "token", "result"],
  args: ({ items, lane, fanin }: AckInput<"items", Completion> & { readonly fanin?: FanIn | undefined }): Argv =>
    pushCompletions([LAYOUT_VERSION, ...laneArgs(lane), fanin?.peer ?? "", fanin?.queue ?? ""], items),
  // 2: completed, and notes for its parents went to the outbox (flows: drain it now); the
  // notes themselves follow the statuses, as strings (lua/complete.lua)
  decode: (reply): Acked => {
    const r = list(reply)
    const out: boolean[] & { notes?: boolean; outbox?: ReadonlyArray<string> } = []
    const outbox: string[] = []
    for (const x of r) {
      if (typeof x === "string") outbox.push(x)
      else out.push(x === 1 || x === 2)
    }
    if (r.includes(2)) out.notes = true
    if (outbox.length > 0) out.outbox = outbox
    return out
  },
})

/**
 * A complete's peer (flows' fan-in): `peer`, the parent queue whose keys the call carries, and
 * `queue`, the completing jobs' own queue (as the parents' edges name it).
 */
export interface FanIn {
  readonly peer: string
  readonly queue: string
}

/**
 * `complete`'s answer: true per job completed; `notes` when the call left notes for parents
 * in the outbox, `outbox` those notes (at most 500 and 1 MiB; none on a re-send), to apply at once.
 */
export type Acked = ReadonlyArray<boolean> & {
  readonly notes?: boolean
  readonly outbox?: ReadonlyArray<string> | undefined
}

/**
 * How `fail` treats the job: retry unless attempts are used up, dead after this failure, or
 * dead without counting one; `snooze` (delayed) and `hold` (front of wait, the queue held)
 * count no failure (a handler's Snooze and RateLimited, see lua/fail.lua).
 */
export type FailMode = "retry" | "final" | "dead" | "snooze" | "hold"

/** One fail call (see {@link fail}). */
export interface FailInput extends OnLane {
  readonly lease: LeaseRef
  /** The retry's delay, for a job without a backoff of its own (and no `backoff` below). */
  readonly delayMs: number
  readonly error: string
  readonly mode: FailMode
  /** A backoff (JSON) for a job without its own, instead of `delayMs` (manual fails: the default backoff). */
  readonly backoff?: string | undefined
}

/** `fail`: the job was scheduled again (`retry`), went to dead (`dead`), or its lease was lost (`lost`). */
export const fail = defineScript({
  name: "fail",
  keys: [
    "active",
    "lease",
    "meta",
    "dead",
    "err",
    "fails",
    "lost",
    "max",
    "holder",
    "dkey",
    "dedupe",
    "dedupeid",
    "events",
    "cancelled",
    "data",
    "progress",
    "timeout",
    "result",
    "backoff",
    "reqs",
    "errors",
    "logs",
    ...READY_KEYS,
  ],
  argv: ["layout", "id", "token", "retryDelayMs", "error", "mode", "backoff", "jitter", "lane", "requestId"],
  // the jitter and request id are drawn when the call's ARGV is built: a re-send carries the same
  args: ({ lease, delayMs, error, mode, backoff = "", lane }: FailInput): Argv => {
    const jitter = Math.random().toFixed(6)
    return [LAYOUT_VERSION, lease.id, lease.token, delayMs, error, mode, backoff, jitter, ...laneArgs(lane)]
  },
  decode: (reply): "retry" | "dead" | "lost" => {
    const code = list(reply)[0]
    return code === 1 ? "retry" : code === 2 ? "dead" : "lost"
  },
})

/** `release`: true per job given back to wait, false when its lease was lost. */
export const release = defineScript({
  name: "release",
  keys: ["active", "lease", "meta", "holder", "events", "reqs", ...READY_KEYS],
  argv: ["layout", "lane", "requestId"],
  rest: ["id", "token"],
  args: ({ leases, lane }: AckInput<"leases", LeaseRef>): Argv => [
    LAYOUT_VERSION,
    ...laneArgs(lane),
    ...leases.flatMap((l) => [l.id, l.token]),
  ],
  decode: flags,
})
