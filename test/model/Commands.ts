/**
 * The commands of the model test: each is one call of the Promise API, run on the model
 * (test/model/Model.ts, what the docs promise) and on a real queue (test/model/Real.ts), whose
 * answers must agree; after each the harness compares everything observable.
 *
 * A command has a `kind` ("cancel", "cancel~lost" for the same call with its reply lost and
 * re-sent): MODEL_COMMANDS=add,reserve,… runs only those kinds, MODEL_SKIP=… all but those
 * (see {@link commandArbitraries}). A new feature adds its calls here (CONTRIBUTING.md).
 */
import fc from "fast-check"
import { LARGE_PAYLOAD_BYTES } from "../../src/engine/calls/PayloadRefs.ts"
import { RateLimited, Worker } from "../../src/index.ts"
import { until } from "../support/until.ts"
import { flowKinds } from "./FlowCommands.ts"
import { type GroupLimits, type Model, type ModelJob, type Span, type State, WINDOW_MS } from "./Model.ts"
import {
  checkQuick,
  clearOfSpans,
  compare,
  expectSame,
  flowsOf,
  MARGIN_MS,
  Mismatch,
  type Outcome,
  type Real,
  settle,
  timed,
  withLostReply,
} from "./Real.ts"

type Cmd = fc.AsyncCommand<Model, Real>

/**
 * The findings still open on this branch (test/model/FINDINGS.md), avoided unless MODEL_AVOID
 * says otherwise: remove each as its fix is merged (and flip its test in regressions.test.ts);
 * `MODEL_AVOID= npm run model` runs with none avoided.
 */
export const OPEN_FINDINGS = ""

/**
 * Findings of the review of f43eb35 (shared/reviews/correctness-f43eb35) the generator steers
 * clear of: MODEL_AVOID=G1,G8,… keeps the property test green on a tree where those are not
 * fixed yet, so it can be enabled step by step (each finding's regression test stays on;
 * regressions.test.ts empties it, to replay each list whole).
 */
export const AVOID: Set<string> = new Set(
  (process.env.MODEL_AVOID ?? OPEN_FINDINGS)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== ""),
)

/** A short time (ms): it passes within a command list (delays, leases). */
const SHORT = 250
/** A long time: it never passes within a command list. */
const LONG = WINDOW_MS
const GROUPS = ["g1", "g2"] as const
const CUSTOM_IDS = ["c1", "c2"] as const
/** A large job's payload: past LARGE_PAYLOAD_BYTES, so a reserve after one reads it by reference. */
const LARGE_PAYLOAD = { n: 1, s: "é".repeat(LARGE_PAYLOAD_BYTES) }
/** The payload an {@link Add} sends. */
const payloadOf = (o: { readonly large?: boolean }) => (o.large === true ? LARGE_PAYLOAD : { n: 1 })

const ms = (t: "short" | "long") => (t === "short" ? SHORT : LONG)

/** The real call, with its reply lost and re-sent when `lost`. */
const call = <A>(r: Real, lost: boolean, f: () => Promise<A>): Promise<Outcome<A>> =>
  lost ? withLostReply(r, f) : settle(f())

/** What an outcome reads as, for comparison with the model: the value, or `{ err, state }` of a refusal. */
const seen = <A>(o: Outcome<A>): unknown => {
  if ("ok" in o) return o.ok ?? null
  const state = (o.error as { state?: string }).state
  if (o.err === "LeaseLost" || o.err === "JobCancelled" || o.err === "QueueHasActiveJobs") return { err: o.err }
  if (o.err === "WrongJobState" || o.err === "JobNotWaiting") return { err: o.err, state }
  throw o.error
}

/** The job picked by a command's `pick` among `jobs` (sorted by id, so a replay picks the same). */
const pickOf = <A>(xs: ReadonlyArray<A>, pick: number): A | undefined =>
  xs.length === 0 ? undefined : xs[pick % xs.length]
const activeJobs = (m: Model): ModelJob[] => m.inState("active").sort((a, b) => a.token - b.token)

abstract class Base implements Cmd {
  abstract readonly kind: string
  abstract step(m: Model, r: Real): Promise<void>
  check(_m: Readonly<Model>): boolean {
    return true
  }
  async run(m: Model, r: Real): Promise<void> {
    await this.step(m, r)
    await compare(m, r)
  }
  abstract toString(): string
}

