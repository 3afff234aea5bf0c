/**
 * The shrunk command lists the model found on f43eb35 (test/model/FINDINGS.md), each replayed
 * exactly as a named test through the model harness: they fail while the finding is open and
 * pass once it is fixed. `it.fails` marks the ones still open on this branch: the lead flips
 * each to `it` when the branch that fixes it is merged.
 *
 * G5 is a Worker's stand-alone complete, which the model's manual real side cannot send: it
 * has its own test here, on a Worker through the TCP proxy.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { proxyToSuiteRedis, until } from "../reliability/support.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"
import {
  Add,
  Cancel,
  Complete,
  PauseGroup,
  Reserve,
  Retry,
  SetGroupLimits,
  SetRateLimit,
  SetRetention,
  WorkerRateLimited,
} from "./Commands.ts"
import { runList } from "./Real.ts"

const name = queueNamer("model-reg")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const plain = { id: undefined, priority: 0, lifo: false, group: undefined, delay: "none", maxAttempts: 1 } as const
const inG1 = { ...plain, group: "g1" } as const
const inG2 = { ...plain, group: "g2" } as const

const replay = async (cmds: ReadonlyArray<Parameters<typeof runList>[3] extends Iterable<infer C> ? C : never>) => {
  const proxy = await proxyToSuiteRedis()
  await runList(name(), raw, proxy, cmds)
}

describe("the model's findings on f43eb35, replayed", () => {
  it.fails("G1: a cancelled grouped job, retried, stays in its group (groups() counts it)", async () => {
    await replay([new Add(inG1, false), new Cancel(0, false), new Retry(0, false)])
  })

  it.fails("G2: a cancelled job trimmed by a count of 0 leaves the cancelled list", async () => {
    await replay([new SetRetention(0, 0), new Add(plain, true), new Cancel(0, false)])
  })

  it.fails("G3: the default group rate window holds when the group runs empty", async () => {
    await replay([
      new SetGroupLimits(undefined, { max: 3 }),
      new Add(inG1, false),
      new Add(inG1, false),
      new Reserve(4, "long", false),
      new Complete(0, false),
      new Complete(0, false),
      new Add(inG1, false),
      new Add(inG1, false),
      new Reserve(4, "long", false),
    ])
  })

  it.fails("G6: setRateLimit(null) lifts a RateLimited hold", async () => {
    await replay([
      new Add(plain, false),
      new WorkerRateLimited(redisUrl),
      new SetRateLimit(null),
      new WorkerRateLimited(redisUrl),
    ])
  })

  it.fails("G8: a grouped job added delayed does not stall the waiting ungrouped jobs", async () => {
    await replay([new Add(plain, false), new Add({ ...inG1, delay: "long" }, false), new Reserve(1, "short", false)])
  })

  it.fails("G9: clearing the default group concurrency releases the group held by it", async () => {
    await replay([
      new SetGroupLimits(undefined, { concurrency: 1 }),
      new Add(inG2, false),
      new Add(inG2, false),
      new Reserve(1, "short", false),
      new SetGroupLimits(undefined, null),
      new Reserve(1, "short", false),
    ])
  })

  it.fails("G10: pauseGroup re-sent after a lost reply answers true", async () => {
    // the shrunk list is the last step alone; its script must be loaded first (a NOSCRIPT reply
    // swallowed means the first send did nothing), as earlier lists of the run had done
    await replay([new PauseGroup("g2", true, false), new PauseGroup("g1", true, true)])
  })

  it.fails("G10: cancel re-sent after a lost reply answers the state the job was in", async () => {
    await replay([new Add(plain, false), new Cancel(0, true)])
  })

  it.fails("M1: the reserve that carries a RateLimited fail leases nothing more", async () => {
    await replay([new Add(plain, false), new Add(plain, true), new WorkerRateLimited(redisUrl)])
  })

  it.fails("G5: a Worker's stand-alone complete, its reply lost and re-sent, is told as completed", async () => {
    const proxy = await proxyToSuiteRedis()
    const queueName = name("g5")
    const direct = useQueue(queueName)
    const lost: string[] = []
    const completed: string[] = []
    let dropNow = false
    const worker = useWorker(
      queueName,
      () => {
        // the reply to this job's complete (sent alone: the worker is idle) is swallowed
        if (dropNow) proxy.dropReplies()
      },
      { connection: proxy.url, concurrency: 4, leaseMs: 10_000, sweep: false },
    )
    worker.on("lease-lost", (job) => lost.push(job.id))
    worker.on("completed", (job) => completed.push(job.id))
    await until("the worker is ready", async () => (await direct.workers()).length === 1)
    dropNow = true
    const id = await direct.add({ n: 1 })
    await until(
      "the complete landed (its reply swallowed)",
      async () => (await direct.getJob(id))?.state === "completed",
    )
    const swallowed = proxy.droppedReplies
    await until("a reply was swallowed", () => proxy.droppedReplies >= swallowed && swallowed > 0)
    dropNow = false
    proxy.cut()
    proxy.heal()
    await until("the worker told the outcome", () => lost.length + completed.length > 0)
    expect({ completed, lost }).toEqual({ completed: [id], lost: [] })
  })
})
