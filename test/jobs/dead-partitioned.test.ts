/**
 * The dead list of a partitioned queue, merged once (partition/Producer.ts) for both faces
 * and the CLI: pages in order of death across partitions, each job naming its partition,
 * the total over all; retry and purge find an id in whichever partition holds it.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { partitionKeys } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("dead-parted")
const shared = sharedClients()
const P = 3

/** Kill `n` jobs, job k in partition k % P, dead at time 1000 + k (set on the dead set), so the merged order is k. */
const killInterleaved = async (q: string, n: number) => {
  const ids: string[] = []
  for (let k = 0; k < n; k++) {
    const keys = partitionKeys(q, k % P)
    const c = makeCommands(shared.client, keys)
    await run(c.add([newJob({ payload: JSON.stringify(k), maxAttempts: 1 })]))
    const lease = (await run(c.reserve(1, 5_000, 0))).jobs[0]!
    expect(await run(c.fail(lease, { delayMs: 0, error: JSON.stringify({ message: `e${k}` }), mode: "dead" }))).toBe(
      "dead",
    )
    await shared.raw.zadd(keys.dead, "XX", 1000 + k, lease.id)
    ids.push(lease.id)
  }
  return ids
}

describe("a partitioned queue's dead list", () => {
  it("pages in order of death across partitions, each job naming its partition; the total counts them all", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: P })
    const ids = await killInterleaved(q, 8)
    const page = await queue.deadJobs({ offset: 2, count: 4 })
    expect(page.total).toBe(8)
    expect(page.jobs.map((j) => [j.id, j.queue, j.diedAt, j.payload])).toEqual(
      [2, 3, 4, 5].map((k) => [ids[k], `${q}~${k % P}`, 1000 + k, JSON.stringify(k)]),
    )
    expect(page.jobs[0]).toMatchObject({ error: { message: "e2" } })
    // pages put together are the whole list, once each
    const pages = []
    for (let offset = 0; offset < 8; offset += 3) pages.push(...(await queue.deadJobs({ offset, count: 3 })).jobs)
    expect(pages.map((j) => j.id)).toEqual(ids)
    expect(await queue.deadJobs({ offset: 8, count: 3 })).toEqual({ total: 8, jobs: [] })
    expect(await queue.retryDead([ids[1]!, ids[5]!, "no-such-id"])).toBe(2)
    expect(await queue.purgeDead([ids[0]!])).toBe(1)
    expect((await queue.deadJobs({ count: 100 })).jobs.map((j) => j.id)).toEqual([2, 3, 4, 6, 7].map((k) => ids[k]))
  })
})
