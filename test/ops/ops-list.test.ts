/**
 * getJobs: every state lists its jobs with their payloads and times; pages follow their
 * cursor without a job twice or missed (also when the cursor's job left, and among equal
 * scores); `desc` reverses; a partitioned queue reads one partition after another; bad
 * input is refused before anything is sent; the Effect face lists the same.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as LeaseQueue from "../../src/effect/LeaseQueue.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { ListState } from "../../src/engine/queue/OpsApi.ts"
import { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { jobInEveryState, STATES } from "./support.ts"

const name = queueNamer("ops-list")
const shared = sharedClients()

/** Every id of `state`, page by page. */
const everyPage = async (queue: Queue, state: ListState, count: number, order: "asc" | "desc" = "asc") => {
  const ids: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await queue.getJobs(state, { count, order, ...(cursor ? { cursor } : {}) })
    ids.push(...page.jobs.map((j) => j.id))
    cursor = page.cursor
    pages++
  } while (cursor !== undefined)
  return { ids, pages }
}

const newQueue = (q: string, partitions?: number) => {
  const queue = new Queue(q, { connection: redisUrl(), ...(partitions ? { partitions } : {}) })
  onCleanup(() => queue.close())
  return queue
}

describe("getJobs", () => {
  it.each(STATES)("lists the %s job with its payload and time", async (state) => {
    const q = name()
    const { queue, ids } = await jobInEveryState(shared.client, q)
    const page = await queue.getJobs(state)
    expect(page.total).toBe(1)
    expect(page.cursor).toBeUndefined()
    expect(page.jobs.map((j) => j.id)).toEqual([ids[state]])
    const job = page.jobs[0]!
    expect(job.state).toBe(state)
    expect(job.payload).not.toBeNull()
    const field = { delayed: "dueAt", active: "leaseDeadline", waiting: undefined }[state as string] ?? "finishedAt"
    if (state === "waiting") expect(Object.keys(job)).not.toContain("finishedAt")
    else expect(job).toHaveProperty(field)
  })

  it("pages waiting jobs in the order they run, and desc in reverse, each job once", async () => {
    const q = name()
    const queue = newQueue(q)
    const added = await queue.addBulk(Array.from({ length: 250 }, (_, n) => ({ payload: { n } })))
    const asc = await everyPage(queue, "waiting", 100)
    expect(asc).toEqual({ ids: added, pages: 3 })
    expect((await everyPage(queue, "waiting", 100, "desc")).ids).toEqual([...added].reverse())
    expect((await queue.getJobs("waiting", { count: 2 })).jobs.map((j) => j.payload)).toEqual([{ n: 0 }, { n: 1 }])
  })

  it("pages delayed jobs of one due time (equal scores) each once, also when the cursor's job left", async () => {
    const q = name()
    const c = makeCommands(shared.client, queueKeys(q))
    const jobs = Array.from({ length: 30 }, () => newJob({ delayMs: 3_600_000 }))
    await run(c.add(jobs))
    const queue = newQueue(q)
    const first = await queue.getJobs("delayed", { count: 10 })
    // the job the cursor names leaves delayed before the next page is read
    await queue.promote(first.jobs[9]!.id)
    const ids = first.jobs.map((j) => j.id)
    let cursor = first.cursor
    while (cursor !== undefined) {
      const page = await queue.getJobs("delayed", { count: 10, cursor })
      ids.push(...page.jobs.map((j) => j.id))
      cursor = page.cursor
    }
    expect(new Set(ids).size).toBe(30)
    expect([...ids].sort()).toEqual(jobs.map((j) => j.id).sort())
  })

  it("a partitioned queue lists every partition's jobs, each once", async () => {
    const q = name()
    const queue = newQueue(q, 3)
    const added = await queue.addBulk(Array.from({ length: 31 }, (_, n) => ({ payload: { n } })))
    const { ids } = await everyPage(queue, "waiting", 7)
    expect([...ids].sort()).toEqual([...added].sort())
  })

  it("refuses a bad state, count, order or cursor, naming the field", async () => {
    const queue = newQueue(name())
    await expect(queue.getJobs("finished" as "dead")).rejects.toMatchObject({ _tag: "InvalidOptions", field: "state" })
    await expect(queue.getJobs("dead", { count: 1001 })).rejects.toMatchObject({ field: "count" })
    await expect(queue.getJobs("dead", { order: "up" as "asc" })).rejects.toMatchObject({ field: "order" })
    await expect(queue.getJobs("waiting", { cursor: "12:x" })).rejects.toMatchObject({ field: "cursor" })
    await expect(queue.getJobs("dead", { cursor: "nope" })).rejects.toMatchObject({ field: "cursor" })
  })

  it("the Effect face lists the same, payloads decoded", async () => {
    const q = name()
    const queue = newQueue(q)
    const id = await queue.add({ n: 5 })
    const page = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const lq = yield* LeaseQueue.make<{ n: number }>({ name: q, connection: redisUrl() })
          return yield* lq.getJobs("waiting")
        }),
      ),
    )
    expect(page.jobs).toMatchObject([{ id, state: "waiting", payload: { n: 5 } }])
  })
})
