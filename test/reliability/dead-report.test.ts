/**
 * A job that dies in a sweep is reported, not only counted. A poison job SIGKILLs the
 * worker process that runs it (maxAttempts 1); its lease runs out, and the sweep of the
 * surviving worker moves it to dead and emits `dead` for exactly that job, with reason
 * `lease-expired`, the token of the lease that expired and the message stored with it.
 */
import type { Redis } from "ioredis"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, Worker } from "../../src/index.ts"
import { startWorkerChild } from "../support/child.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("rel-dead-report")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
/** What a test opened, closed after it (before the leak check), last opened first. */
const opened: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close()
})
afterAll(() => {
  raw.disconnect()
})

describe("dead jobs of a sweep are reported", () => {
  it("a poison job (its worker SIGKILLed, maxAttempts 1): the surviving worker's dead listener sees exactly it, reason lease-expired", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = new Queue<{ poison?: boolean; n?: number }>(q, { connection: redisUrl() })
    opened.push(() => queue.close())
    const [poison] = await queue.addBulk([{ payload: { poison: true }, options: { maxAttempts: 1 } }])

    // the victim: takes the poison job and dies with it, its lease left to run out
    const victim = startWorkerChild(redisUrl(), q, "poison", { leaseMs: 1_000, concurrency: 1, sweep: false })
    opened.push(() => victim.stop("SIGKILL"))
    const started = await victim.waitFor((l) => l.startsWith(`started ${poison} `), "the poison job started")
    const token = Number(started.text.split(" ")[2])
    expect((await victim.ended).signal).toBe("SIGKILL")

    // the survivor: sweeps in-process, and runs the other jobs
    const ran: string[] = []
    const dead: Array<{ job: { id: string; token: number }; reason: string; error: unknown }> = []
    const worker = new Worker<{ poison?: boolean; n?: number }>(
      q,
      async (job) => {
        ran.push(job.id)
      },
      { connection: redisUrl(), leaseMs: 1_000, concurrency: 4, sweep: { intervalMs: 100 } },
    )
    opened.push(() => worker.close())
    worker.on("dead", (job, reason, error) => dead.push({ job, reason, error }))
    const others = await queue.addBulk([1, 2, 3].map((n) => ({ payload: { n } })))

    await until("the poison job reported dead", () => dead.length > 0, { timeoutMs: 30_000 })
    await until("the other jobs completed", async () => (await queue.stats()).counters.completed === others.length)

    expect(dead).toHaveLength(1)
    expect(dead[0]!.job).toEqual({ id: poison, token })
    expect(dead[0]!.reason).toBe("lease-expired")
    expect(dead[0]!.error).toBeInstanceOf(Error)
    expect((dead[0]!.error as Error).message).toBe("lease expired 1 time(s) with 0 failure(s); maxAttempts is 1")
    expect(ran.sort()).toEqual([...others].sort())
    expect(await raw.zrange(keys.dead, "0", "-1")).toEqual([poison])
  })
})
