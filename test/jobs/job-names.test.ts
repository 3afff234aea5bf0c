/**
 * Job names (add's `name` option, BullMQ's `add(name, data)`): stored in front of the payload,
 * given to the handler, shown by getJob and getJobs rows, kept by updatePayload, refused when
 * malformed (writing nothing), and costing nothing when not given.
 */
import { afterAll, describe, expect, it } from "vitest"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Job } from "../../src/index.ts"
import { deferred } from "../support/cleanup.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("job-names")
const raw = rawClient()
afterAll(() => raw.disconnect())

describe("job names", () => {
  it("a named job shows its name in getJob and getJobs rows, its payload unchanged", async () => {
    const q = name()
    const queue = useQueue<{ to: string }>(q)
    const id = await queue.add({ to: "a@x" }, { name: "email" })
    const [bulk1, bulk2] = await queue.addBulk([
      { payload: { to: "b@x" }, options: { name: "resize|w:100" } },
      { payload: { to: "c@x" } },
    ])
    expect(await queue.getJob(id)).toMatchObject({ id, name: "email", payload: { to: "a@x" } })
    expect(await queue.getJob(bulk1!)).toMatchObject({ name: "resize|w:100", payload: { to: "b@x" } })
    expect(await queue.getJob(bulk2!)).not.toHaveProperty("name")
    const page = await queue.getJobs("waiting")
    expect(page.jobs.map((j) => [j.id, j.name, j.payload])).toEqual([
      [id, "email", { to: "a@x" }],
      [bulk1, "resize|w:100", { to: "b@x" }],
      [bulk2, undefined, { to: "c@x" }],
    ])
  })

  it("the handler reads job.name; a job without one has none", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const seen: Array<[number, string | undefined]> = []
    const done = deferred()
    await queue.add(1, { name: "first" })
    await queue.add(2)
    useWorker<number>(q, (job: Job<number>) => {
      seen.push([job.payload, job.name])
      if (seen.length === 2) done.resolve()
    })
    await done.promise
    expect(seen.sort()).toEqual([
      [1, "first"],
      [2, undefined],
    ])
  })

  it("completed events carry the name, both from complete and from a reserve's riders", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const ids = await queue.addBulk(
      Array.from({ length: 6 }, (_, i) => ({ payload: i, options: i % 2 === 0 ? { name: `n${i}` } : {} })),
    )
    useWorker<number>(q, (job) => job.payload, { concurrency: 3 })
    const names = new Map<string, string | undefined>()
    for await (const e of queue.events({ from: "start" })) {
      if (e.kind === "completed") names.set(e.jobId, e.name)
      if (names.size === 6) break
    }
    expect(ids.map((id) => names.get(id))).toEqual(["n0", undefined, "n2", undefined, "n4", undefined])
  })

  it("added and dead events carry the name of a named job (one entry for many jobs too)", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const [a, b, c] = await queue.addBulk([
      { payload: 1, options: { name: "one", maxAttempts: 1 } },
      { payload: 2, options: { maxAttempts: 1 } },
      { payload: 3, options: { name: "three", maxAttempts: 1 } },
    ])
    useWorker<number>(q, () => {
      throw new Error("no")
    })
    const seen: Array<[string, string, string | undefined]> = []
    for await (const e of queue.events({ from: "start" })) {
      if (e.kind === "added" || e.kind === "dead") seen.push([e.kind, e.jobId, e.name])
      if (seen.filter(([k]) => k === "dead").length === 3) break
    }
    expect(seen.filter(([k]) => k === "added")).toEqual([
      ["added", a, "one"],
      ["added", b, undefined],
      ["added", c, "three"],
    ])
    expect(seen.filter(([k]) => k === "dead").sort()).toEqual(
      [
        ["dead", a, "one"],
        ["dead", b, undefined],
        ["dead", c, "three"],
      ].sort(),
    )
  })

  it("a manually reserved job carries its name", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const id = await queue.add(5, { name: "manual" })
    const [job] = await queue.reserve({ count: 1, leaseMs: 60_000 })
    expect(job).toMatchObject({ id, name: "manual", payload: 5 })
    await queue.complete(job!.id, job!.token)
  })

  it("updatePayload keeps the name", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const id = await queue.add(1, { name: "kept", delayMs: 60_000 })
    await queue.updatePayload(id, 2)
    expect(await queue.getJob(id)).toMatchObject({ name: "kept", payload: 2 })
  })

  it("costs nothing when not given: the stored payload is the JSON alone", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const id = await queue.add(7)
    expect(await raw.hget(queueKeys(q).data, id)).toBe("7")
    const named = await queue.add(7, { name: "n" })
    expect(await raw.hget(queueKeys(q).data, named)).toBe("~n:n\u00007")
  })

  it.each([
    ["empty", ""],
    ["too long", "x".repeat(129)],
    ["a control character", "a\nb"],
    ["a NUL", "a\u0000b"],
    ["not a string", 5],
  ])("refuses a name that is %s, naming the field, and adds nothing", async (_, bad) => {
    const q = name()
    const queue = useQueue<number>(q)
    const err = await queue.add(1, { name: bad as string }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidOptions)
    expect((err as InvalidOptions).field).toBe("options.name")
    const bulk = await queue.addBulk([{ payload: 1 }, { payload: 2, options: { name: bad as string } }]).catch((e) => e)
    expect((bulk as InvalidOptions).field).toBe("jobs[1].options.name")
    expect((await queue.stats()).waiting).toBe(0)
  })

  it("BullMQ's add(name, data, opts) is refused with a hint naming the name option", async () => {
    const q = name()
    const queue = useQueue<unknown>(q)
    const err = await (queue.add as (...a: unknown[]) => Promise<string>)("charge", { id: 1 }, {}).catch((e) => e)
    expect(String((err as Error).message)).toContain("add(data, { name, ...opts })")
    expect((await queue.stats()).waiting).toBe(0)
  })
})
