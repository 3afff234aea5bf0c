/**
 * How a job's end is told, on both faces (test/behaviour/faces.ts), against the suite's
 * real Redis: a cancel is a cancel (never a lost lease), a death has one reason
 * everywhere (the worker, the events stream, getJob), a failure's reason is recorded,
 * an error whose getters throw is still the handler's failure, and waitFor answers from
 * the job's state when the events cannot tell.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("outcomes")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** The events stream's entries about job `id`, as "kind" or "kind:reason". */
const streamOf = async (queue: string, id: string): Promise<string[]> => {
  const entries = await raw.xrange(queueKeys(queue).events, "-", "+")
  const out: string[] = []
  for (const [, fields] of entries) {
    const f: Record<string, string> = {}
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!
    if (!(f.id ?? "").split(",").includes(id)) continue
    out.push(f.reason === undefined ? f.kind! : `${f.kind}:${f.reason}`)
  }
  return out
}

describe.each(faces)("$name", (face) => {
  it("a cancel landing while the handler runs is told as cancelled, not a lost lease, when the handler returns before the next heartbeat", async () => {
    const q = await face.open(name())
    const gate = deferred()
    const id = await q.add({ n: 1 })
    // no heartbeat comes while the job runs: only the refused complete can tell the cancel
    const w = await q.worker(() => gate.promise, { leaseMs: 120_000, heartbeatMs: 50_000 })
    onCleanup(() => gate.resolve())
    await until("the job runs", () => w.seen.runs.length === 1)
    expect(await q.cancel(id)).toBe("active")
    gate.resolve()
    await until("the worker tells the cancel", () => w.seen.cancelled.length === 1)
    expect(w.seen.cancelled).toEqual([id])
    expect(w.seen.leaseLost).toEqual([])
    expect(w.seen.completed).toEqual([])
    // the cancelled job is retained (default retention)
    expect(await q.waitFor(id, 5_000)).toMatchObject({ id, state: "cancelled" })
    const s = await q.stats()
    expect([s.counters.cancelled, s.counters.lostLeases]).toEqual([1, 0])
    expect(await streamOf(q.name, id)).toEqual(["added", "active", "cancelled"])
  })

  it("a cancel found by a heartbeat while the handler runs is told as cancelled too", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 })
    // a quick heartbeat on the default lease: a 1 s lease lost on a busy machine re-ran the job
    const w = await q.worker(() => "hang", { heartbeatMs: 100 })
    await until("the job runs", () => w.seen.runs.length === 1)
    expect(await q.cancel(id)).toBe("active")
    await until("the worker tells the cancel", () => w.seen.cancelled.length === 1)
    await until("the handler is stopped", () => w.seen.stopped.length === 1)
    expect(w.seen.leaseLost).toEqual([])
    expect(await streamOf(q.name, id)).toEqual(["added", "active", "cancelled"])
  })

  it("a job that dies of handler failures has reason failed in the worker, the events stream and getJob", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 2 })
    const w = await q.worker(() => "fail", { backoff: { type: "fixed", delayMs: 10 } })
    await until("the job is dead", () => w.seen.dead.length === 1)
    expect(w.seen.dead).toEqual([{ id, reason: "failed" }])
    const message = `planned failure of ${id}`
    // a `failed` event keeps the handler's message; the `dead` event has the dead reason
    expect(await streamOf(q.name, id)).toEqual([
      "added",
      "active",
      `failed:${message}`,
      "active",
      `failed:${message}`,
      "dead:failed",
    ])
    expect((await q.getJob(id))?.error).toMatchObject({ reason: "failed", message })
  })

  it("a retried handler failure is recorded with reason failed (getJob error.reason)", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 2 })
    const again = deferred()
    const w = await q.worker((job) => (job.attempt === 1 ? "fail" : again.promise), {
      backoff: { type: "fixed", delayMs: 10 },
    })
    onCleanup(() => again.resolve())
    await until("the second attempt runs", () => w.seen.runs.length === 2)
    expect((await q.getJob(id))?.error).toMatchObject({ reason: "failed", message: `planned failure of ${id}` })
  })

  it("an error whose message getter throws is still recorded as the handler's failure (retried, then dead), not abandoned", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 2 })
    // a lease of 60 s: an abandoned job would wait that long, and be reclaimed as lease-expired
    const w = await q.worker(() => "bad-error", { leaseMs: 60_000, backoff: { type: "fixed", delayMs: 10 } })
    await until("the job is dead", () => w.seen.dead.length === 1)
    expect(w.seen.failed).toEqual([
      { id, willRetry: true },
      { id, willRetry: false },
    ])
    expect(w.seen.dead).toEqual([{ id, reason: "failed" }])
    const info = await q.getJob(id)
    expect(info).toMatchObject({ state: "dead", failures: 2, lostLeases: 0 })
    expect(info?.error).toMatchObject({ reason: "failed", message: expect.stringContaining("could not be read") })
  })

  it("a result JSON would store changed (a Map) is refused when kept: the job fails naming the path, nothing is stored", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 1 })
    const w = await q.worker(() => "map-result", {})
    await until("the job is dead", () => w.seen.dead.length === 1)
    expect(w.seen.completed).toEqual([])
    const info = await q.getJob(id)
    expect(info).toMatchObject({ state: "dead", error: { reason: "failed" } })
    expect(JSON.stringify(info?.error)).toContain("result: is a Map")
    expect(await raw.hexists(queueKeys(q.name).result, id)).toBe(0)
  })

  it("waitFor answers from the job's state when no events are recorded (retention 0)", async () => {
    const q = await face.open(name())
    await q.setEventRetention(0)
    const id = await q.add({ n: 4 })
    const waiting = q.waitFor(id, 30_000)
    await q.worker(() => "ok", {})
    expect(await waiting).toMatchObject({ id, state: "completed", result: 4 })
  })

  it("waitFor of a job that finished before the call (not kept) answers from the retained events (with the result), never 'did not finish'", async () => {
    const q = await face.open(name())
    await q.setRetention({ completed: { count: 0 } })
    const id = await q.add({ n: 5 })
    const w = await q.worker(() => "ok")
    await until("the job completes", () => w.seen.completed.length === 1)
    expect(await q.getJob(id)).toBeUndefined()
    // the completed event carries the (small) result
    expect(await q.waitFor(id, 2_000)).toMatchObject({ id, state: "completed", result: 5 })
  })

  it("waitFor of a job gone with no event to tell its end rejects with JobGone, not WaitForTimeout", async () => {
    const q = await face.open(name())
    await q.setEventRetention(0)
    await q.setRetention({ completed: { count: 0 } })
    const id = await q.add({ n: 6 })
    const w = await q.worker(() => "ok")
    await until("the job completes", () => w.seen.completed.length === 1)
    const error = await q.waitFor(id, 2_000).catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "JobGone", jobId: id, queue: q.name })
    expect((error as Error).message).toContain("setRetention")
  })
})
