/**
 * Call deadlines (callTimeoutMs) share one timer set for the earliest of them: a short
 * deadline still ends its call on time while calls with long deadlines are in flight on
 * other queues, several calls past their deadline all end, and a finished call leaves
 * nothing that keeps the process alive.
 *
 * The only time limits here are the calls' own deadlines and the test's hang detector.
 */
import { join } from "node:path"
import type { Redis } from "ioredis"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { OutcomeUnknown } from "../../src/index.ts"
import { ROOT, startChild } from "../support/child.ts"
import { TcpProxy } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("rel-deadlines")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** Cleanups registered as things are made; run (last made, first closed) before the leak check. */
const cleanups: Array<() => unknown> = []
const onTestFinished = (cleanup: () => unknown): void => {
  cleanups.push(cleanup)
}
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A proxy in front of the suite's Redis, closed when the test ends. */
const startProxy = async (): Promise<TcpProxy> => {
  const url = new URL(redisUrl())
  const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 6379) })
  onTestFinished(() => proxy.close())
  return proxy
}

/** The error `p` rejects with (a resolution fails the test). */
const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    (v) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(v)}`)
    },
    (e: unknown) => e,
  )

describe("call deadlines share one timer", () => {
  it("a 500 ms call ends on time while another queue's one-hour call is in flight; all calls past it end", async () => {
    const slowProxy = await startProxy()
    const slow = useQueue(name(), { connection: slowProxy.url, callTimeoutMs: 3_600_000 })
    await slow.add({ warm: true })
    slowProxy.dropReplies()
    // in flight for an hour (until the queue closes): its deadline is set first
    const slowCall = rejection(slow.add({ n: 0 }))

    const fastProxy = await startProxy()
    const fast = useQueue(name(), { connection: fastProxy.url, callTimeoutMs: 500 })
    await fast.add({ warm: true })
    fastProxy.dropReplies()
    // three calls: one script call for the first add, one for the two batched behind it, one addBulk
    const errors = await Promise.all([
      rejection(fast.add({ n: 1 })),
      rejection(fast.add({ n: 2 })),
      rejection(fast.add({ n: 3 })),
      rejection(fast.addBulk([{ payload: { n: 4 } }])),
    ])
    for (const e of errors) expect(e).toBeInstanceOf(OutcomeUnknown)
    expect(errors.map((e) => (e as OutcomeUnknown).jobIds?.length)).toEqual([1, 1, 1, 1])

    await slow.close()
    // the hour-long call ends when its connection does, as one whose outcome is unknown
    expect(await slowCall).toBeInstanceOf(OutcomeUnknown)
  })

  it("a producer that added and closed exits by itself (a one-hour deadline left behind would hold it)", async () => {
    const queue = name()
    const child = startChild(join(ROOT, "test/fixtures/add-and-exit.ts"), [redisUrl(), queue])
    onTestFinished(() => child.stop())
    const added = await child.waitFor((l) => l.startsWith("added "), "the added line")
    expect(await child.ended).toEqual({ code: 0, signal: null })
    const id = added.text.slice("added ".length)
    const keys = await raw.keys(`leaseq:{${queue}}:wait`)
    expect(keys).toHaveLength(1)
    // the wait list holds the job's id (its payload is stored by id)
    expect(await raw.lrange(keys[0]!, 0, -1)).toContain(id)
  })
})