/** Wait (Redis clock) until every short due time and deadline of the model has passed. */
const passShortSpans = async (m: Model, r: Real): Promise<void> => {
  const now = await r.now()
  const last = Math.max(
    0,
    ...m
      .spans()
      .filter((s) => s.hi - now < LONG / 2)
      .map((s) => s.hi),
  )
  await until("the short leases and delays ran out", async () => (await r.now()) > last, {
    everyMs: 10,
    timeoutMs: 5_000,
  })
}

// ---- (a) the core: add, reserve, complete, fail, cancel --------------------------------

export class Add extends Base {
  readonly kind: string
  readonly o: {
    readonly id: (typeof CUSTOM_IDS)[number] | undefined
    readonly priority: number
    readonly lifo: boolean
    readonly group: (typeof GROUPS)[number] | undefined
    readonly delay: "none" | "short" | "long"
    readonly maxAttempts: number
    /** A payload of LARGE_PAYLOAD_BYTES or more: reserve reads it by reference once it saw one. */
    readonly large?: boolean
  }
  readonly lost: boolean
  constructor(
    o: {
      readonly id: (typeof CUSTOM_IDS)[number] | undefined
      readonly priority: number
      readonly lifo: boolean
      readonly group: (typeof GROUPS)[number] | undefined
      readonly delay: "none" | "short" | "long"
      readonly maxAttempts: number
      readonly large?: boolean
    },
    lost: boolean,
  ) {
    super()
    this.o = o
    this.lost = lost
    this.kind = lost ? "add~lost" : "add"
  }
  override check(_m: Readonly<Model>): boolean {
    // G8: the first grouped job of a queue, added delayed, stalls the waiting ungrouped jobs
    return !(AVOID.has("G8") && this.o.group !== undefined && this.o.delay !== "none")
  }
  async step(m: Model, r: Real): Promise<void> {
    const o = this.o
    const options = {
      ...(o.id === undefined ? {} : { id: o.id }),
      ...(o.priority === 0 ? {} : { priority: o.priority }),
      ...(o.lifo ? { lifo: true } : {}),
      ...(o.group === undefined ? {} : { group: o.group }),
      ...(o.delay === "none" ? {} : { delayMs: ms(o.delay) }),
      maxAttempts: o.maxAttempts,
    }
    const full = m.groupFull(o.group, o.id)
    const payload = payloadOf(o)
    const { value, span } = await timed(r, o.delay === "none" ? 0 : ms(o.delay), () =>
      call(r, this.lost, () => r.q.add(payload, options)),
    )
    if (full !== undefined || ("err" in value && value.err === "GroupFull")) {
      const e = ("err" in value ? value.error : value.ok) as { group?: string; maxSize?: number; size?: number }
      const real = "err" in value ? { err: value.err, group: e.group, maxSize: e.maxSize, size: e.size } : value.ok
      expectSame("add past the group's maxSize: GroupFull (nothing written)", { err: "GroupFull", ...full }, real)
      return
    }
    const id = seen(value) as string
    if (o.id !== undefined) expectSame("add's answer", o.id, id)
    m.add(id, {
      priority: o.priority,
      lifo: o.lifo,
      group: o.group,
      delay: o.delay === "none" ? undefined : span,
      maxAttempts: o.maxAttempts,
      payload,
    })
  }
  toString(): string {
    return `${this.kind}(${JSON.stringify(this.o)})`
  }
}

/** `n` plain jobs of group g1 added one by one (a burst of one tenant). */
export class AddG1 extends Base {
  readonly kind = "addG1"
  readonly n: number
  constructor(n: number) {
    super()
    this.n = n
  }
  async step(m: Model, r: Real): Promise<void> {
    const one = new Add({ id: undefined, priority: 0, lifo: false, group: "g1", delay: "none", maxAttempts: 3 }, false)
    for (let i = 0; i < this.n; i++) await one.step(m, r)
  }
  toString(): string {
    return `${this.kind}(${this.n})`
  }
}

