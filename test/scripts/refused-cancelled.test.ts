import { describe, expect, it } from "vitest"
import { makeCommands, runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { setLeaseToken } from "../support/lease.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"

const name = queueNamer("refused-cancelled")
const shared = sharedClients()

/** A queue with two leased jobs: the first cancelled while it runs, the second's lease moved on (a new token). */
const leased = async () => {
  const keys = queueKeys(name())
  const c = makeCommands(shared.client, keys)
  await run(c.add([newJob(), newJob()]))
  const [cancelled, moved] = (await run(c.reserve(2, 60_000, 0))).jobs
  expect(await run(runScript(shared.client, keys, Scripts.cancel, cancelled!.id))).toBe("active")
  await setLeaseToken(shared.raw, keys, moved!.id, String(moved!.token + 1))
  const refused = async () => Number((await shared.raw.hget(keys.meta, "refused")) ?? 0)
  return { keys, c, cancelled: cancelled!, moved: moved!, refused }
}

describe("a cancelled job's late acknowledgement is refused but not counted in meta.refused", () => {
  it("complete: the cancelled job's refusal is not counted, the moved lease's is", async () => {
    const { c, cancelled, moved, refused } = await leased()
    expect(await run(c.complete([{ id: cancelled.id, token: cancelled.token }]))).toEqual([false])
    expect(await refused()).toBe(0)
    expect(await run(c.complete([{ id: cancelled.id, token: cancelled.token }, moved]))).toEqual([false, false])
    expect(await refused()).toBe(1)
  })

  it("fail: the cancelled job's refusal is not counted, the moved lease's is", async () => {
    const { c, cancelled, moved, refused } = await leased()
    const options = { delayMs: 0, error: '{"message":"late"}', mode: "retry" } as const
    expect(await run(c.fail({ id: cancelled.id, token: cancelled.token }, options))).toBe("lost")
    expect(await refused()).toBe(0)
    expect(await run(c.fail({ id: moved.id, token: moved.token }, options))).toBe("lost")
    expect(await refused()).toBe(1)
  })

  it("reserve's riders: the cancelled job's refusal is not counted, the moved lease's is", async () => {
    const { c, cancelled, moved, refused } = await leased()
    const r = await run(c.reserve(0, 60_000, 0, [{ id: cancelled.id, token: cancelled.token }]))
    expect(r.completed).toEqual([false])
    expect(await refused()).toBe(0)
    const both = await run(c.reserve(0, 60_000, 0, [{ id: cancelled.id, token: cancelled.token }, moved]))
    expect(both.completed).toEqual([false, false])
    expect(await refused()).toBe(1)
  })
})
