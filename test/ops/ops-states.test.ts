/**
 * Every operation on one job × every state (table-driven): the allowed states act, the
 * others are refused with WrongJobState naming the state and write nothing; a call sent
 * twice with the same ARGV (its reply lost) answers the same and writes nothing more.
 */
import { describe, expect, it } from "vitest"
import { runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { wrapPayload } from "../../src/engine/model/Carrier.ts"
import { WrongJobState } from "../../src/engine/model/Errors.ts"
import type { Queue } from "../../src/index.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, sharedClients } from "../support/redis.ts"
import { jobInEveryState, STATES } from "./support.ts"

const name = queueNamer("ops-states")
const shared = sharedClients()

type Op = "promote" | "reschedule" | "retry" | "updatePayload"
const call = (queue: Queue<{ n: number }>, op: Op, id: string) =>
  op === "promote"
    ? queue.promote(id)
    : op === "reschedule"
      ? queue.reschedule(id, { delayMs: 5_000 })
      : op === "retry"
        ? queue.retry(id)
        : queue.updatePayload(id, { n: 99 })

/** The states each operation acts on, and the state the job is in after it. */
const allowed: Record<Op, Partial<Record<string, string>>> = {
  promote: { delayed: "waiting" },
  reschedule: { waiting: "delayed", delayed: "delayed" },
  retry: { completed: "waiting", cancelled: "waiting", dead: "waiting" },
  updatePayload: { waiting: "waiting", delayed: "delayed", dead: "dead" },
}

const cases = (Object.keys(allowed) as Op[]).flatMap((op) => STATES.map((state) => [op, state] as const))

describe("an operation on one job, in every state", () => {
  it.each(cases)("%s on a %s job", async (op, state) => {
    const q = name()
    const { queue, ids } = await jobInEveryState(shared.client, q)
    const id = ids[state]
    const after = allowed[op][state]
    if (after === undefined) {
      const before = await dumpQueue(shared.raw, q)
      const e = await call(queue, op, id).catch((x) => x)
      expect(e).toBeInstanceOf(WrongJobState)
      expect(e).toMatchObject({ state, operation: op, jobId: id })
      expect(e.message).toContain(`is ${state}`)
      expect(await dumpQueue(shared.raw, q)).toEqual(before)
      return
    }
    expect(await call(queue, op, id)).toBe(state)
    const info = await queue.getJob(id)
    expect(info?.state).toBe(after)
    if (op === "retry") expect(info).toMatchObject({ attempt: 1, failures: 0, lostLeases: 0 })
    if (op === "retry") expect(info).not.toHaveProperty("result")
    if (op === "updatePayload") expect(info?.payload).toEqual({ n: 99 })
  })

  it.each(["promote", "reschedule", "retry", "updatePayload"] as const)(
    "%s of an unknown id is refused as unknown",
    async (op) => {
      const q = name()
      const { queue } = await jobInEveryState(shared.client, q)
      const before = await dumpQueue(shared.raw, q)
      await expect(call(queue, op, "no-such-job")).rejects.toMatchObject({ _tag: "WrongJobState", state: "unknown" })
      expect(await dumpQueue(shared.raw, q)).toEqual(before)
    },
  )
})

describe("a re-sent call (same ARGV) answers the same and acts once", () => {
  const resend = [
    ["promote", Scripts.promote, "delayed", {}],
    ["reschedule", Scripts.reschedule, "waiting", { delayMs: 5_000 }],
    ["job-retry", Scripts.jobRetry, "completed", {}],
    ["update-payload", Scripts.updatePayload, "dead", { payload: '{"n":5}' }],
  ] as const
  it.each(resend)("%s", async (_, script, state, extra) => {
    const q = name()
    const { keys, ids } = await jobInEveryState(shared.client, q)
    const input = { requestId: `req-${q}`, id: ids[state], ...extra }
    const first = await run(runScript(shared.client, keys, script as typeof Scripts.promote, input))
    const once = await dumpQueue(shared.raw, q)
    const again = await run(runScript(shared.client, keys, script as typeof Scripts.promote, input))
    expect(again).toEqual(first)
    expect(first).toEqual([1, state])
    expect(await dumpQueue(shared.raw, q)).toEqual(once)
  })

  it("a retried completed job that ran again is not retried a second time by the re-send", async () => {
    const q = name()
    const { keys, c, ids } = await jobInEveryState(shared.client, q)
    const input = { requestId: `req-${q}`, id: ids.completed }
    await run(runScript(shared.client, keys, Scripts.jobRetry, input))
    // the retried job waits behind the setup's waiting one: lease both
    const leased = (await run(c.reserve(2, 60_000, 0))).jobs.find((j) => j.id === ids.completed)!
    await run(c.complete([{ id: leased.id, token: leased.token, result: "8" }]))
    expect(await run(runScript(shared.client, keys, Scripts.jobRetry, input))).toEqual([1, "completed"])
    expect(await shared.raw.zscore(keys.done, ids.completed)).not.toBeNull()
  })
})

describe("a traced job (its creation context stored in front of its payload)", () => {
  it("keeps the context through updatePayload, and getJobs shows the payload without it", async () => {
    const q = name()
    const { queue, keys, ids } = await jobInEveryState(shared.client, q)
    const parent = { traceId: "a".repeat(32), spanId: "b".repeat(16), sampled: true }
    await shared.raw.hset(keys.data, ids.waiting, wrapPayload('{"n":1}', parent))
    await queue.updatePayload(ids.waiting, { n: 2 })
    expect(await shared.raw.hget(keys.data, ids.waiting)).toBe(wrapPayload('{"n":2}', parent))
    expect((await queue.getJobs("waiting")).jobs[0]?.payload).toEqual({ n: 2 })
  })
})