export class Reserve extends Base {
  readonly kind: string
  readonly count: number
  readonly lease: "short" | "long"
  readonly lost: boolean
  constructor(count: number, lease: "short" | "long", lost: boolean) {
    super()
    this.count = count
    this.lease = lease
    this.lost = lost
    this.kind = lost ? "reserve~lost" : "reserve"
  }
  async step(m: Model, r: Real): Promise<void> {
    // a lost reply takes a reconnect: too long to stay clear of a short due time or deadline
    if (this.lost) await passShortSpans(m, r)
    const now = await clearOfSpans(m, r)
    const e = m.eligible(this.count, now)
    const { value, span } = await timed(r, ms(this.lease), () =>
      call(r, this.lost, () => r.q.reserve({ count: this.count, leaseMs: ms(this.lease) })),
    )
    await checkQuick(m, r, now)
    const jobs = seen(value) as Array<{ id: string; token: number; payload: unknown }>
    const ids = jobs.map((j) => j.id)
    const plain = ids.filter((id) => m.jobs.get(id)?.group === undefined)
    expectSame(`reserve(${this.count}) leased how many (of ${JSON.stringify(ids)})`, e.total, ids.length)
    expectSame("reserve's ungrouped jobs, in order", e.ungrouped.slice(0, plain.length), plain)
    for (const [g, { ids: ready, room }] of e.groups) {
      const got = ids.filter((id) => m.jobs.get(id)?.group === g)
      if (got.length > room || got.some((id) => !ready.includes(id)))
        expectSame(
          `reserve's jobs of group ${g} (room ${room}, ready ${JSON.stringify(ready)})`,
          "at most room of the ready",
          got,
        )
    }
    const stray = ids.filter((id) => m.state(id) !== "waiting")
    expectSame("reserve leased only eligible jobs", [], stray)
    for (const j of jobs) {
      const want = m.jobs.get(j.id)?.payload
      if (want !== undefined) expectSame(`reserve's payload of ${j.id}`, want, j.payload)
    }
    m.leased(jobs, span)
    for (const id of ids) flowsOf(m)?.leased(id)
  }
  toString(): string {
    return `${this.kind}(${this.count}, ${this.lease})`
  }
}

