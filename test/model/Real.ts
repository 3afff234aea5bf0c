/**
 * The real side of the model test: a fresh queue per command list, its connection through the
 * suite's TCP proxy (so a command can have its reply lost and re-sent), a raw client for the
 * Redis clock, and the comparison of everything observable with the model after each step.
 */
import fc from "fast-check"
import type { Redis } from "ioredis"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import type { TcpProxy } from "../support/proxy.ts"
import { redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { FlowModel, type FlowParent, type Where } from "./Flows.ts"
import { Model, type Span, STATES } from "./Model.ts"

/** How far ahead of a time-dependent call no due time or deadline may lie (else the harness waits it out). */
export const MARGIN_MS = 150

export interface Real {
  readonly q: Queue<unknown>
  /** The side queue of the flows (children in another queue), through the same proxy. */
  readonly side: Queue<unknown>
  readonly name: string
  readonly raw: Redis
  readonly proxy: TcpProxy
  /** The Redis clock, ms. */
  readonly now: () => Promise<number>
  /** Steps run (for the figures). */
  steps: number
}

export const openReal = (name: string, raw: Redis, proxy: TcpProxy): Real => ({
  q: new Queue<unknown>(name, { connection: proxy.url }),
  side: new Queue<unknown>(sideName(name), { connection: proxy.url }),
  name,
  raw,
  proxy,
  now: () => redisNow(raw),
  steps: 0,
})

/** The name of the side queue of the queue `name`. */
export const sideName = (name: string): string => `${name}-s`

/** A model/real disagreement: the message names the step, what the model said and what Redis said. */
export class Mismatch extends Error {
  override readonly name = "Mismatch"
}

export const expectSame = (what: string, model: unknown, real: unknown): void => {
  const m = JSON.stringify(model)
  const r = JSON.stringify(real)
  if (m !== r) throw new Mismatch(`${what}: the model says ${m}, the queue says ${r}`)
}

/**
 * Wait (on the Redis clock) until no due time or deadline lies within MARGIN_MS of now, then
 * answer now: a time-dependent call made right after it sees every span either passed or ahead.
 */
export const clearOfSpans = async (m: Model, r: Real): Promise<number> => {
  while (true) {
    const now = await r.now()
    const near = m.spans().filter((s) => s.lo - MARGIN_MS <= now && now <= s.hi)
    if (near.length === 0) return now
    const until_ = Math.max(...near.map((s) => s.hi)) + 1
    await until("the Redis clock passes a due time or deadline", async () => (await r.now()) > until_, {
      everyMs: 10,
      timeoutMs: 5_000,
    })
  }
}

/**
 * After a time-dependent call that started at `start`: no due time or deadline of the model may
 * have come within the call (the call took longer than MARGIN_MS on a busy machine: the test
 * cannot tell what the call saw, so the list is skipped: `fc.pre`).
 */
export const checkQuick = async (m: Model, r: Real, start: number): Promise<void> => {
  const end = await r.now()
  const crossed = m.spans().filter((s) => s.hi >= start && s.lo <= end)
  // a busy machine, not a finding: fast-check counts the list as skipped, not failed
  fc.pre(crossed.length === 0)
}

/** A span of `ms` from now, measured around `call` (two reads of the Redis clock). */
export const timed = async <A>(r: Real, ms: number, call: () => Promise<A>): Promise<{ value: A; span: Span }> => {
  const lo = await r.now()
  const value = await call()
  const hi = await r.now()
  return { value, span: { lo: lo + ms - 1, hi: hi + ms + 1 } }
}

/** What a call resolved to, or the name of what it rejected with. */
export type Outcome<A> = { readonly ok: A } | { readonly err: string; readonly error: unknown }

export const settle = async <A>(p: Promise<A>): Promise<Outcome<A>> => {
  try {
    return { ok: await p }
  } catch (error) {
    return { err: (error as { _tag?: string; name?: string })._tag ?? (error as Error).name, error }
  }
}

/**
 * Run `call` with its reply lost: the proxy swallows replies until Redis answered it, then cuts
 * the connection; ioredis reconnects and re-sends the unanswered call, whose answer the caller gets.
 */
export const withLostReply = async <A>(r: Real, call: () => Promise<A>): Promise<Outcome<A>> => {
  const before = r.proxy.droppedReplies
  r.proxy.dropReplies()
  const p = settle(call())
  await until("the call reached Redis (its reply swallowed)", () => r.proxy.droppedReplies > before, {
    everyMs: 5,
    timeoutMs: 10_000,
  })
  r.proxy.cut()
  r.proxy.heal()
  return p
}

/** Compare everything observable with the model: each job's state, stats, groups, a page per state, verify; the flows. */
export const compare = async (m: Model, r: Real): Promise<void> => {
  r.steps++
  await compareQueue(m, r.q, "")
  const f = flowsOf(m)
  if (f?.used) {
    await compareQueue(f.side, r.side, "side ")
    await compareFlows(f, r)
  }
}

/** The flows' model of a main queue's model (made on first use). */
const flowModels = new WeakMap<Model, FlowModel>()
export const flowsOf = (m: Model): FlowModel | undefined => flowModels.get(m)
export const flowsFor = (m: Model): FlowModel => {
  const known = flowModels.get(m)
  if (known) return known
  const f = new FlowModel(m, new Model())
  flowModels.set(m, f)
  return f
}

/** The order children are compared in (a page lists them by the text of their edge). */
const byChild = (a: { queue: string; id: string }, b: { queue: string; id: string }) =>
  a.queue === b.queue ? (a.id < b.id ? -1 : 1) : a.queue < b.queue ? -1 : 1

/** One parent: its dependencies page, and its error when a child failed it. */
const compareParent = async (f: FlowModel, r: Real, pid: string, p: FlowParent): Promise<void> => {
  const queueOf = (w: Where) => (w === "main" ? r.name : sideName(r.name))
  const job = f.main.jobs.get(pid)
  if (job === undefined) return
  const waiting = job.state === "waiting-children"
  const children = p.edges
    .filter((e) => e.policy !== "remove" || e.outcome === undefined || e.outcome === "completed")
    .map((e) => ({
      queue: queueOf(e.queue),
      id: e.id,
      policy: e.policy,
      state: e.outcome ?? "pending",
      // a child of the parent's queue: its result while retained, else the one kept on its edge;
      // a side child: the one kept on its edge (its completion released the parent, or its note did)
      value:
        e.queue === "main"
          ? e.kept || f.main.state(e.id) === "completed"
            ? { ok: 1 }
            : null
          : e.kept
            ? { side: 1 }
            : null,
    }))
    .sort(byChild)
  const page = await r.q.getDependencies(pid, { count: 1000 })
  expectSame(
    `getDependencies(${pid})`,
    { pending: waiting ? f.pending(pid) : 0, open: waiting && p.open, waiting, children },
    {
      pending: page.pending,
      open: page.open,
      waiting: page.waiting,
      children: page.children
        .map((c) => ({
          queue: c.queue,
          id: c.id,
          policy: c.policy,
          state: c.state,
          value: c.value ?? null,
        }))
        .sort(byChild),
    },
  )
  if (job.state === "dead" && p.failedBy !== undefined) {
    const e = (await r.q.getJob(pid))?.error as { reason?: string; child?: { id?: string; outcome?: string } }
    const among = p.failedAmong?.includes(e?.child?.id ?? "") === true
    expectSame(
      `getJob(${pid}).error (failed by a child)`,
      { reason: "child-failed", child: among ? e?.child?.id : p.failedBy.id, outcome: p.failedBy.outcome },
      { reason: e?.reason, child: e?.child?.id, outcome: e?.child?.outcome },
    )
  }
}

/** Each parent's dependencies, its error when a child failed it, and the flows' invariants. */
const compareFlows = async (f: FlowModel, r: Real): Promise<void> => {
  const bad = f.invariants()
  if (bad.length > 0) throw new Mismatch(`the flows' invariants: ${bad.join("; ")}`)
  // each parent released once at most: its dependencies-done events, as many as the model's releases
  const done = new Map<string, number>()
  for (const [, fields] of await r.raw.xrange(queueKeys(r.name).events, "-", "+")) {
    if (fields[1] === "dependencies-done") done.set(fields[3]!, (done.get(fields[3]!) ?? 0) + 1)
  }
  const released = [...f.parents].filter(([, p]) => p.released > 0).map(([id, p]) => [id, p.released])
  expectSame(
    "dependencies-done events per parent",
    released,
    [...f.parents.keys()].filter((id) => done.has(id)).map((id) => [id, done.get(id)]),
  )
  for (const [pid, p] of f.parents) await compareParent(f, r, pid, p)
}

const compareQueue = async (m: Model, q: Queue<unknown>, what: string): Promise<void> => {
  for (const id of m.known)
    expectSame(`${what}getJob(${id}).state`, m.state(id) ?? null, (await q.getJob(id))?.state ?? null)
  const s = await q.stats()
  const count = (st: (typeof STATES)[number]) => m.inState(st).length
  expectSame(
    `${what}stats() waiting/active/delayed/dead/retained/paused/waitingChildren`,
    [
      count("waiting"),
      count("active"),
      count("delayed"),
      count("dead"),
      count("completed"),
      m.paused,
      count("waiting-children"),
    ],
    [s.waiting, s.active, s.delayed, s.dead, s.retained, s.paused, s.waitingChildren],
  )
  for (const state of STATES) {
    const page = await q.getJobs(state, { count: 1000 })
    const ids = (xs: ReadonlyArray<string>) => [...xs].sort()
    expectSame(
      `${what}getJobs("${state}") ids`,
      ids(m.inState(state).map((j) => j.id)),
      ids(page.jobs.map((j) => j.id)),
    )
  }
  const groups = (await q.groups({ count: 1000 })).groups
    .filter((g) => g.waiting > 0 || g.active > 0 || g.paused)
    .map((g) => [g.group, g.waiting, g.active, g.paused])
  const expected = [...m.groupCounts()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([g, c]) => [g, c.waiting, c.active, c.paused])
  expectSame(`${what}groups() waiting/active/paused`, expected, groups)
  const v = await q.verify()
  expectSame(`${what}verify() violations`, [], v.lines)
}

let warm = false

/**
 * Load the scripts a lost-reply step calls, once per process, by calling each on a scratch
 * queue: a first call's swallowed reply may be NOSCRIPT (the call did nothing), which would
 * make a replayed list pass on a fresh Redis that failed in the run that found it.
 */
const warmUp = async (name: string): Promise<void> => {
  if (warm) return
  const q = new Queue<unknown>(`${name}-warm`, { connection: redisUrl() })
  try {
    await q.add({ n: 1 })
    await q.add({ n: 2 })
    const later = await q.add({ n: 3 }, { delayMs: 600_000 })
    const [ja, jb] = await q.reserve({ count: 2 })
    await q.complete(ja!.id, ja!.token)
    await q.fail(jb!.id, jb!.token, new Error("warm"), { retry: false })
    await q.promote(later)
    await q.cancel(later)
    await q.retry(later)
    await q.pauseGroup("g")
    await q.resumeGroup("g")
  } finally {
    await q.obliterate({ force: true }).finally(() => q.close())
  }
  warm = true
}

/** One command list against a fresh queue `name`: the model and the queue side by side; answers the steps compared. */
export const runList = async (
  name: string,
  raw: Redis,
  proxy: TcpProxy,
  cmds: Iterable<fc.AsyncCommand<Model, Real>>,
): Promise<number> => {
  await warmUp(name)
  const real = openReal(name, raw, proxy)
  try {
    const model = new Model()
    await compare(model, real)
    await fc.asyncModelRun(() => ({ model, real }), cmds)
    return real.steps
  } finally {
    proxy.heal()
    await real.q.close()
    await real.side.close()
    for (const n of [name, sideName(name)]) {
      const direct = new Queue(n, { connection: redisUrl() })
      await direct.obliterate({ force: true }).finally(() => direct.close())
    }
  }
}
