/** The descriptor of `lua/add.lua`: enqueue one or many jobs in one atomic call. */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** One job as `add` sends it (already validated and serialised). */
export interface NewJob {
  readonly id: string
  readonly payload: string
  readonly delayMs: number
  readonly maxAttempts: number
  readonly dedupeKey: string
  readonly dedupeTtlMs: number
  /** The job's own timeout in ms (0 or absent: none, the worker's default applies). */
  readonly timeoutMs?: number | undefined
  /** The job's group (absent or "": none). */
  readonly group?: string | undefined
  /** 0 (the default, runs first) to 1 000 000: lower runs first. */
  readonly priority?: number | undefined
  /** A job ready at once goes to the front of its priority (default false: the back). */
  readonly lifo?: boolean | undefined
  /** The job's own backoff as JSON text (absent: none, the worker's applies). */
  readonly backoff?: string | undefined
  /** A duplicate of this job (its dedupe key held) holds the key `dedupeTtlMs` from now again. */
  readonly dedupeExtend?: boolean | undefined
  /** A duplicate of this job replaces the holder's payload (and delay) while it waits or is delayed. */
  readonly dedupeReplace?: boolean | undefined
  /**
   * The job's dependencies (absent or "": none): "<hold>;<parents>", hold "1" when it waits for
   * children, parents "<queue>|<id>,…" the jobs waiting for it (see lua/add.lua, docs/flows.md).
   */
  readonly deps?: string | undefined
}

/** One add call: its request id (a re-send carries the same) and its jobs. */
export interface AddInput {
  readonly requestId: string
  readonly jobs: ReadonlyArray<NewJob>
}

/**
 * Each job's fields of add's ARGV, by name, in the order they are sent: the one list of them
 * on this side (the descriptor's `rest` is its keys). lua/add.lua reads them by the same names
 * from its `FIELDS` (test/scripts/script-descriptors.test.ts checks the two lists agree).
 */
export const JOB_FIELDS = {
  id: (j: NewJob): string | number => j.id,
  payload: (j: NewJob): string | number => j.payload,
  delayMs: (j: NewJob): string | number => j.delayMs,
  maxAttempts: (j: NewJob): string | number => j.maxAttempts,
  dedupeKey: (j: NewJob): string | number => j.dedupeKey,
  // the debounce modes ride on dedupeTtlMs ("e" extend, "r" replace): a field more per job
  // would cost every add one more argument per job
  dedupeTtlMs: (j: NewJob): string | number =>
    `${j.dedupeTtlMs}${j.dedupeExtend ? "e" : ""}${j.dedupeReplace ? "r" : ""}`,
  timeoutMs: (j: NewJob): string | number => j.timeoutMs ?? 0,
  priority: (j: NewJob): string | number => j.priority ?? 0,
  lifo: (j: NewJob): string | number => (j.lifo ? 1 : 0),
  backoff: (j: NewJob): string | number => j.backoff ?? "",
} as const

/** The names of {@link JOB_FIELDS}, in order. */
const jobFieldNames = Object.keys(JOB_FIELDS) as ReadonlyArray<keyof typeof JOB_FIELDS>
const jobFieldValues = Object.values(JOB_FIELDS)

/** The fields of a job after its id and payload, then its group and deps: one template of a templated add. */
const tailValues = jobFieldValues.slice(2)
const TEMPLATE = tailValues.length + 2

/** Write job `j`'s template (its fields past id and payload, its group, its deps) into `into`. */
const templateOf = (j: NewJob, into: Array<string | number>): void => {
  for (let f = 0; f < tailValues.length; f++) into[f] = tailValues[f]!(j)
  into[TEMPLATE - 2] = j.group ?? ""
  into[TEMPLATE - 1] = j.deps ?? ""
}

/** Whether the template at `args[at..]` equals `t`. */
const sameAt = (args: ReadonlyArray<string | number>, at: number, t: ReadonlyArray<string | number>): boolean => {
  for (let f = 0; f < TEMPLATE; f++) if (args[at + f] !== t[f]) return false
  return true
}

/**
 * A call of jobs with dependencies, templated (lua/add.lua's header): each run of jobs whose
 * fields past id and payload are equal (a parent's children) shares one template, so a job is
 * 2 arguments, not 12 (each argument costs the client's write and Redis's read). Undefined
 * when it would not be shorter.
 */
const templatedArgs = (requestId: string, jobs: ReadonlyArray<NewJob>): Argv | undefined => {
  const args: Array<string | number> = [LAYOUT_VERSION, requestId, `t${jobs.length}`, 0]
  const rows: Array<string> = []
  const current: Array<string | number> = new Array(TEMPLATE)
  // where the current run's count is, and its jobs so far
  let countAt = -1
  let count = 0
  for (const j of jobs) {
    templateOf(j, current)
    if (countAt < 0 || !sameAt(args, countAt + 1, current)) {
      if (countAt >= 0) args[countAt] = count
      countAt = args.length
      count = 0
      args.push(0)
      for (let f = 0; f < TEMPLATE; f++) args.push(current[f]!)
      args[3] = (args[3] as number) + 1
    }
    count++
    rows.push(j.id, j.payload)
  }
  args[countAt] = count
  // the plain form: 3 + (TEMPLATE + 2) entries a job
  if (args.length + rows.length >= 3 + jobs.length * (TEMPLATE + 2)) return undefined
  for (const r of rows) args.push(r)
  return args
}

/** add's ARGV in the plain form (lua/add.lua's header): each job's fields, then groups and deps when sent. */
const plainArgs = (requestId: string, jobs: ReadonlyArray<NewJob>, deps: boolean): Argv => {
  const args: Array<string | number> = [LAYOUT_VERSION, requestId, jobs.length]
  for (const j of jobs) for (const field of jobFieldValues) args.push(field(j))
  // the groups, one per job, only when a job of the call has one or has dependencies, then
  // the dependencies, only when a job has some (see lua/add.lua): an add without flows sends none
  if (deps || jobs.some((j) => j.group)) for (const j of jobs) args.push(j.group ?? "")
  if (deps) for (const j of jobs) args.push(j.deps ?? "")
  return args
}

/**
 * `add`: the id of each job (for a deduplicated job, the id of the job holding its key); none
 * for a templated call (jobs with dependencies, a flow's: its caller drew every id).
 */
export const add = defineScript({
  name: "add",
  keys: [
    "meta",
    "data",
    "max",
    "dedupe",
    "dedupeid",
    "receipts",
    "receiptsAt",
    "timeout",
    "dkey",
    "events",
    "backoff",
    "cancelled",
    ...READY_KEYS,
  ],
  argv: ["layout", "requestId", "n"],
  rest: jobFieldNames,
  args: ({ requestId, jobs }: AddInput): Argv => {
    const deps = jobs.some((j) => j.deps)
    return (deps && jobs.length > 1 && templatedArgs(requestId, jobs)) || plainArgs(requestId, jobs, deps)
  },
  decode: (reply): Array<string> => list<string>(reply).slice(1),
})