export class Complete extends Base {
  readonly kind: string
  readonly pick: number
  readonly lost: boolean
  constructor(pick: number, lost: boolean) {
    super()
    this.pick = pick
    this.lost = lost
    this.kind = lost ? "complete~lost" : "complete"
  }
  override check(m: Readonly<Model>): boolean {
    return m.inState("active").length > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    const j = pickOf(activeJobs(m), this.pick)!
    const real = seen(await call(r, this.lost, () => r.q.complete(j.id, j.token, { ok: 1 })))
    const model = m.complete(j.id, j.token)
    // docs/jobs.md: "A complete whose reply was lost may reject with LeaseLost although it landed"
    if (this.lost && model === "ok" && JSON.stringify(real) === JSON.stringify({ err: "LeaseLost" })) return
    expectSame(`complete(${j.id})`, model === "ok" ? null : { err: model }, real)
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

/** Complete every active job, oldest lease first (a worker finishing what it holds). */
export class CompleteAll extends Base {
  readonly kind = "completeAll"
  override check(m: Readonly<Model>): boolean {
    return m.inState("active").length > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    for (const j of activeJobs(m)) {
      const real = seen(await settle(r.q.complete(j.id, j.token, { ok: 1 })))
      const model = m.complete(j.id, j.token)
      expectSame(`complete(${j.id})`, model === "ok" ? null : { err: model }, real)
    }
  }
  toString(): string {
    return this.kind
  }
}

export class Fail extends Base {
  readonly kind: string
  readonly pick: number
  readonly retry: boolean
  readonly delay: "short" | "long"
  readonly lost: boolean
  constructor(pick: number, retry: boolean, delay: "short" | "long", lost: boolean) {
    super()
    this.pick = pick
    this.retry = retry
    this.delay = delay
    this.lost = lost
    this.kind = lost ? "fail~lost" : "fail"
  }
  override check(m: Readonly<Model>): boolean {
    return m.inState("active").length > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    const j = pickOf(activeJobs(m), this.pick)!
    const { value, span } = await timed(r, ms(this.delay), () =>
      call(r, this.lost, () =>
        r.q.fail(j.id, j.token, new Error("model"), { retry: this.retry, delayMs: ms(this.delay) }),
      ),
    )
    const real = seen(value)
    const model = m.fail(j.id, j.token, this.retry, span)
    if (
      this.lost &&
      (model === "retry" || model === "dead") &&
      JSON.stringify(real) === JSON.stringify({ err: "LeaseLost" })
    )
      return
    expectSame(`fail(${j.id})`, model === "retry" || model === "dead" ? model : { err: model }, real)
  }
  toString(): string {
    return `${this.kind}(#${this.pick}, retry ${this.retry}, ${this.delay})`
  }
}

/** A one-job call on any job ever added (gone ones included), picked by `pick`. */
abstract class OnJob extends Base {
  readonly pick: number
  constructor(pick: number) {
    super()
    this.pick = pick
  }
  override check(m: Readonly<Model>): boolean {
    return m.known.length > 0
  }
  id(m: Model): string {
    return pickOf(m.known, this.pick)!
  }
}

export class Cancel extends OnJob {
  readonly kind: string
  readonly lost: boolean
  constructor(pick: number, lost: boolean) {
    super(pick)
    this.lost = lost
    this.kind = lost ? "cancel~lost" : "cancel"
  }
  override check(m: Readonly<Model>): boolean {
    if (m.known.length === 0) return false
    // FM1: the jobs a cancelled parent's cascade cancels skip the cancelled retention count
    const cascades = m.state(pickOf(m.known, this.pick)!) === "waiting-children"
    if (AVOID.has("FM1") && cascades && m.retention.cancelled < 1000) return false
    // G10: a cancel re-sent after a lost reply answers "nothing done"
    return !(AVOID.has("G10") && this.lost)
  }
  async step(m: Model, r: Real): Promise<void> {
    const id = this.id(m)
    const real = seen(await call(r, this.lost, () => r.q.cancel(id)))
    expectSame(`cancel(${id})`, m.cancel(id) ?? null, real)
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

// ---- (b) groups, limits, holds -----------------------------------------------------------

export class SetGroupLimits extends Base {
  readonly kind = "setGroupLimits"
  readonly group: (typeof GROUPS)[number] | undefined
  readonly limits: GroupLimits | null
  constructor(group: (typeof GROUPS)[number] | undefined, limits: GroupLimits | null) {
    super()
    this.group = group
    this.limits = limits
  }
  override check(m: Readonly<Model>): boolean {
    if (this.group !== undefined) return true
    // G3: a default rate window is reset when a group runs empty
    if (AVOID.has("G3") && this.limits?.max !== undefined) return false
    // G9: changing the default leaves groups held by the old default window
    return !(AVOID.has("G9") && m.groupDefault !== undefined)
  }
  async step(m: Model, r: Real): Promise<void> {
    const l = this.limits
    const real =
      l === null
        ? null
        : {
            ...(l.concurrency === undefined ? {} : { concurrency: l.concurrency }),
            ...(l.max === undefined ? {} : { max: l.max, perMs: WINDOW_MS }),
            ...(l.maxSize === undefined ? {} : { maxSize: l.maxSize }),
          }
    if (this.group === undefined) await r.q.setGroupLimits(real)
    else await r.q.setGroupLimits(this.group, real)
    m.setGroupLimits(this.group, l)
  }
  toString(): string {
    return `${this.kind}(${this.group ?? "default"}, ${JSON.stringify(this.limits)})`
  }
}

export class PauseGroup extends Base {
  readonly kind: string
  readonly group: (typeof GROUPS)[number]
  readonly pause: boolean
  readonly lost: boolean
  constructor(group: (typeof GROUPS)[number], pause: boolean, lost: boolean) {
    super()
    this.group = group
    this.pause = pause
    this.lost = lost
    this.kind = `${pause ? "pauseGroup" : "resumeGroup"}${lost ? "~lost" : ""}`
  }
  override check(_m: Readonly<Model>): boolean {
    // G10: a pauseGroup re-sent after a lost reply answers false
    return !(AVOID.has("G10") && this.lost)
  }
  async step(m: Model, r: Real): Promise<void> {
    const real = seen(
      await call(r, this.lost, () => (this.pause ? r.q.pauseGroup(this.group) : r.q.resumeGroup(this.group))),
    )
    expectSame(`${this.kind}(${this.group})`, this.pause ? m.pauseGroup(this.group) : m.resumeGroup(this.group), real)
  }
  toString(): string {
    return `${this.kind}(${this.group})`
  }
}

export class Pause extends Base {
  readonly kind: string
  readonly pause: boolean
  constructor(pause: boolean) {
    super()
    this.pause = pause
    this.kind = pause ? "pause" : "resume"
  }
  async step(m: Model, r: Real): Promise<void> {
    const real = this.pause ? await r.q.pause() : await r.q.resume()
    expectSame(this.kind, this.pause ? m.pause() : m.resume(), real)
  }
  toString(): string {
    return this.kind
  }
}

export class SetConcurrency extends Base {
  readonly kind = "setConcurrency"
  readonly n: number | null
  constructor(n: number | null) {
    super()
    this.n = n
  }
  async step(m: Model, r: Real): Promise<void> {
    await r.q.setConcurrency(this.n)
    m.setConcurrency(this.n)
  }
  toString(): string {
    return `${this.kind}(${this.n})`
  }
}

export class SetRateLimit extends Base {
  readonly kind = "setRateLimit"
  readonly max: number | null
  constructor(max: number | null) {
    super()
    this.max = max
  }
  async step(m: Model, r: Real): Promise<void> {
    await r.q.setRateLimit(this.max === null ? null : { max: this.max, perMs: WINDOW_MS })
    m.setRateLimit(this.max)
  }
  toString(): string {
    return `${this.kind}(${this.max})`
  }
}

/**
 * A Worker (concurrency 1, no prefetch, no sweep) whose handler throws `RateLimited` for an hour:
 * the job it took goes back to the front and the queue is held. Manual `fail` cannot hold the
 * queue, so this is the model's one Worker. Skipped while a short due time or deadline is pending
 * (the worker's reserve runs at a moment the harness does not choose), while a delayed job is
 * due (only a reserve would promote it) or when nothing may be leased.
 */
export class WorkerRateLimited extends Base {
  readonly kind = "workerRateLimited"
  override check(_m: Readonly<Model>): boolean {
    // G6: nothing lifts a RateLimited hold
    return !AVOID.has("G6")
  }
  readonly url: () => string
  constructor(url: () => string) {
    super()
    this.url = url
  }
  async step(m: Model, r: Real): Promise<void> {
    const now = await r.now()
    if (m.spans().some((s) => s.hi >= now - MARGIN_MS)) return
    // eligible() promotes the due delayed jobs in the model, as the worker's reserve would in
    // Redis; with nothing to lease (paused, held) no reserve runs and Redis keeps them delayed
    if (m.inState("delayed").some((j) => j.due.hi < now)) return
    const e = m.eligible(1, now)
    if (e.total === 0) return
    // M1 (found by this model): the reserve that carries the RateLimited fail leases one more job
    if (AVOID.has("M1") && m.inState("waiting").length > 1) return
    const eligibleIds = [
      ...e.ungrouped.slice(0, 1),
      ...[...e.groups.values()].flatMap((g) => (g.room > 0 ? g.ids : [])),
    ]
    const took: string[] = []
    const worker = new Worker(
      r.name,
      (job) => {
        took.push(job.id)
        throw new RateLimited({ retryAfterMs: 3_600_000 })
      },
      { connection: this.url(), concurrency: 1, prefetch: 0, sweep: false },
    )
    try {
      const id = await until("the worker's handler ran", () => took[0], { timeoutMs: 5_000 }).catch(() => {
        throw new Mismatch(
          `the worker's first job: the model says one of ${JSON.stringify(eligibleIds)}, the queue leased none in 5 s`,
        )
      })
      await until("its RateLimited landed", async () => (await r.q.getJob(id))?.state === "waiting", {
        timeoutMs: 10_000,
      })
    } finally {
      await worker.close()
    }
    const id = took[0]!
    if (!eligibleIds.includes(id)) expectSame("the worker's job was eligible", eligibleIds, id)
    expectSame("the worker ran one job", 1, took.length)
    m.rateLimited(id)
  }
  toString(): string {
    return this.kind
  }
}

// ---- (c) operator's calls -------------------------------------------------------------------

const opOutcome = (o: State | { wrong: State | "unknown" }) =>
  typeof o === "string" ? o : { err: "WrongJobState", state: o.wrong }

export class Retry extends OnJob {
  readonly kind: string
  readonly lost: boolean
  constructor(pick: number, lost: boolean) {
    super(pick)
    this.lost = lost
    this.kind = lost ? "retry~lost" : "retry"
  }
  override check(m: Readonly<Model>): boolean {
    if (m.known.length === 0) return false
    const j = m.jobs.get(pickOf(m.known, this.pick)!)
    // G1: a cancelled grouped job, retried, runs outside its group
    return !(AVOID.has("G1") && j?.state === "cancelled" && j.group !== undefined)
  }
  async step(m: Model, r: Real): Promise<void> {
    const id = this.id(m)
    const real = seen(await call(r, this.lost, () => r.q.retry(id)))
    expectSame(`retry(${id})`, opOutcome(m.retry(id)), real)
    // a parent retried by hand runs again, whatever its children (an operator's call)
    const p = flowsOf(m)?.parents.get(id)
    if (p) p.retried = true
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

export class Promote extends OnJob {
  readonly kind: string
  readonly lost: boolean
  constructor(pick: number, lost: boolean) {
    super(pick)
    this.lost = lost
    this.kind = lost ? "promote~lost" : "promote"
  }
  async step(m: Model, r: Real): Promise<void> {
    const id = this.id(m)
    const real = seen(await call(r, this.lost, () => r.q.promote(id)))
    expectSame(`promote(${id})`, opOutcome(m.promote(id)), real)
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

export class Reschedule extends OnJob {
  readonly kind = "reschedule"
  readonly delay: "none" | "short" | "long"
  constructor(pick: number, delay: "none" | "short" | "long") {
    super(pick)
    this.delay = delay
  }
  async step(m: Model, r: Real): Promise<void> {
    const id = this.id(m)
    const d = this.delay === "none" ? 0 : ms(this.delay)
    const { value, span } = await timed(r, d, () => settle(r.q.reschedule(id, { delayMs: d })))
    expectSame(`reschedule(${id}, ${d})`, opOutcome(m.reschedule(id, d === 0 ? undefined : span)), seen(value))
  }
  toString(): string {
    return `${this.kind}(#${this.pick}, ${this.delay})`
  }
}

export class UpdatePayload extends OnJob {
  readonly kind = "updatePayload"
  async step(m: Model, r: Real): Promise<void> {
    const id = this.id(m)
    const real = seen(await settle(r.q.updatePayload(id, { n: 2 })))
    expectSame(`updatePayload(${id})`, opOutcome(m.updatePayload(id, { n: 2 })), real)
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

export class ChangePriority extends OnJob {
  readonly kind = "changePriority"
  readonly priority: number
  /** `{ lifo: true }`: to the front of the priority. */
  readonly lifo: boolean
  constructor(pick: number, priority: number, lifo = false) {
    super(pick)
    this.priority = priority
    this.lifo = lifo
  }
  async step(m: Model, r: Real): Promise<void> {
    const id = this.id(m)
    const was = m.state(id)
    const options = this.lifo ? { lifo: true } : undefined
    const real = seen(await settle(r.q.changePriority(id, this.priority, options)))
    const model = m.changePriority(id, this.priority, this.lifo)
    expectSame(
      `changePriority(${id}, ${this.priority}${this.lifo ? ", lifo" : ""})`,
      model === "ok" ? was : { err: "JobNotWaiting", state: model.notWaiting },
      real,
    )
  }
  toString(): string {
    return `${this.kind}(#${this.pick}, ${this.priority}${this.lifo ? ", lifo" : ""})`
  }
}

export class Release extends Base {
  readonly kind = "release"
  readonly pick: number
  constructor(pick: number) {
    super()
    this.pick = pick
  }
  override check(m: Readonly<Model>): boolean {
    return m.inState("active").length > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    const j = pickOf(activeJobs(m), this.pick)!
    const real = seen(await settle(r.q.release(j.id, j.token)))
    const model = m.release(j.id, j.token)
    expectSame(`release(${j.id})`, model === "ok" ? null : { err: model }, real)
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

export class Extend extends Base {
  readonly kind = "extend"
  readonly pick: number
  readonly lease: "short" | "long"
  constructor(pick: number, lease: "short" | "long") {
    super()
    this.pick = pick
    this.lease = lease
  }
  override check(m: Readonly<Model>): boolean {
    return m.inState("active").length > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    const j = pickOf(activeJobs(m), this.pick)!
    const { value, span } = await timed(r, ms(this.lease), () => settle(r.q.extend(j.id, j.token, ms(this.lease))))
    const model = m.extend(j.id, j.token, span)
    const real = "ok" in value ? null : seen(value)
    expectSame(`extend(${j.id})`, model === "ok" ? null : { err: model }, real)
  }
  toString(): string {
    return `${this.kind}(#${this.pick}, ${this.lease})`
  }
}

export class Clean extends Base {
  readonly kind = "clean"
  readonly state: "completed" | "cancelled" | "dead"
  constructor(state: "completed" | "cancelled" | "dead") {
    super()
    this.state = state
  }
  async step(m: Model, r: Real): Promise<void> {
    const real = await r.q.clean(this.state)
    expectSame(`clean(${this.state}).deleted`, m.clean(this.state), real.deleted)
  }
  toString(): string {
    return `${this.kind}(${this.state})`
  }
}

export class Drain extends Base {
  readonly kind = "drain"
  readonly delayed: boolean
  constructor(delayed: boolean) {
    super()
    this.delayed = delayed
  }
  async step(m: Model, r: Real): Promise<void> {
    const real = await r.q.drain({ delayed: this.delayed })
    const model = m.drain(this.delayed)
    expectSame(`drain(${this.delayed})`, [model.waiting, model.delayed], [real.waiting, real.delayed ?? 0])
  }
  toString(): string {
    return `${this.kind}(delayed ${this.delayed})`
  }
}

export class Obliterate extends Base {
  readonly kind = "obliterate"
  readonly force: boolean
  constructor(force: boolean) {
    super()
    this.force = force
  }
  async step(m: Model, r: Real): Promise<void> {
    const real = seen(await settle(r.q.obliterate({ force: this.force })))
    // its outbox is applied first (docs/flows.md), then the queue is gone
    if (this.force || m.inState("active").length === 0) flowsOf(m)?.obliterateMain()
    const model = m.obliterate(this.force)
    expectSame(`obliterate(force ${this.force})`, typeof model === "string" ? { err: model } : model, real)
  }
  toString(): string {
    return `${this.kind}(force ${this.force})`
  }
}

// ---- (d) retention, expiry and the sweep -------------------------------------------------------

export class SetRetention extends Base {
  readonly kind = "setRetention"
  readonly completed: number
  readonly cancelled: number
  constructor(completed: number, cancelled: number) {
    super()
    this.completed = completed
    this.cancelled = cancelled
  }
  override check(_m: Readonly<Model>): boolean {
    // G2: a custom id whose cancelled job was trimmed below a count of 1,000 is half free
    return !(AVOID.has("G2") && this.cancelled < 1000)
  }
  async step(m: Model, r: Real): Promise<void> {
    await r.q.setRetention({ completed: { count: this.completed }, cancelled: { count: this.cancelled } })
    m.setRetention(this.completed, this.cancelled)
  }
  toString(): string {
    return `${this.kind}(completed ${this.completed}, cancelled ${this.cancelled})`
  }
}

/** A sweep now; with `expire`, first wait (Redis clock) until every short due time and deadline passed: a vanished worker's lease runs out. */
export class Sweep extends Base {
  readonly kind: string
  readonly expire: boolean
  constructor(expire: boolean) {
    super()
    this.expire = expire
    this.kind = expire ? "expire" : "sweep"
  }
  async step(m: Model, r: Real): Promise<void> {
    if (this.expire) await passShortSpans(m, r)
    const now = await clearOfSpans(m, r)
    const real = await r.q.sweep()
    await checkQuick(m, r, now)
    expectSame("sweep().reclaimed", m.sweep(now).reclaimed, real.reclaimed)
    flowsOf(m)?.sweepMain()
  }
  toString(): string {
    return this.kind
  }
}

// ---- the generator -----------------------------------------------------------------------------

const pick = fc.nat({ max: 50 })
const lease = fc.constantFrom<"short" | "long">("short", "long", "long")
// mostly one group: the findings need one group's jobs to come and go
const group = fc.constantFrom<(typeof GROUPS)[number] | undefined>(undefined, undefined, "g1", "g1", "g2")

/** Every command kind with its arbitrary; `url` is the suite Redis's (for the Worker). */
const all = (url: () => string): Array<readonly [string, fc.Arbitrary<Cmd>]> => {
  const add = (lost: boolean) =>
    fc
      .record({
        id: fc.constantFrom<(typeof CUSTOM_IDS)[number] | undefined>(undefined, undefined, undefined, ...CUSTOM_IDS),
        priority: fc.constantFrom(0, 0, 0, 1, 5),
        lifo: fc.boolean(),
        group,
        delay: fc.constantFrom<"none" | "short" | "long">("none", "none", "none", "short", "long"),
        maxAttempts: fc.constantFrom(1, 2, 3),
        large: fc.constantFrom(false, false, false, true),
      })
      .map((o) => new Add(o, lost))
  const limits = fc.constantFrom<GroupLimits | null>(
    null,
    { concurrency: 1 },
    { concurrency: 2 },
    { max: 1 },
    { max: 3 },
    { concurrency: 1, max: 3 },
    { maxSize: 1 },
    { maxSize: 2 },
    { concurrency: 1, maxSize: 2 },
  )
  return [
    ["add", add(false)],
    ["reserve", fc.tuple(fc.integer({ min: 1, max: 4 }), lease).map(([n, l]) => new Reserve(n, l, false))],
    ["addG1", fc.integer({ min: 1, max: 3 }).map((n) => new AddG1(n))],
    ["complete", pick.map((p) => new Complete(p, false))],
    ["completeAll", fc.constant(new CompleteAll())],
    ["fail", fc.tuple(pick, fc.boolean(), lease).map(([p, retry, d]) => new Fail(p, retry, d, false))],
    ["cancel", pick.map((p) => new Cancel(p, false))],
    [
      "setGroupLimits",
      fc
        .tuple(fc.option(fc.constantFrom(...GROUPS), { nil: undefined }), limits)
        .map(([g, l]) => new SetGroupLimits(g, l)),
    ],
    ["pauseGroup", fc.constantFrom(...GROUPS).map((g) => new PauseGroup(g, true, false))],
    ["resumeGroup", fc.constantFrom(...GROUPS).map((g) => new PauseGroup(g, false, false))],
    ["pause", fc.constant(new Pause(true))],
    ["resume", fc.constant(new Pause(false))],
    ["setConcurrency", fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }).map((n) => new SetConcurrency(n))],
    ["setRateLimit", fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }).map((n) => new SetRateLimit(n))],
    ["workerRateLimited", fc.constant(new WorkerRateLimited(url))],
    ["retry", pick.map((p) => new Retry(p, false))],
    ["promote", pick.map((p) => new Promote(p, false))],
    [
      "reschedule",
      fc
        .tuple(pick, fc.constantFrom<"none" | "short" | "long">("none", "short", "long"))
        .map(([p, d]) => new Reschedule(p, d)),
    ],
    ["updatePayload", pick.map((p) => new UpdatePayload(p))],
    ["changePriority", fc.tuple(pick, fc.constantFrom(0, 1, 5)).map(([p, n]) => new ChangePriority(p, n))],
    ["changePriorityLifo", fc.tuple(pick, fc.constantFrom(0, 1, 5)).map(([p, n]) => new ChangePriority(p, n, true))],
    ["release", pick.map((p) => new Release(p))],
    ["extend", fc.tuple(pick, lease).map(([p, l]) => new Extend(p, l))],
    [
      "clean",
      fc.constantFrom<"completed" | "cancelled" | "dead">("completed", "cancelled", "dead").map((s) => new Clean(s)),
    ],
    ["drain", fc.boolean().map((d) => new Drain(d))],
    ["obliterate", fc.boolean().map((f) => new Obliterate(f))],
    [
      "setRetention",
      fc.tuple(fc.constantFrom(0, 1, 1000), fc.constantFrom(0, 1, 1000)).map(([a, b]) => new SetRetention(a, b)),
    ],
    ["sweep", fc.constant(new Sweep(false))],
    ["expire", fc.constant(new Sweep(true))],
    ["add~lost", add(true)],
    ["reserve~lost", fc.tuple(fc.integer({ min: 1, max: 4 }), lease).map(([n, l]) => new Reserve(n, l, true))],
    ["complete~lost", pick.map((p) => new Complete(p, true))],
    ["fail~lost", fc.tuple(pick, fc.boolean(), lease).map(([p, retry, d]) => new Fail(p, retry, d, true))],
    ["cancel~lost", pick.map((p) => new Cancel(p, true))],
    ["retry~lost", pick.map((p) => new Retry(p, true))],
    ["promote~lost", pick.map((p) => new Promote(p, true))],
    ["pauseGroup~lost", fc.constantFrom(...GROUPS).map((g) => new PauseGroup(g, true, true))],
    ...flowKinds(),
  ]
}

/** Every kind's name, in the generator's order. */
export const KINDS: ReadonlyArray<string> = all(() => "").map(([k]) => k)

/**
 * The arbitraries of the kinds to run: `only` (MODEL_COMMANDS) if given, else every kind,
 * less `skip` (MODEL_SKIP). An unknown name is refused, so a typo does not silently test less.
 */
export const commandArbitraries = (
  url: () => string,
  only: ReadonlyArray<string> | undefined,
  skip: ReadonlyArray<string>,
): Array<fc.Arbitrary<Cmd>> => {
  for (const k of [...(only ?? []), ...skip])
    if (!KINDS.includes(k))
      throw new Error(`MODEL_COMMANDS/MODEL_SKIP: unknown command "${k}"; known: ${KINDS.join(", ")}`)
  const add = all(url).filter(([k]) => (only === undefined || only.includes(k)) && !skip.includes(k))
  // adds, reserves and completes more often, so the jobs the other calls act on exist and come and go
  return add.flatMap(([k, a]) =>
    k === "add" || k === "addG1" || k === "reserve" ? [a, a, a] : k === "complete" ? [a, a] : [a],
  )
}

export type { Span }
