/**
 * The real side of the model test: a fresh queue per command list, its connection through the
 * suite's TCP proxy (so a command can have its reply lost and re-sent), a raw client for the
 * Redis clock, and the comparison of everything observable with the model after each step.
 */
import fc from "fast-check"
import type { Redis } from "ioredis"
import { Queue } from "../../src/index.ts"
import type { TcpProxy } from "../support/proxy.ts"
import { redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { Model, type Span, STATES } from "./Model.ts"

/** How far ahead of a time-dependent call no due time or deadline may lie (else the harness waits it out). */
export const MARGIN_MS = 150

export interface Real {
  readonly q: Queue<unknown>
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
  name,
  raw,
  proxy,
  now: () => redisNow(raw),
  steps: 0,
})

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

/** Compare everything observable with the model: each job's state, stats, groups, a page per state, verify. */
export const compare = async (m: Model, r: Real): Promise<void> => {
  r.steps++
  for (const id of m.known)
    expectSame(`getJob(${id}).state`, m.state(id) ?? null, (await r.q.getJob(id))?.state ?? null)
  const s = await r.q.stats()
  const count = (st: (typeof STATES)[number]) => m.inState(st).length
  expectSame(
    "stats() waiting/active/delayed/dead/retained/paused",
    [count("waiting"), count("active"), count("delayed"), count("dead"), count("completed"), m.paused],
    [s.waiting, s.active, s.delayed, s.dead, s.retained, s.paused],
  )
  for (const state of STATES) {
    const page = await r.q.getJobs(state, { count: 1000 })
    const ids = (xs: ReadonlyArray<string>) => [...xs].sort()
    expectSame(`getJobs("${state}") ids`, ids(m.inState(state).map((j) => j.id)), ids(page.jobs.map((j) => j.id)))
  }
  const groups = (await r.q.groups({ count: 1000 })).groups
    .filter((g) => g.waiting > 0 || g.active > 0 || g.paused)
    .map((g) => [g.group, g.waiting, g.active, g.paused])
  const expected = [...m.groupCounts()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([g, c]) => [g, c.waiting, c.active, c.paused])
  expectSame("groups() waiting/active/paused", expected, groups)
  const v = await r.q.verify()
  expectSame("verify() violations", [], v.lines)
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
    const direct = new Queue(name, { connection: redisUrl() })
    await direct.obliterate({ force: true }).finally(() => direct.close())
  }
}
