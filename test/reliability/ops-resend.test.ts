/**
 * Operator calls whose reply is lost: the proxy drops Redis' replies, the call runs on
 * Redis, the connection is cut, and ioredis re-sends the call on its new connection. Each
 * call's receipt (its request id, lua/include/receipts.lua) makes the re-send answer what
 * the first run did, not "nothing done" (issue 29, G10); and a second re-send of the same
 * call, later, answers the same again and changes nothing.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { run } from "../support/jobs.ts"
import { proxyToSuiteRedis, type TcpProxy } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("rel-ops-resend")
let raw: Redis
let client: RedisClient
beforeAll(() => {
  raw = rawClient()
  client = connect(redisUrl())
})
afterAll(async () => {
  raw.disconnect()
  await client.close()
})

/** Run `call` with its reply dropped until `landed` sees it ran on Redis, then cut: ioredis re-sends it. */
const resent = async <A>(proxy: TcpProxy, call: () => Promise<A>, landed: () => Promise<boolean>) => {
  proxy.dropReplies()
  const pending = call().catch((e: unknown) => e)
  await until("the call ran on Redis", landed)
  proxy.cut()
  proxy.heal()
  return pending
}

/** A queue through the proxy and the same queue direct, with every script the test re-sends loaded (a NOSCRIPT reply would be dropped too). */
const setup = async () => {
  const q = name()
  const proxy = await proxyToSuiteRedis()
  const queue = useQueue<number>(q, { connection: proxy.url })
  const direct = useQueue<number>(q)
  await queue.cancel(await queue.add(0))
  await queue.changePriority(await queue.add(0), 1)
  await queue.pauseGroup("warm")
  await queue.resumeGroup("warm")
  await queue.unschedule("none")
  return { q, keys: queueKeys(q), proxy, queue, direct }
}

describe("an operator call re-sent after a lost reply answers what its first run did", () => {
  it("cancel of a waiting job answers 'waiting' (not undefined); the job is cancelled once", async () => {
    const { keys, proxy, queue, direct } = await setup()
    const id = await queue.add(1)
    const landed = async () => (await raw.zscore(keys.cancelled, id)) !== null
    expect(await resent(proxy, () => queue.cancel(id), landed)).toBe("waiting")
    expect((await direct.getJob(id))?.state).toBe("cancelled")
    expect((await direct.stats()).counters).toMatchObject({ cancelled: 2 })
  })

  it("pauseGroup and resumeGroup answer true (not false); the group is paused, then running", async () => {
    const { proxy, queue, direct } = await setup()
    const paused = async () => (await direct.groups()).groups.find((g) => g.group === "t")?.paused === true
    expect(await resent(proxy, () => queue.pauseGroup("t"), paused)).toBe(true)
    expect(await paused()).toBe(true)
    expect(
      await resent(
        proxy,
        () => queue.resumeGroup("t"),
        async () => !(await paused()),
      ),
    ).toBe(true)
    expect(await paused()).toBe(false)
  })

  it("unschedule answers true (not false); the schedule is gone", async () => {
    const { proxy, queue, direct } = await setup()
    await queue.schedule("s", { every: 60_000 }, { payload: 0 })
    const gone = async () => (await direct.schedules()).length === 0
    expect(await resent(proxy, () => queue.unschedule("s"), gone)).toBe(true)
    expect(await gone()).toBe(true)
  })

  it("changePriority answers the state it moved the job from, even when the job was leased before the re-send", async () => {
    const { keys, proxy, queue, direct } = await setup()
    const id = await queue.add(1)
    const pending = resent(
      proxy,
      () => queue.changePriority(id, 7),
      async () => {
        if ((await raw.hget(keys.priority, id)) !== "7") return false
        // the job is leased between the first run and the re-send (the known gap)
        const [job] = await direct.reserve()
        return job?.id === id
      },
    )
    expect(await pending).toBe("waiting")
    expect(await raw.zscore(keys.active, id)).not.toBeNull()
  })
})

describe("the same call sent again later (its request id kept) answers the same and changes nothing", () => {
  it("cancel, changePriority, group-pause and unschedule, each run twice with a state change between", async () => {
    const q = name()
    const keys = queueKeys(q)
    const direct = useQueue<number>(q)
    const a = await direct.add(1)
    const b = await direct.add(2)
    const cancel = { id: a, requestId: "req-cancel" }
    expect(await run(runScript(client, keys, Scripts.cancel, cancel))).toBe("waiting")
    const prio = { id: b, priority: 3, requestId: "req-prio" }
    expect(await run(runScript(client, keys, Scripts.changePriority, prio))).toEqual({ changed: true, was: "waiting" })
    const pause = { group: "t", pause: true, requestId: "req-pause" }
    expect(await run(runScript(client, keys, Scripts.groupPause, pause))).toBe(true)
    await direct.schedule("s", { every: 60_000 }, { payload: 0 })
    const unschedule = { name: "s", requestId: "req-unschedule" }
    expect(await run(runScript(client, keys, Scripts.unschedule, unschedule))).toBe(true)
    // later: b is leased, the group resumed, the schedule set again
    const [job] = await direct.reserve()
    expect(job?.id).toBe(b)
    await direct.resumeGroup("t")
    await direct.schedule("s", { every: 60_000 }, { payload: 0 })
    expect(await run(runScript(client, keys, Scripts.cancel, cancel))).toBe("waiting")
    expect(await run(runScript(client, keys, Scripts.changePriority, prio))).toEqual({ changed: true, was: "waiting" })
    expect(await run(runScript(client, keys, Scripts.groupPause, pause))).toBe(true)
    expect(await run(runScript(client, keys, Scripts.unschedule, unschedule))).toBe(true)
    // nothing changed by the second runs: b still leased, the group running, the schedule kept
    expect(await raw.zscore(keys.active, b)).not.toBeNull()
    expect((await direct.groups()).groups.find((g) => g.group === "t")?.paused ?? false).toBe(false)
    expect((await direct.schedules()).map((s) => s.name)).toEqual(["s"])
    expect((await direct.stats()).counters).toMatchObject({ cancelled: 1 })
  })
})
