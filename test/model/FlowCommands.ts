/**
 * The flows' commands of the model test (docs/flows.md): trees over the main and a side
 * queue (`addFlow`), dependencies on jobs that exist (`add(p, { dependsOn })`: completed,
 * missing, dead, cancelled ones), open parents given children and sealed, a parent cancelled
 * keeping its children, children in the side queue run to completion or death (their reply
 * lost and the call re-sent too; once a side complete's answer carried a note for main, main is
 * the side's fan-in peer and later side completions release their parents in their own script),
 * the side queue's sweep, and a settle (both sweeps until
 * every note was applied). Each runs on the model (test/model/Flows.ts) and on the real
 * queues; the harness compares everything, each parent's dependencies included, after it.
 */
import fc from "fast-check"
import type { FlowIds, FlowJob } from "../../src/index.ts"
import type { Policy, Where } from "./Flows.ts"
import type { Model } from "./Model.ts"
import {
  clearOfSpans,
  compare,
  expectSame,
  flowsFor,
  flowsOf,
  type Outcome,
  type Real,
  settle,
  sideName,
  timed,
  withLostReply,
} from "./Real.ts"

const LONG = 600_000
const POLICIES: ReadonlyArray<Policy> = ["wait", "fail", "ignore", "remove"]

const call = <A>(r: Real, lost: boolean, f: () => Promise<A>): Promise<Outcome<A>> =>
  lost ? withLostReply(r, f) : settle(f())

/** A refusal as the model compares it: InvalidOptions and its field; anything else is thrown. */
const refusal = <A>(o: Outcome<A>): { err: string; field: string | undefined } | undefined => {
  if ("ok" in o) return undefined
  if (o.err === "InvalidOptions") return { err: o.err, field: (o.error as { field?: string }).field }
  throw o.error
}

