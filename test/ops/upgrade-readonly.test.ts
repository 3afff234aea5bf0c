/**
 * `upgrade` (lua/upgrade.lua) while its Redis answers READONLY (the fault a failover leaves:
 * a master demoted to a replica, its clients still connected). A dedicated redis-server holds
 * a queue of key layout 1 (written by the frozen layout 1 engine, test/fixtures/layout1) with
 * jobs waiting and leases held; a move under way (its copy pass begun) is cut by a demotion
 * (`REPLICAOF` an unused port: the server keeps its data and refuses every write). The next
 * `upgrade()` is refused as RedisUnavailable and changes nothing; once the server is a master
 * again the same call finishes the move, the leases held through it complete, every job runs
 * once and verify is clean.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect } from "../../src/redis/Client.ts"
import { ROOT } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { demote, ownRedis, rawOf } from "../support/own-redis.ts"
import { dumpQueue, queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

/** The frozen layout 1 engine's Promise face, the part used here. */
interface OldLeaseq {
  readonly Queue: new (
    name: string,
    options: object,
  ) => { addBulk(jobs: ReadonlyArray<{ payload: unknown }>): Promise<string[]>; close(): Promise<void> }
}
const old = (await import(join(ROOT, "test/fixtures/layout1/dist/index.js"))) as OldLeaseq

const name = queueNamer("upgrade-ro")
const JOBS = 400
// past the listpack size of a ZSET (128), so the copy pass pages `active` (ZSCAN) one by one
const HELD = 200

const own = ownRedis("upgrade-readonly")

describe("upgrade while Redis answers READONLY", () => {
  it("a move cut by a demotion is refused as RedisUnavailable, writing nothing, and finishes once the server is a master again", async () => {
    const raw = rawOf(own.server)
    const q = name()
    const keys = queueKeys(q)
    const connection = own.server.url
    const oldQ = new old.Queue(q, { connection })
    onCleanup(() => oldQ.close())
    await oldQ.addBulk(Array.from({ length: JOBS }, (_, n) => ({ payload: { n } })))
    expect(await raw.hget(keys.meta, "layout")).toBe("1")

    // leases held by this version through the move (a long lease: nothing expires meanwhile)
    const queue = useQueue<{ n: number }>(q, { connection })
    const held = await queue.reserve({ count: HELD, leaseMs: 120_000 })
    expect(held.length).toBe(HELD)

    // the move begun: its copy pass under way, one entry a call
    const client = connect(connection)
    onCleanup(() => client.close())
    const steps = makeCommands(client, keys)
    for (let i = 0; i < 3; i++) await Effect.runPromise(steps.upgradeStep(1, false))
    expect(await raw.hget(keys.meta, "upgrade")).toBe("copy")
    expect(await raw.hget(keys.meta, "upgradeCursor")).not.toBe("0")
    expect(await raw.hget(keys.meta, "layout")).toBe("1")

    const before = await dumpQueue(raw, q)
    await demote(raw, "upgrade-ro:probe")
    const refused = await queue.upgrade({ pageSize: 10 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect((refused as { _tag?: string } | undefined)?._tag).toBe("RedisUnavailable")
    await raw.call("REPLICAOF", "NO", "ONE")
    expect(await dumpQueue(raw, q)).toEqual(before)

    expect(await queue.upgrade({ pageSize: 10 })).toMatchObject({ done: true, layout: "2" })
    expect(await raw.hget(keys.meta, "layout")).toBe("2")
    expect(await raw.hget(keys.meta, "upgrade")).toBeNull()
    // the leases held through the move complete with their tokens (a refused one throws)
    for (const j of held) await queue.complete(j.id, j.token)
    expect((await queue.stats()).counters.completed).toBe(HELD)

    const runs = new Map<number, number>()
    useWorker<{ n: number }>(q, async (job) => void runs.set(job.payload.n, (runs.get(job.payload.n) ?? 0) + 1), {
      connection,
    })
    await until("every job ran", async () => (await queue.stats()).counters.completed === JOBS)
    const stats = await queue.stats()
    expect({ waiting: stats.waiting, active: stats.active, dead: stats.dead }).toEqual({
      waiting: 0,
      active: 0,
      dead: 0,
    })
    expect(runs.size).toBe(JOBS - HELD)
    expect([...runs.values()].every((n) => n === 1)).toBe(true)
    expect((await queue.verify()).lines).toEqual([])
  }, 60_000)
})
