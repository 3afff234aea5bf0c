/**
 * A child in another queue than its parent's (its end a note in its queue's outbox: another
 * hash slot, or a queue the complete's fan-in does not reach) leaves its result on the
 * parent's edge too: the note carries it (≤ 64 KiB; past it the size), so the parent reads it
 * after the child's retention dropped the child (docs/flows.md, "Cancel, obliterate, clean").
 * A note's result may hold the separator `|`. The outbox is read and answered in ≤ 1 MiB pieces,
 * so notes with large results are applied all the same, one bounded call at a time.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-results")
const shared = sharedClients()

/**
 * Complete the leased `jobs` of `queue` in one call with `results` (JSON texts) as a command
 * set that knows no fan-in peer sends it (a child of another hash slot): their parents get notes.
 */
const completeAlone = (
  queue: string,
  jobs: ReadonlyArray<{ readonly id: string; readonly token: number }>,
  results: ReadonlyArray<string | undefined>,
) =>
  Effect.runPromise(
    runScript(shared.client, queueKeys(queue), Scripts.complete, {
      items: jobs.map((j, i) => ({
        id: j.id,
        token: j.token,
        ...(results[i] === undefined ? {} : { result: results[i] }),
      })),
      lane: "w1:a0",
    }),
  )

describe("a child's result through the outbox", () => {
  it("a child of another queue with a retention of 0: its parent reads its result from the note, `|` and all", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa)
    const b = useQueue<string>(qb)
    await b.setRetention({ completed: { count: 0 } })
    const tree = await a.addFlow({
      payload: "parent",
      children: [
        { queue: qb, payload: "small" },
        { queue: qb, payload: "big" },
        { queue: qb, payload: "none" },
      ],
    })
    const results: Record<string, unknown> = {
      small: { text: "a|b||c", list: ["|", "x"] },
      big: { big: "x".repeat(70_000) },
      none: undefined,
    }
    const jobs = await b.reserve({ count: 3 })
    expect(jobs.length).toBe(3)
    await completeAlone(
      qb,
      jobs,
      jobs.map((j) => (results[j.payload] === undefined ? undefined : JSON.stringify(results[j.payload]))),
    )
    // every end is a note in the child queue's outbox (the parent's queue is another one)
    expect(await shared.raw.llen(queueKeys(qb).depOutbox)).toBe(3)
    for (const id of tree.children.map((c) => c.id)) expect(await b.getJob(id)).toBeUndefined()
    await b.sweep()
    expect(await shared.raw.llen(queueKeys(qb).depOutbox)).toBe(0)
    const byId = new Map((await a.getDependencies(tree.id)).children.map((c) => [c.id, c]))
    const [small, big, none] = tree.children.map((c) => byId.get(c.id))
    expect(small).toMatchObject({ queue: qb, state: "completed", value: results.small })
    // past 64 KiB the edge keeps the size only, as for a child of the parent's own queue
    expect(big).toMatchObject({ state: "completed", result: undefined, resultBytes: 70_010 })
    expect(none).toMatchObject({ state: "completed", result: undefined, resultBytes: undefined })
    expect((await a.getJob(tree.id))?.state).toBe("waiting")
    expect((await a.verify()).lines).toEqual([])
  })

  it("notes whose results pass 1 MiB together: the outbox answers a bounded piece, and one sweep applies every note", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa)
    const b = useQueue<string>(qb)
    const n = 40
    const tree = await a.addFlow({
      payload: "parent",
      children: Array.from({ length: n }, (_, i) => ({ queue: qb, payload: `c${i}` })),
    })
    const jobs = await b.reserve({ count: n })
    expect(jobs.length).toBe(n)
    const answer = await completeAlone(
      qb,
      jobs,
      jobs.map((j) => JSON.stringify({ of: j.payload, pad: "y".repeat(60_000) })),
    )
    const keys = queueKeys(qb)
    expect(await shared.raw.llen(keys.depOutbox)).toBe(n)
    // the complete's answer carries the notes it left up to 1 MiB (the drain reads the rest)
    expect(answer.notes).toBe(true)
    expect(answer.outbox!.length).toBeLessThan(n)
    expect(answer.outbox!.reduce((sum, note) => sum + note.length, 0)).toBeLessThanOrEqual(1024 * 1024)
    const read = await Effect.runPromise(
      runScript(shared.client, keys, Scripts.depsOutbox, { limit: 500, applied: [] }),
    )
    const bytes = read.notes.reduce((sum, note) => sum + note.length, 0)
    expect(read.more).toBe(true)
    expect(read.notes.length).toBeGreaterThan(0)
    expect(read.notes.length).toBeLessThan(n)
    expect(bytes).toBeLessThanOrEqual(1024 * 1024)
    await b.sweep()
    expect(await shared.raw.llen(keys.depOutbox)).toBe(0)
    const page = await a.getDependencies(tree.id, { count: 1000 })
    expect(page.pending).toBe(0)
    expect(page.children.map((c) => (c.value as { of: string }).of).sort()).toEqual(jobs.map((j) => j.payload).sort())
    expect((await a.getJob(tree.id))?.state).toBe("waiting")
  })
  it("dependsOn jobs of another queue that already completed: their results go on the edge, in ≤ 1 MiB calls, and outlive the jobs", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa)
    const b = useQueue<string>(qb)
    const n = 20 // 20 results of 60 KB: more than one deps-link answer
    for (let i = 0; i < n; i++) await b.add(`d${i}`)
    const done = await b.reserve({ count: n })
    for (const j of done) await b.complete(j.id, j.token, { of: j.payload, pad: "z".repeat(60_000) })
    const later = await b.add("later")
    const parent = await a.add("parent", {
      dependsOn: [...done.map((j) => ({ queue: qb, id: j.id })), { queue: qb, id: later }],
    })
    expect((await a.getDependencies(parent)).pending).toBe(1)
    expect((await b.clean("completed", { olderThanMs: 0 })).deleted).toBe(n)
    const page = await a.getDependencies(parent, { count: 1000 })
    const values = page.children.filter((c) => c.state === "completed").map((c) => (c.value as { of: string }).of)
    expect(values.sort()).toEqual(done.map((j) => j.payload).sort())
    expect((await a.getJob(parent))?.state).toBe("waiting-children")
    expect((await a.verify()).lines).toEqual([])
  })
})
