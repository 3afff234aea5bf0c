/**
 * `upgrade` (lua/upgrade.lua, src/engine/admin/Upgrade.ts): a queue of key layout 1 moved to
 * layout 2 while producers and workers of both versions run on it. The old side is the
 * frozen engine of layout 1 (test/fixtures/layout1, the compiled tree of 8c63e61), the new
 * side this tree. Each job records every run of its handler: 0 lost, 0 run twice, verify
 * clean; old clients are refused only once the move is done, naming both versions; a move
 * killed between its calls (a SIGKILLed `leaseq upgrade`, a caller that stops) resumes.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as LeaseQueue from "../../src/effect/LeaseQueue.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { type QueueKeys, queueKeys } from "../../src/engine/model/Keys.ts"
import { connect } from "../../src/redis/Client.ts"
import { ROOT, startChild } from "../support/child.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

/** The frozen layout 1 engine's Promise face (plain JS, no types shipped with it). */
interface OldQueue {
  add(payload: unknown): Promise<string>
  reserve(options: { count: number }): Promise<Array<{ id: string; token: number }>>
  addBulk(jobs: ReadonlyArray<{ payload: unknown }>): Promise<string[]>
  close(): Promise<void>
}
interface OldWorker {
  on(event: string, f: (x: unknown) => void): void
  close(): Promise<void>
}
interface OldLeaseq {
  readonly LAYOUT_VERSION: string
  readonly Queue: new (name: string, options: object) => OldQueue
  readonly Worker: new (
    name: string,
    handler: (job: { id: string; payload: { n: number } }) => Promise<void>,
    options: object,
  ) => OldWorker
}
const old = (await import(join(ROOT, "test/fixtures/layout1/dist/index.js"))) as OldLeaseq

const name = queueNamer("layout-upgrade")
const shared = sharedClients()
const connection = redisUrl()

const oldQueue = (q: string): OldQueue => {
  const queue = new old.Queue(q, { connection })
  onCleanup(() => queue.close())
  return queue
}
const oldWorker = (
  q: string,
  handler: (job: { id: string; payload: { n: number } }) => Promise<void>,
  options = {},
) => {
  const worker = new old.Worker(q, handler, { connection, ...options })
  onCleanup(() => worker.close())
  return worker
}

/** Every run of every job's handler, by the job's number, with the side that ran it. */
const runLog = () => {
  const runs = new Map<number, string[]>()
  return {
    runs,
    record: (n: number, side: string) => runs.set(n, [...(runs.get(n) ?? []), side]),
    twice: () => [...runs].filter(([, sides]) => sides.length !== 1),
    by: (side: string) => [...runs.values()].filter((s) => s.includes(side)).length,
  }
}

/** A holder entry in layout 2's form: `<workerId>|<token>|<startedAt>|<until>`. */
const NEW_FORM = /^[^|]*\|\d+\|\d+\|\d+$/
const OLD_FORM = /^[^|]*\|\d+\|\d+$/

const meta = (keys: QueueKeys, field: string) => shared.raw.hget(keys.meta, field)
const holdersOf = (keys: QueueKeys, ids: ReadonlyArray<string>) =>
  ids.length === 0 ? Promise.resolve([]) : shared.raw.hmget(keys.holder, ...ids)

/** Every job added ran once: nothing waits or is active, stats and verify agree. */
const expectAllRanOnce = async (q: string, added: number, log: ReturnType<typeof runLog>) => {
  const queue = useQueue(q)
  await until("every job ran", async () => {
    const s = await queue.stats()
    return log.runs.size === added && s.waiting === 0 && s.active === 0 && s.counters.completed === added
  })
  expect(log.twice()).toEqual([])
  const s = await queue.stats()
  expect(s.counters.completed).toBe(added)
  expect(s.dead).toBe(0)
  expect(s.layout).toBe("2")
  expect(await queue.verify()).toEqual({ violations: 0, jobs: expect.any(Number), lines: [] })
}