abstract class FlowBase implements fc.AsyncCommand<Model, Real> {
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

/** Whether a group of the main queue has a maxSize (a flow's grouped node could be refused: kept clear of). */
const anyMaxSize = (m: Readonly<Model>) =>
  m.groupDefault?.maxSize !== undefined || [...m.groupOwn.values()].some((l) => l.maxSize !== undefined)

export interface ChildSpec {
  readonly where: Where
  /** A custom id (main only; may name a job that exists: it is linked). */
  readonly id: "c1" | "c2" | undefined
  readonly policy: Policy | undefined
  readonly maxAttempts: number
  readonly priority: number
  readonly group: "g1" | "g2" | undefined
  readonly delay: "none" | "long"
  /** Grandchildren (main, plain): this child is a parent too, with `policy` as its own onChildFailure. */
  readonly grand: number
}

export interface RootSpec {
  readonly priority: number
  readonly group: "g1" | "g2" | undefined
  readonly delay: "none" | "long"
  readonly policy: Policy
}

const optionsOf = (c: {
  priority: number
  group: string | undefined
  delay: "none" | "long"
  maxAttempts?: number
  id?: string | undefined
}) => ({
  ...(c.id === undefined ? {} : { id: c.id }),
  ...(c.priority === 0 ? {} : { priority: c.priority }),
  ...(c.group === undefined ? {} : { group: c.group }),
  ...(c.delay === "none" ? {} : { delayMs: LONG }),
  ...(c.maxAttempts === undefined ? {} : { maxAttempts: c.maxAttempts }),
})

/** The model's side of new children of `parent` (level order, as the real writes them): the ids given back. */
const addChildrenToModel = (
  m: Model,
  parent: string,
  parentPolicy: Policy,
  specs: ReadonlyArray<ChildSpec>,
  ids: ReadonlyArray<{ id: string; children: ReadonlyArray<{ id: string }> }>,
  span: { lo: number; hi: number },
) => {
  const f = flowsFor(m)
  const grand: Array<{ parent: string; policy: Policy; id: string }> = []
  specs.forEach((c, i) => {
    const id = ids[i]!.id
    const model = f.model(c.where)
    const policy = c.policy ?? parentPolicy
    if (c.id !== undefined && model.jobs.has(id)) {
      f.linkExisting(parent, c.where, id, policy)
      return
    }
    model.add(id, {
      priority: c.priority,
      lifo: false,
      group: c.group,
      delay: c.delay === "none" ? undefined : span,
      maxAttempts: c.maxAttempts,
      hold: c.grand > 0,
    })
    // a parent is open while its flow is written, sealed at the end (FlowWrite.ts)
    if (c.grand > 0) f.hold(id, true)
    f.link(parent, c.where, id, policy)
    // its own onChildFailure, for its children: as given, else the default
    for (const g of ids[i]!.children) grand.push({ parent: id, policy: c.policy ?? "wait", id: g.id })
  })
  for (const g of grand) {
    m.add(g.id, { priority: 0, lifo: false, group: undefined, delay: undefined, maxAttempts: 1 })
    f.link(g.parent, "main", g.id, g.policy)
  }
  for (const g of new Set(grand.map((x) => x.parent))) f.seal(g)
}

const childJob = (c: ChildSpec, r: Real): FlowJob => ({
  ...(c.where === "side" ? { queue: sideName(r.name) } : {}),
  payload: { child: 1 },
  options: optionsOf(c),
  ...(c.policy === undefined ? {} : { onFailure: c.policy }),
  ...(c.grand > 0
    ? {
        onChildFailure: c.policy ?? "wait",
        children: Array.from({ length: c.grand }, () => ({ payload: { grand: 1 }, options: { maxAttempts: 1 } })),
      }
    : {}),
})

export class AddFlow extends FlowBase {
  readonly kind: string
  readonly root: RootSpec
  readonly children: ReadonlyArray<ChildSpec>
  readonly lost: boolean
  constructor(root: RootSpec, children: ReadonlyArray<ChildSpec>, lost: boolean) {
    super()
    this.root = root
    this.children = children
    this.lost = lost
    this.kind = lost ? "addFlow~lost" : "addFlow"
  }
  override check(m: Readonly<Model>): boolean {
    const grouped = this.root.group !== undefined || this.children.some((c) => c.group !== undefined)
    return !(grouped && anyMaxSize(m))
  }
  async step(m: Model, r: Real): Promise<void> {
    const flow: FlowJob = {
      payload: { root: 1 },
      options: optionsOf({ ...this.root, maxAttempts: 1 }),
      onChildFailure: this.root.policy,
      children: this.children.map((c) => childJob(c, r)),
    }
    const { value, span } = await timed(r, LONG, () => call(r, this.lost, () => r.q.addFlow(flow)))
    const bad = refusal(value)
    if (bad) expectSame("addFlow", "the tree's ids", bad)
    const ids = (value as { ok: FlowIds }).ok
    const f = flowsFor(m)
    m.add(ids.id, {
      priority: this.root.priority,
      lifo: false,
      group: this.root.group,
      delay: this.root.delay === "none" ? undefined : span,
      maxAttempts: 1,
      hold: true,
    })
    f.hold(ids.id, true)
    addChildrenToModel(m, ids.id, this.root.policy, this.children, ids.children, span)
    f.seal(ids.id)
  }
  toString(): string {
    return `${this.kind}(${JSON.stringify(this.root)}, ${JSON.stringify(this.children)})`
  }
}

/** A job picked among the known ones of the main or side queue. */
type Pick = { readonly where: Where; readonly pick: number }

const pickKnown = (m: Model, p: Pick): { where: Where; id: string } | undefined => {
  const model = p.where === "main" ? m : flowsOf(m)?.side
  const known = model?.known ?? []
  return known.length === 0 ? undefined : { where: p.where, id: known[p.pick % known.length]! }
}

/** `add(p, { dependsOn })` on jobs that exist or existed (main and side): a missing one is refused, nothing written. */
export class AddDependsOn extends FlowBase {
  readonly kind = "addDependsOn"
  readonly picks: ReadonlyArray<Pick>
  readonly policy: Policy
  constructor(picks: ReadonlyArray<Pick>, policy: Policy) {
    super()
    this.picks = picks
    this.policy = policy
  }
  override check(m: Readonly<Model>): boolean {
    return this.picks.some((p) => pickKnown(m as Model, p) !== undefined)
  }
  async step(m: Model, r: Real): Promise<void> {
    const targets: Array<{ where: Where; id: string }> = []
    for (const p of this.picks) {
      const t = pickKnown(m, p)
      if (t && !targets.some((x) => x.where === t.where && x.id === t.id)) targets.push(t)
    }
    const f = flowsFor(m)
    const dependsOn = targets.map((t) => (t.where === "main" ? t.id : { queue: sideName(r.name), id: t.id }))
    const value = await settle(r.q.add({ n: 1 }, { dependsOn, onChildFailure: this.policy, maxAttempts: 1 }))
    const missing = targets.findIndex((t) => !f.model(t.where).jobs.has(t.id))
    const bad = refusal(value)
    if (missing >= 0 || bad) {
      expectSame(
        `add(dependsOn ${JSON.stringify(dependsOn)})`,
        missing >= 0 ? { err: "InvalidOptions", field: `dependsOn[${missing}]` } : "the new id",
        bad ?? "the new id",
      )
      return
    }
    const id = (value as { ok: string }).ok
    m.add(id, { priority: 0, lifo: false, group: undefined, delay: undefined, maxAttempts: 1, hold: true })
    f.hold(id, true)
    for (const t of targets) f.linkExisting(id, t.where, t.id, this.policy)
    f.seal(id)
  }
  toString(): string {
    return `${this.kind}(${JSON.stringify(this.picks)}, ${this.policy})`
  }
}

/** `add(p, { open: true })`: a parent that takes children until sealed. */
export class OpenParent extends FlowBase {
  readonly kind = "openParent"
  readonly policy: Policy
  constructor(policy: Policy) {
    super()
    this.policy = policy
  }
  async step(m: Model, r: Real): Promise<void> {
    const id = await r.q.add({ n: 1 }, { open: true, onChildFailure: this.policy, maxAttempts: 1 })
    m.add(id, { priority: 0, lifo: false, group: undefined, delay: undefined, maxAttempts: 1, hold: true })
    flowsFor(m).hold(id, true)
  }
  toString(): string {
    return `${this.kind}(${this.policy})`
  }
}

/** A parent of the model's flows picked by `pick` (in the order they were made). */
const pickParent = (m: Model, pick: number): string | undefined => {
  const ps = [...(flowsOf(m)?.parents.keys() ?? [])]
  return ps.length === 0 ? undefined : ps[pick % ps.length]
}

/** `addChildren(parent, children, { seal })` on a parent (open, sealed, or not waiting: refused, nothing written). */
export class AddChildren extends FlowBase {
  readonly kind = "addChildren"
  readonly pick: number
  readonly children: ReadonlyArray<Where>
  readonly seal: boolean
  readonly policy: Policy | undefined
  constructor(pick: number, children: ReadonlyArray<Where>, seal: boolean, policy: Policy | undefined) {
    super()
    this.pick = pick
    this.children = children
    this.seal = seal
    this.policy = policy
  }
  override check(m: Readonly<Model>): boolean {
    return pickParent(m as Model, this.pick) !== undefined
  }
  async step(m: Model, r: Real): Promise<void> {
    const pid = pickParent(m, this.pick)!
    const f = flowsFor(m)
    const taking = f.taking(pid)
    const specs: ChildSpec[] = this.children.map((where) => ({
      where,
      id: undefined,
      policy: undefined,
      maxAttempts: 1,
      priority: 0,
      group: undefined,
      delay: "none",
      grand: 0,
    }))
    const value = await settle(
      r.q.addChildren(
        pid,
        specs.map((c) => childJob(c, r)),
        { seal: this.seal, ...(this.policy === undefined ? {} : { onChildFailure: this.policy }) },
      ),
    )
    const bad = refusal(value)
    if (taking !== "ok" || bad) {
      expectSame(
        `addChildren(${pid}) (${taking})`,
        taking === "ok" ? "the children's ids" : { err: "InvalidOptions", field: "parentId" },
        bad ?? "the children's ids",
      )
      return
    }
    const ids = (value as { ok: ReadonlyArray<{ id: string; children: ReadonlyArray<{ id: string }> }> }).ok
    addChildrenToModel(m, pid, this.policy ?? "wait", specs, ids, { lo: 0, hi: 0 })
    if (this.seal) f.seal(pid)
  }
  toString(): string {
    return `${this.kind}(#${this.pick}, ${JSON.stringify(this.children)}, seal ${this.seal}, ${this.policy ?? "-"})`
  }
}

/** `seal(parent)`: idempotent on a sealed parent; refused on one not waiting for children. */
export class Seal extends FlowBase {
  readonly kind = "seal"
  readonly pick: number
  constructor(pick: number) {
    super()
    this.pick = pick
  }
  override check(m: Readonly<Model>): boolean {
    return pickParent(m as Model, this.pick) !== undefined
  }
  async step(m: Model, r: Real): Promise<void> {
    const pid = pickParent(m, this.pick)!
    const f = flowsFor(m)
    const waiting = f.taking(pid) !== "NOT_WAITING"
    const bad = refusal(await settle(r.q.seal(pid)))
    expectSame(`seal(${pid})`, waiting ? null : { err: "InvalidOptions", field: "parentId" }, bad ?? null)
    if (waiting) f.seal(pid)
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

/** `cancel(parent, { children: "keep" })`: the parent cancelled, its children left to run. */
export class CancelKeep extends FlowBase {
  readonly kind = "cancelKeep"
  readonly pick: number
  constructor(pick: number) {
    super()
    this.pick = pick
  }
  override check(m: Readonly<Model>): boolean {
    return pickParent(m as Model, this.pick) !== undefined
  }
  async step(m: Model, r: Real): Promise<void> {
    const pid = pickParent(m, this.pick)!
    const real = await r.q.cancel(pid, { children: "keep" })
    expectSame(`cancel(${pid}, keep)`, m.cancel(pid, false) ?? null, real ?? null)
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

/** A worker of the side queue by hand: the oldest waiting child leased and completed, or failed to dead. */
export class SideRun extends FlowBase {
  readonly kind: string
  readonly outcome: "complete" | "dead"
  readonly lost: boolean
  constructor(outcome: "complete" | "dead", lost: boolean) {
    super()
    this.outcome = outcome
    this.lost = lost
    this.kind = `side${outcome === "complete" ? "Complete" : "Dead"}${lost ? "~lost" : ""}`
  }
  override check(m: Readonly<Model>): boolean {
    return (flowsOf(m as Model)?.side.inState("waiting").length ?? 0) > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    const side = flowsFor(m).side
    const e = side.eligible(1, await r.now())
    const { value: jobs, span } = await timed(r, LONG, () => r.side.reserve({ count: 1, leaseMs: LONG }))
    expectSame(
      "side reserve(1)",
      e.ungrouped.slice(0, 1),
      jobs.map((j) => j.id),
    )
    const j = jobs[0]!
    side.leased([{ id: j.id, token: j.token }], span)
    const done =
      this.outcome === "complete"
        ? await call(r, this.lost, () => r.side.complete(j.id, j.token, { side: 1 }))
        : await call(r, this.lost, () => r.side.fail(j.id, j.token, new Error("side"), { retry: false }))
    const model = this.outcome === "complete" ? side.complete(j.id, j.token) : side.fail(j.id, j.token, false, span)
    // the fan-in peer is learnt from a complete's answer only (calls/FanIn.ts)
    flowsFor(m).answered(this.outcome === "complete" && !this.lost)
    // docs/jobs.md: an ack whose reply was lost may reject with LeaseLost although it landed
    if ("err" in done && !(this.lost && done.err === "LeaseLost")) throw done.error
    if ("ok" in done && this.outcome === "dead") expectSame(`side fail(${j.id})`, model, done.ok)
  }
  toString(): string {
    return this.kind
  }
}

/** `retry` of a side job (a dead child retried by hand: its completion then counts under "wait"). */
export class SideRetry extends FlowBase {
  readonly kind = "sideRetry"
  readonly pick: number
  constructor(pick: number) {
    super()
    this.pick = pick
  }
  override check(m: Readonly<Model>): boolean {
    return (flowsOf(m as Model)?.side.known.length ?? 0) > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    const t = pickKnown(m, { where: "side", pick: this.pick })!
    const real = await settle(r.side.retry(t.id))
    const model = flowsFor(m).side.retry(t.id)
    const seenReal =
      "ok" in real ? real.ok : { err: real.err, state: (real.error as { state?: string }).state ?? "unknown" }
    expectSame(
      `side retry(${t.id})`,
      typeof model === "string" ? model : { err: "WrongJobState", state: model.wrong },
      seenReal,
    )
  }
  toString(): string {
    return `${this.kind}(#${this.pick})`
  }
}

/** `obliterate` of the side queue (a child's queue gone): each parent told its children there are removed. */
export class SideObliterate extends FlowBase {
  readonly kind = "sideObliterate"
  override check(m: Readonly<Model>): boolean {
    return (flowsOf(m as Model)?.side.known.length ?? 0) > 0
  }
  async step(m: Model, r: Real): Promise<void> {
    const f = flowsFor(m)
    const real = await r.side.obliterate({ force: true })
    f.obliterateSide()
    expectSame("side obliterate", f.side.obliterate(true), { active: real.active })
  }
  toString(): string {
    return this.kind
  }
}

/** The side queue's sweep: its outbox (children's ends) applied to the parents in main, its cascade's cancels. */
export class SideSweep extends FlowBase {
  readonly kind = "sideSweep"
  override check(m: Readonly<Model>): boolean {
    return flowsOf(m as Model)?.used === true
  }
  async step(m: Model, r: Real): Promise<void> {
    const f = flowsFor(m)
    await r.side.sweep()
    f.side.sweep(await r.now())
    f.sweepSide()
  }
  toString(): string {
    return this.kind
  }
}

/** Both queues' sweeps, three rounds: every note applied, so no sealed parent with nothing pending may wait (the invariant). */
export class Settle extends FlowBase {
  readonly kind = "settle"
  override check(m: Readonly<Model>): boolean {
    return flowsOf(m as Model)?.used === true
  }
  async step(m: Model, r: Real): Promise<void> {
    const f = flowsFor(m)
    for (let i = 0; i < 3; i++) {
      await r.side.sweep()
      f.side.sweep(await r.now())
      f.sweepSide()
      const now = await clearOfSpans(m, r)
      const real = await r.q.sweep()
      expectSame("sweep().reclaimed (settle)", m.sweep(now).reclaimed, real.reclaimed)
      f.sweepMain()
    }
    const left = f.outbox.main.length + f.outbox.side.length + f.cascade.length + f.sideCancel.length
    expectSame("the model's notes left after a settle", 0, left)
  }
  toString(): string {
    return this.kind
  }
}

// ---- the generator ---------------------------------------------------------------------------

const policy = fc.constantFrom<Policy>(...POLICIES)
const priority = fc.constantFrom(0, 0, 1, 5)
const group = fc.constantFrom<"g1" | "g2" | undefined>(undefined, undefined, "g1", "g2")
const child = fc
  .record({
    where: fc.constantFrom<Where>("main", "main", "side"),
    id: fc.constantFrom<"c1" | "c2" | undefined>(undefined, undefined, undefined, "c1", "c2"),
    policy: fc.option(policy, { nil: undefined }),
    maxAttempts: fc.constantFrom(1, 1, 2),
    priority,
    group,
    delay: fc.constantFrom<"none" | "long">("none", "none", "none", "long"),
    grand: fc.constantFrom(0, 0, 0, 1, 2),
  })
  // the side queue's children are plain (its worker is a FIFO by hand); a custom id or grandchildren only in main
  .map(
    (c): ChildSpec =>
      c.where === "side"
        ? { ...c, id: undefined, maxAttempts: 1, priority: 0, group: undefined, delay: "none", grand: 0 }
        : c.id !== undefined
          ? { ...c, grand: 0 }
          : c,
  )
const children = fc
  .array(child, { minLength: 1, maxLength: 3 })
  .map((cs) => cs.filter((c, i) => c.id === undefined || cs.findIndex((d) => d.id === c.id) === i))
const root = fc.record({
  priority,
  group,
  delay: fc.constantFrom<"none" | "long">("none", "none", "none", "long"),
  policy,
})
const pickOf = fc.record({ where: fc.constantFrom<Where>("main", "main", "side"), pick: fc.nat({ max: 50 }) })

/** The flows' command kinds with their arbitraries. */
export const flowKinds = (): Array<readonly [string, fc.Arbitrary<fc.AsyncCommand<Model, Real>>]> => [
  ["addFlow", fc.tuple(root, children).map(([r, cs]) => new AddFlow(r, cs, false))],
  ["addFlow~lost", fc.tuple(root, children).map(([r, cs]) => new AddFlow(r, cs, true))],
  [
    "addDependsOn",
    fc.tuple(fc.array(pickOf, { minLength: 1, maxLength: 3 }), policy).map(([ps, p]) => new AddDependsOn(ps, p)),
  ],
  ["openParent", policy.map((p) => new OpenParent(p))],
  [
    "addChildren",
    fc
      .tuple(
        fc.nat({ max: 50 }),
        fc.array(fc.constantFrom<Where>("main", "main", "side"), { minLength: 1, maxLength: 2 }),
        fc.boolean(),
        fc.option(policy, { nil: undefined }),
      )
      .map(([p, cs, s, pol]) => new AddChildren(p, cs, s, pol)),
  ],
  ["seal", fc.nat({ max: 50 }).map((p) => new Seal(p))],
  ["cancelKeep", fc.nat({ max: 50 }).map((p) => new CancelKeep(p))],
  ["sideComplete", fc.constant(new SideRun("complete", false))],
  ["sideDead", fc.constant(new SideRun("dead", false))],
  ["sideComplete~lost", fc.constant(new SideRun("complete", true))],
  ["sideRetry", fc.nat({ max: 50 }).map((p) => new SideRetry(p))],
  ["sideSweep", fc.constant(new SideSweep())],
  ["sideObliterate", fc.constant(new SideObliterate())],
  ["settle", fc.constant(new Settle())],
]
