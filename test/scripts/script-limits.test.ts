import { describe, expect, it } from "vitest"
import { makeCommands, runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, sharedClients } from "../support/redis.ts"

const name = queueNamer("script-limits")
const shared = sharedClients()

/** A queue with `waiting` ready jobs, 2 delayed ones due now and one leased job (the rider). */
const filled = async (waiting: number) => {
  const keys = queueKeys(name())
  const c = makeCommands(shared.client, keys)
  for (let i = 0; i < waiting; i += 1000)
    await run(c.add(Array.from({ length: Math.min(1000, waiting - i) }, () => newJob())))
  await run(c.add([newJob({ delayMs: 1 }), newJob({ delayMs: 1 })]))
  const [held] = (await run(c.reserve(1, 60_000, 0))).jobs
  return { keys, c, held: held! }
}

/** The call fails with InvalidOptions naming `field` and `value`, and the queue is as it was. */
const refusedUnchanged = async (
  keys: ReturnType<typeof queueKeys>,
  call: () => Promise<unknown>,
  field: string,
  value: number,
) => {
  const before = await dumpQueue(shared.raw, keys.queue)
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(InvalidOptions)
  expect(error).toMatchObject({ field, value })
  expect((error as Error).message).toContain("from 0 to 1000")
  expect(await dumpQueue(shared.raw, keys.queue)).toEqual(before)
}

describe("F4: a script refuses an argument over its own limit before its first write", () => {
  it("reserve: a count over 1000 (with a rider and due delayed jobs) pops, completes and promotes nothing", async () => {
    const { keys, c, held } = await filled(5000)
    const ride = [{ id: held.id, token: held.token }]
    await refusedUnchanged(keys, () => run(c.reserve(5000, 60_000, 100, ride)), "reserve count", 5000)
    await refusedUnchanged(keys, () => run(c.reserve(-1, 60_000, 100, ride)), "reserve count", -1)
    await refusedUnchanged(keys, () => run(c.reserve(10, 60_000, 5000, ride)), "reserve promoteLimit", 5000)
    await refusedUnchanged(keys, () => run(c.reserve(10, 60_000, -1, ride)), "reserve promoteLimit", -1)
    // the limits themselves are taken: 1000 jobs, 1000 promotions, the rider completed
    const at = await run(c.reserve(1000, 60_000, 1000, ride))
    expect(at.completed).toEqual([true])
    expect(at.jobs).toHaveLength(1000)
    expect(await shared.raw.zcard(keys.delayed)).toBe(0)
  })

  it("reserve: more than 1000 riders are refused before any is completed", async () => {
    const { keys, held } = await filled(1)
    const riders = Array.from({ length: 1001 }, () => ({ id: held.id, token: held.token }))
    const input = { workerId: "w", requestId: "1", count: 1, leaseMs: 60_000, promoteLimit: 0, keep: 0 }
    await refusedUnchanged(
      keys,
      () => run(runScript(shared.client, keys, Scripts.reserve, { ...input, timeoutMs: 0, completes: riders })),
      "reserve m",
      1001,
    )
  })

  it("extend and complete: more than 1000 leases in one call are refused, the registry record not written (the command layer sends 500 a call)", async () => {
    const { keys, held } = await filled(1)
    const leases = Array.from({ length: 1001 }, () => ({ id: held.id, token: held.token }))
    const worker = { id: "w-limits", json: `{"id":"w-limits"}`, ttlMs: 60_000 }
    await refusedUnchanged(
      keys,
      () => run(runScript(shared.client, keys, Scripts.extend, { leases, leaseMs: 60_000, worker })),
      "extend leases",
      1001,
    )
    await refusedUnchanged(
      keys,
      () => run(runScript(shared.client, keys, Scripts.complete, { items: leases, keep: 0 })),
      "complete jobs",
      1001,
    )
    // the job is still leased, under the same token: extend and complete take it at the limit
    const c = makeCommands(shared.client, keys)
    expect(await run(c.extend([{ id: held.id, token: held.token }], 60_000))).toHaveLength(1)
    expect(await run(c.complete([{ id: held.id, token: held.token }]))).toEqual([true])
  })
})
