/**
 * `leaseq/testing` for users' own tests (issue 34): `perform` runs one job through a handler
 * with the real engine against a real Redis (given, or one it starts) and says what became
 * of it; `enqueued`, `assertEnqueued` and `refuteEnqueued` look at what was put on a queue.
 */
import { describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import {
  assertEnqueued,
  enqueued,
  hasRedisServer,
  liveConnections,
  liveWorkers,
  matchesPartial,
  perform,
  refuteEnqueued,
} from "../../src/testing.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const name = queueNamer("testing")

/** The keys of queue `q` under the default prefix. */
const keysOf = async (q: string) => {
  const raw = rawClient()
  onCleanup(() => raw.quit())
  return raw.keys(`leaseq:{${q}}:*`)
}

describe("perform", () => {
  it("runs one job through the handler with the real engine: completed, with the result, and leaves nothing behind", async () => {
    const queue = name()
    let seen: { id: string; attempt: number; aborted: boolean } | undefined
    const outcome = await perform(
      async (job: {
        readonly id: string
        readonly attempt: number
        readonly payload: { n: number }
        readonly signal: AbortSignal
      }) => {
        seen = { id: job.id, attempt: job.attempt, aborted: job.signal.aborted }
        return job.payload.n * 2
      },
      { n: 21 },
      { connection: redisUrl(), queue },
    )
    expect(outcome).toMatchObject({ state: "completed", result: 42, attempts: 1, errors: [] })
    expect(seen).toEqual({ id: outcome.id, attempt: 1, aborted: false })
    expect(outcome.info?.state).toBe("completed")
    // a named queue is left as it is (the caller's); a fresh one is removed
    expect((await keysOf(queue)).length).toBeGreaterThan(0)
    const fresh = await perform(() => "ok", null, { connection: redisUrl() })
    expect(fresh.state).toBe("completed")
    const raw = rawClient()
    onCleanup(() => raw.quit())
    expect(await raw.keys("leaseq:{perform-*")).toEqual([])
    expect(liveWorkers()).toBe(0)
  })

  it("a handler that throws: dead, with the reason, the error and the attempts", async () => {
    const outcome = await perform(
      async () => {
        throw new Error("smtp down")
      },
      { to: "a@example.com" },
      { connection: redisUrl() },
    )
    expect(outcome.state).toBe("dead")
    if (outcome.state !== "dead") return
    expect(outcome.reason).toBe("failed")
    expect((outcome.error as Error).message).toBe("smtp down")
    expect(outcome.attempts).toBe(1)
    expect(outcome.errors.map((e) => (e as Error).message)).toEqual(["smtp down"])
  })

  it("retries as the job's options say: two failures, then completed on the third attempt", async () => {
    const outcome = await perform(
      async (job) => {
        if (job.attempt < 3) throw new Error(`try ${job.attempt}`)
        return job.attempt
      },
      {},
      { connection: redisUrl(), job: { maxAttempts: 3, backoff: { type: "fixed", delayMs: 0 } } },
    )
    expect(outcome).toMatchObject({ state: "completed", result: 3, attempts: 3 })
    expect(outcome.errors.map((e) => (e as Error).message)).toEqual(["try 1", "try 2"])
  })

  it("fails with a timeout naming the job and timeoutMs when the job neither completes nor dies", async () => {
    await expect(
      perform((job) => new Promise((resolve) => job.signal.addEventListener("abort", resolve)), 1, {
        connection: redisUrl(),
        timeoutMs: 300,
      }),
    ).rejects.toThrow(/neither completed nor died within 300 ms \(timeoutMs\)/)
    expect(liveWorkers()).toBe(0)
  })

  it.skipIf(!hasRedisServer())(
    "without a connection, starts a redis-server of its own and stops it after",
    async () => {
      const before = liveConnections()
      const outcome = await perform((job) => `hello ${job.payload}`, "world")
      expect(outcome).toMatchObject({ state: "completed", result: "hello world" })
      expect(liveConnections()).toBe(before)
    },
  )
})

describe("enqueued, assertEnqueued, refuteEnqueued", () => {
  const newQueue = () => {
    const q = new Queue<{ readonly to: string; readonly tags?: ReadonlyArray<string> }>(name(), {
      connection: redisUrl(),
    })
    onCleanup(async () => {
      await q.obliterate({ force: true })
      await q.close()
    })
    return q
  }

  it("lists the waiting and delayed jobs matching a partial payload or a predicate", async () => {
    const q = newQueue()
    const a = await q.add({ to: "a@x.io", tags: ["welcome"] })
    const b = await q.add({ to: "b@x.io" }, { delayMs: 60_000 })
    expect((await enqueued(q)).map((j) => j.id)).toEqual([a, b])
    expect((await enqueued(q, { payload: { to: "b@x.io" } })).map((j) => j.id)).toEqual([b])
    expect((await enqueued(q, { payload: { tags: ["welcome"] } })).map((j) => j.id)).toEqual([a])
    expect(await enqueued(q, { payload: { tags: [] } })).toEqual([])
    expect((await enqueued(q, { payload: (p) => p.to.startsWith("a") })).map((j) => j.id)).toEqual([a])
    expect((await enqueued(q, { state: "delayed" })).map((j) => j.id)).toEqual([b])
    // a name filter matches only jobs that carry that name
    expect(await enqueued(q, { name: "welcome-email" })).toEqual([])
  })

  it("assertEnqueued passes with the jobs, or throws naming the filter and what was enqueued; refuteEnqueued the reverse", async () => {
    const q = newQueue()
    const id = await q.add({ to: "a@x.io" })
    expect((await assertEnqueued(q, { payload: { to: "a@x.io" } })).map((j) => j.id)).toEqual([id])
    await assertEnqueued(q, {}, { count: 1 })
    await expect(assertEnqueued(q, { payload: { to: "z@x.io" } })).rejects.toThrow(
      new RegExp(
        `expected at least 1 job\\(s\\) on queue ${q.name} matching \\{"payload":\\{"to":"z@x.io"\\}\\}, found 0; enqueued \\(1\\):\\n  waiting ${id} \\{"to":"a@x.io"\\}`,
      ),
    )
    await expect(assertEnqueued(q, {}, { count: 2 })).rejects.toThrow(/expected 2 job\(s\).*found 1/)
    await refuteEnqueued(q, { payload: { to: "z@x.io" } })
    await expect(refuteEnqueued(q, { payload: { to: "a@x.io" } })).rejects.toThrow(/expected no job\(s\).*found 1/)
  })

  it("matchesPartial: every field given equal, recursively; arrays and values whole", () => {
    expect(matchesPartial({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } })).toBe(true)
    expect(matchesPartial({ a: 1, b: { c: 2 } }, { b: { c: 3 } })).toBe(false)
    expect(matchesPartial({ a: [1, 2] }, { a: [1] })).toBe(false)
    expect(matchesPartial("x", "x")).toBe(true)
    expect(matchesPartial(null, { a: 1 })).toBe(false)
  })
})
