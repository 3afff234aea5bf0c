/**
 * The queue-wide `drained` event: recorded by the call that finishes the last job in
 * flight while none waits (complete, a completing reserve, fail to a later retry or dead).
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { decodeEntry } from "../../src/engine/events/EventDecode.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { JobEvent } from "../../src/index.ts"
import { Queue, Worker } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("drained")
const shared = sharedClients()

const setup = () => {
  const q = name()
  const queue = new Queue<number>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  const keys = queueKeys(q)
  return { q, queue, keys, c: makeCommands(shared.client, keys) }
}

const kinds = async (key: string) =>
  (await shared.raw.xrange(key, "-", "+")).flatMap(([id, f]) => decodeEntry("q", id, f)).map((e) => e.kind)

describe("drained", () => {
  it("is recorded once the last job in flight completes and none waits, not before", async () => {
    const { queue, keys, c } = setup()
    await queue.add(1)
    await queue.add(2)
    await queue.add(3)
    const first = await run(c.reserve(2, 5_000, 0))
    await run(c.complete([first.jobs[0]!]))
    // one still active, one waiting: not drained
    expect(await kinds(keys.events)).not.toContain("drained")
    // the reserve carrying the second complete leases the third: still not drained
    const second = await run(c.reserve(1, 5_000, 0, [first.jobs[1]!]))
    expect(second.completed).toEqual([true])
    expect(await kinds(keys.events)).not.toContain("drained")
    // a reserve whose rider was the last job, with nothing to lease: drained
    await run(c.reserve(1, 5_000, 0, [second.jobs[0]!]))
    const all = await kinds(keys.events)
    expect(all.filter((k) => k === "drained")).toHaveLength(1)
    expect(all.at(-1)).toBe("drained")
    expect(all.lastIndexOf("completed")).toBe(all.length - 2)
  })

  it("a fail that leaves nothing waiting or active records it (to a later retry or to dead); a retry at once does not", async () => {
    const { queue, keys, c } = setup()
    await queue.add(1, { maxAttempts: 2 })
    let { jobs } = await run(c.reserve(1, 5_000, 0))
    await run(c.fail(jobs[0]!, { delayMs: 0, error: "{}", mode: "retry" }))
    expect(await kinds(keys.events)).not.toContain("drained")
    ;({ jobs } = await run(c.reserve(1, 5_000, 0)))
    await run(c.fail(jobs[0]!, { delayMs: 0, error: "{}", mode: "retry" }))
    expect((await kinds(keys.events)).slice(-2)).toEqual(["dead", "drained"])
  })

  it("a cancel of the last job waiting or active records it; of a delayed one it does not", async () => {
    const { queue, keys } = setup()
    const later = await queue.add(1, { delayMs: 60_000 })
    const waiting = await queue.add(2)
    expect(await queue.cancel(later)).toBe("delayed")
    expect(await kinds(keys.events)).not.toContain("drained")
    expect(await queue.cancel(waiting)).toBe("waiting")
    expect((await kinds(keys.events)).slice(-2)).toEqual(["cancelled", "drained"])
  })

  it("a sweep that moves the last lease in flight to dead records it", async () => {
    const { queue, keys, c } = setup()
    await queue.add(1, { maxAttempts: 1 })
    await run(c.reserve(1, 10, 0))
    await until("the sweep reclaims the expired lease", async () => (await queue.sweep()).dead === 1)
    expect((await kinds(keys.events)).slice(-2)).toEqual(["dead", "drained"])
  })

  it("a worker's queue emptied: events() passes drained on after the last completed", async () => {
    const { q, queue } = setup()
    const iterator = queue.events({ from: "start" })[Symbol.asyncIterator]()
    onCleanup(async () => {
      await iterator.return?.()
    })
    for (let i = 0; i < 5; i++) await queue.add(i)
    const worker = new Worker<number>(q, async () => {}, { connection: redisUrl(), concurrency: 2 })
    onCleanup(() => worker.close())
    const seen: JobEvent[] = []
    while (seen.at(-1)?.kind !== "drained") seen.push((await iterator.next()).value as JobEvent)
    expect(seen.filter((e) => e.kind === "completed")).toHaveLength(5)
    expect(seen.at(-1)).toMatchObject({ kind: "drained", jobId: "", queue: q })
  })
})
