import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { type QueueKeys, queueKeys } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"

const name = queueNamer("add-copies")
const shared = sharedClients()

const setup = () => {
  const keys = queueKeys(name())
  return { keys, c: makeCommands(shared.client, keys) }
}
const meta = async (keys: QueueKeys, field: string) => Number((await shared.raw.hget(keys.meta, field)) ?? 0)

/** Age the add call's receipt past the window; a housekeeping reserve (request id "8") drops it. */
const trimReceipt = async (keys: QueueKeys, requestId: string) => {
  const at = Number(await shared.raw.zscore(keys.receiptsAt, requestId))
  await shared.raw.zadd(keys.receiptsAt, at - 61_000, requestId)
  await run(makeCommands(shared.client, keys).reserve(0, 1_000, 0, [], { workerId: "trimmer", requestId: "8" }))
  expect(await shared.raw.zscore(keys.receiptsAt, requestId)).toBeNull()
}

/** Where the job is: its wait entries, and its scores in active, delayed, done and dead. */
const where = async (keys: QueueKeys, id: string) => ({
  wait: (await shared.raw.lrange(keys.wait, 0, -1)).filter((e) => e === id).length,
  active: (await shared.raw.zscore(keys.active, id)) !== null,
  delayed: (await shared.raw.zscore(keys.delayed, id)) !== null,
  done: (await shared.raw.zscore(keys.done, id)) !== null,
  dead: (await shared.raw.zscore(keys.dead, id)) !== null,
})
const nowhere = { wait: 0, active: false, delayed: false, done: false, dead: false }

describe("F2: an add re-sent after its receipt is gone", () => {
  it("while the job runs: the copy is dropped, no one else leases it, its holder completes it", async () => {
    const { keys, c } = setup()
    const j = newJob()
    await run(c.add([j], "REQ-A"))
    const [a] = (await run(c.reserve(1, 60_000, 0, [], { workerId: "A", requestId: "1" }))).jobs
    await trimReceipt(keys, "REQ-A")
    expect(await run(c.add([j], "REQ-A"))).toEqual([j.id])
    expect(await where(keys, j.id)).toEqual({ ...nowhere, active: true })
    expect((await run(c.reserve(1, 60_000, 0, [], { workerId: "B", requestId: "1" }))).jobs).toEqual([])
    expect(await run(c.complete([{ id: a!.id, token: a!.token }]))).toEqual([true])
    // the copy was never waiting: nothing turns the completed job into a missing-data dead letter
    expect((await run(c.reserve(1, 60_000, 0, [], { workerId: "B", requestId: "2" }))).jobs).toEqual([])
    expect(await where(keys, j.id)).toEqual({ ...nowhere, done: true })
    expect(await run(c.stats)).toMatchObject({ counters: { added: 1, completed: 1, dead: 0 } })
    expect(await meta(keys, "duplicates")).toBe(1)
  })

  it("waiting, delayed, retained after completion or dead: the copy is dropped and the job stays where it is", async () => {
    const { keys, c } = setup()
    const waiting = newJob()
    const delayed = newJob({ delayMs: 60_000 })
    const retained = newJob()
    const dead = newJob({ maxAttempts: 1 })
    await run(c.add([retained, dead], "REQ-1"))
    const [r, d] = (await run(c.reserve(2, 60_000, 0))).jobs
    expect(await run(c.complete([{ id: r!.id, token: r!.token }]))).toEqual([true])
    expect(await run(c.fail(d!, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("dead")
    await run(c.add([waiting, delayed], "REQ-2"))
    await trimReceipt(keys, "REQ-1")
    await trimReceipt(keys, "REQ-2")
    expect(await run(c.add([retained, dead], "REQ-1"))).toEqual([retained.id, dead.id])
    expect(await run(c.add([waiting, delayed], "REQ-2"))).toEqual([waiting.id, delayed.id])
    expect(await where(keys, waiting.id)).toEqual({ ...nowhere, wait: 1 })
    expect(await where(keys, delayed.id)).toEqual({ ...nowhere, delayed: true })
    expect(await where(keys, retained.id)).toEqual({ ...nowhere, done: true })
    expect(await where(keys, dead.id)).toEqual({ ...nowhere, dead: true })
    expect(await meta(keys, "added")).toBe(4)
    expect(await meta(keys, "duplicates")).toBe(4)
    expect((await run(c.reserve(10, 60_000, 0))).jobs.map((x) => x.id)).toEqual([waiting.id])
  })

  it("reserve drops a plain copy of a job that is active, retained or dead (a copy an earlier version left), and counts it", async () => {
    const { keys, c } = setup()
    const running = newJob()
    const retained = newJob()
    const dead = newJob({ maxAttempts: 1 })
    await run(c.add([running, retained, dead]))
    const leases = (await run(c.reserve(3, 60_000, 0))).jobs
    const lease = new Map(leases.map((l) => [l.id, l]))
    expect(await run(c.complete([lease.get(retained.id)!]))).toEqual([true])
    expect(await run(c.fail(lease.get(dead.id)!, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("dead")
    await shared.raw.lpush(keys.wait, running.id, retained.id, dead.id)
    expect((await run(c.reserve(10, 60_000, 0, [], { workerId: "B", requestId: "1" }))).jobs).toEqual([])
    expect(await meta(keys, "duplicates")).toBe(3)
    expect(await where(keys, running.id)).toEqual({ ...nowhere, active: true })
    expect(await where(keys, retained.id)).toEqual({ ...nowhere, done: true })
    expect(await where(keys, dead.id)).toEqual({ ...nowhere, dead: true })
    expect(await run(c.complete([lease.get(running.id)!]))).toEqual([true])
    expect(await run(c.stats)).toMatchObject({ counters: { added: 3, completed: 2, dead: 1 } })
  })
})

describe("the answer to a re-sent add (inside the receipt window)", () => {
  it("a deduplicated job is answered with the holder it was answered with, even once that holder finished", async () => {
    const { keys, c } = setup()
    const holder = newJob({ dedupeKey: "k", dedupeTtlMs: -1 })
    await run(c.add([holder]))
    const late = newJob({ dedupeKey: "k", dedupeTtlMs: -1 })
    const other = newJob()
    expect(await run(c.add([late, other], "REQ-D"))).toEqual([holder.id, other.id])
    // the holder runs and completes: its key is free
    const [h] = (await run(c.reserve(1, 60_000, 0))).jobs
    expect(await run(c.complete([{ id: h!.id, token: h!.token }]))).toEqual([true])
    expect(await run(c.add([late, other], "REQ-D"))).toEqual([holder.id, other.id])
    expect(await shared.raw.hexists(keys.data, late.id)).toBe(0)
  })

  it("a job added with a dedupe key is answered with its own id, even once another job holds the key", async () => {
    const { c } = setup()
    const first = newJob({ dedupeKey: "k", dedupeTtlMs: -1 })
    expect(await run(c.add([first], "REQ-E"))).toEqual([first.id])
    const [f] = (await run(c.reserve(1, 60_000, 0))).jobs
    expect(await run(c.complete([{ id: f!.id, token: f!.token }]))).toEqual([true])
    const next = newJob({ dedupeKey: "k", dedupeTtlMs: -1 })
    expect(await run(c.add([next]))).toEqual([next.id])
    expect(await run(c.add([first], "REQ-E"))).toEqual([first.id])
  })
})