describe("upgrade: layout 1 to 2 with old and new clients running", () => {
  it("old and new producers and workers on one queue through the move: 0 lost, 0 run twice, verify clean; old clients refused once done", async () => {
    const q = name()
    const keys = queueKeys(q)
    const oldQ = oldQueue(q)
    const newQ = useQueue<{ n: number }>(q)
    const log = runLog()
    expect(old.LAYOUT_VERSION).toBe("1")
    await oldQ.addBulk(Array.from({ length: 100 }, (_, n) => ({ payload: { n } })))
    expect(await meta(keys, "layout")).toBe("1")

    // the old worker holds its first 10 jobs until the move has rewritten their leases
    const gate = deferred()
    const oldHeld: string[] = []
    const oldW = oldWorker(
      q,
      async (job) => {
        log.record(job.payload.n, "old")
        if (oldHeld.length < 10) {
          oldHeld.push(job.id)
          await gate.promise
        }
      },
      { concurrency: 10, prefetch: 0 },
    )
    useWorker<{ n: number }>(q, async (job) => void log.record(job.payload.n, "new"), { concurrency: 8 })
    // producers of both versions keep adding through the move
    let next = 100
    let added = 100
    let oldAdding = true
    let newAdding = true
    const produce = async (add: (n: number) => Promise<unknown>, going: () => boolean) => {
      while (going() && next < 5_000) {
        await add(next++)
        added++
      }
    }
    const oldProducing = produce(
      (n) => oldQ.add({ n }),
      () => oldAdding,
    )
    const newProducing = produce(
      (n) => newQ.add({ n }),
      () => newAdding,
    )

    await until("the old worker holds 10 jobs", () => oldHeld.length === 10)
    // layout 1 leases: the token in `lease`, the holder entry without it
    for (const h of await holdersOf(keys, oldHeld)) expect(h).toMatch(OLD_FORM)

    const upgrading = newQ.upgrade({ pollMs: 20 })
    await until("the copy pass rewrote the old worker's leases", async () =>
      (await holdersOf(keys, oldHeld)).every((h) => h !== null && NEW_FORM.test(h)),
    )
    expect(await meta(keys, "layout")).toBe("1")
    expect(await meta(keys, "upgrade")).toBe("copy")
    // a second caller gives up at once: a layout 1 worker is live, the layout stays 1
    const blocked = await newQ.upgrade({ waitMs: 0 })
    expect(blocked).toMatchObject({ done: false, layout: "1" })
    expect(blocked.waitingFor).toHaveLength(1)
    expect(await shared.raw.hget(keys.workers, blocked.waitingFor[0]!)).not.toMatch(/"layout"/)
    // the old worker's rewritten leases are still its own: it completes them (old complete, old extend)
    gate.resolve()
    const oldBefore = log.by("old")
    await until("the old worker went on working", () => log.by("old") >= oldBefore + 20)
    oldAdding = false
    await oldProducing
    await oldQ.add({ n: next++ }).then(() => added++) // still layout 1: accepted

    // the move ends once the old worker has left
    await oldW.close()
    const result = await upgrading
    expect(result).toMatchObject({ queue: q, done: true, layout: "2", waitingFor: [] })
    expect(await meta(keys, "layout")).toBe("2")
    expect(await meta(keys, "upgrade")).toBeNull()
    expect(await shared.raw.exists(keys.lease)).toBe(0)

    // an old client now gets a refusal naming both versions, and writes nothing
    const refused = await oldQ.add({ n: -1 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(refused).toMatchObject({ _tag: "LayoutMismatch", found: "2", expected: "1" })
    expect(String((refused as Error).message)).toMatch(/version "?2"?.*version "?1"?/)

    newAdding = false
    await newProducing
    await expectAllRanOnce(q, added, log)
    expect(log.by("old")).toBeGreaterThan(0)
    expect(log.by("new")).toBeGreaterThan(0)
  }, 120_000)
})

describe("upgrade: a move killed between its calls resumes", () => {
  it("a SIGKILLed `leaseq upgrade` mid-copy, a caller that stops mid-clean (after the flip): the next upgrade finishes, 0 lost, 0 run twice, verify clean", async () => {
    const q = name()
    const keys = queueKeys(q)
    const oldQ = oldQueue(q)
    const log = runLog()
    await oldQ.addBulk(Array.from({ length: 400 }, (_, n) => ({ payload: { n } })))
    // 200 leases of a new worker (both forms while layout 1), 150 of an old one (layout 1's
    // form): past the listpack sizes, so ZSCAN and HSCAN page them one by one
    const newGate = deferred()
    const oldGate = deferred()
    useWorker<{ n: number }>(
      q,
      async (job) => {
        log.record(job.payload.n, "new")
        await newGate.promise
      },
      { concurrency: 200, prefetch: 0 },
    )
    await until("the new worker holds 200", () => log.by("new") === 200)
    const oldW = oldWorker(
      q,
      async (job) => {
        log.record(job.payload.n, "old")
        await oldGate.promise
      },
      { concurrency: 150, prefetch: 0 },
    )
    await until("the old worker holds 150", () => log.by("old") === 150)
    expect(await shared.raw.hlen(keys.lease)).toBe(350)

    const cli = startChild(join(ROOT, "src/cli/main.ts"), ["upgrade", "--queue", q, "--page-size", "1"], {
      REDIS_URL: connection,
    })
    await until(
      "the copy pass under way",
      async () => (await meta(keys, "upgrade")) === "copy" && ((await meta(keys, "upgradeCursor")) ?? "0") !== "0",
      { everyMs: 5 },
    )
    await cli.stop("SIGKILL")
    expect(await meta(keys, "layout")).toBe("1")

    oldGate.resolve()
    await until("the old worker ran the rest", () => log.by("old") === 200)
    await oldW.close()

    // a caller that stops between calls after the flip, in the clean pass (as a process killed
    // there; `active` is past the listpack size, so ZSCAN pages it)
    const client = connect(connection)
    onCleanup(() => client.close())
    const steps = makeCommands(client, keys)
    for (let i = 0; i < 10_000; i++) {
      const step = await Effect.runPromise(steps.upgradeStep(1, false))
      if (step.kind === "step" && step.phase === "clean" && (await meta(keys, "upgradeCursor")) !== "0") break
      expect(step.kind).toBe("step")
    }
    expect(await meta(keys, "layout")).toBe("2")
    expect(await meta(keys, "upgrade")).toBe("clean")
    expect(await shared.raw.hlen(keys.lease)).toBe(200)

    const result = await useQueue(q).upgrade()
    expect(result).toMatchObject({ done: true, layout: "2" })
    expect(await shared.raw.exists(keys.lease)).toBe(0)
    expect(await meta(keys, "upgrade")).toBeNull()
    // the new worker's 200 leases, now only in their holder entries, complete
    newGate.resolve()
    await expectAllRanOnce(q, 400, log)
  }, 120_000)

  it("bad options are refused naming the field before anything is sent; a queue of layout 2 is done at once", async () => {
    const q = name()
    const queue = useQueue(q)
    await queue.add({ n: 1 })
    expect(await meta(queueKeys(q), "layout")).toBe("2")
    await expect(queue.upgrade({ pageSize: 0 })).rejects.toMatchObject({ _tag: "InvalidOptions", field: "pageSize" })
    await expect(queue.upgrade({ force: "yes" } as never)).rejects.toMatchObject({ field: "force" })
    expect(await queue.upgrade()).toMatchObject({ done: true, layout: "2", steps: 1, moved: 0 })
    expect(await meta(queueKeys(q), "upgrade")).toBeNull()
  })

  it("the Effect face moves a layout 1 queue the same", async () => {
    const q = name()
    const keys = queueKeys(q)
    await oldQueue(q).add({ n: 1 })
    expect(await meta(keys, "layout")).toBe("1")
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const lq = yield* LeaseQueue.make<{ n: number }>({ name: q, connection })
          return yield* lq.upgrade({ pageSize: 10 })
        }),
      ),
    )
    expect(result).toMatchObject({ done: true, layout: "2", waitingFor: [] })
    expect(await meta(keys, "layout")).toBe("2")
    expect(await meta(keys, "upgrade")).toBeNull()
  })

  it("during the move a lease still in layout 1's form is honoured by this version's calls", async () => {
    const q = name()
    const keys = queueKeys(q)
    const oldQ = oldQueue(q)
    await oldQ.add({ n: 1 })
    await oldQ.add({ n: 2 })
    const [a, b] = await oldQ.reserve({ count: 2 })
    const client = connect(connection)
    onCleanup(() => client.close())
    // one step: the copy pass (both leases rewritten) ends, no worker is registered: layout 2
    expect(await Effect.runPromise(makeCommands(client, keys).upgradeStep(500, false))).toMatchObject({
      kind: "step",
      phase: "clean",
    })
    expect(await meta(keys, "layout")).toBe("2")
    // b as a layout 1 worker would have taken it behind the copy pass: no token in its holder entry
    const entry = String(await shared.raw.hget(keys.holder, b!.id)).split("|")
    await shared.raw.hset(keys.holder, b!.id, [entry[0], entry[2], entry[3]].join("|"))
    expect(await shared.raw.hget(keys.lease, b!.id)).toBe(String(b!.token))
    const queue = useQueue(q)
    await queue.complete(b!.id, b!.token)
    await queue.complete(a!.id, a!.token)
    expect(await queue.upgrade()).toMatchObject({ done: true, layout: "2" })
    const s = await queue.stats()
    expect(s.counters).toMatchObject({ completed: 2, refused: 0 })
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })
})
