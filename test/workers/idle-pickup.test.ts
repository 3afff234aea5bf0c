/**
 * An idle worker waits on the queue's marker with a reserve call sent right behind the
 * wait on the same connection (src/engine/calls/Marker.ts): Redis runs that reserve the moment
 * an add ends the wait, so the job is leased with no round trip in between. These tests
 * watch it happen on a real server (MONITOR shows which connection ran each call) and
 * check that a closing worker leaves nothing leased.
 */
import { describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Job, Worker } from "../../src/index.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { monitorOf } from "../support/monitor.ts"
import { TcpProxy } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("idle-pickup")

/** The address (`host:port`) of the one client blocked in BZPOPMIN on `marker`, once there is one. */
const blockedOn = async (raw: ReturnType<typeof rawClient>, before: ReadonlySet<string>): Promise<string> =>
  until("a worker blocked on the marker", async () => {
    const list = (await raw.client("LIST")) as string
    const blocked = list
      .split("\n")
      .filter((l) => / cmd=bzpopmin /.test(l) && / flags=b /.test(l))
      .map((l) => /(?:^| )addr=(\S+)/.exec(l)?.[1])
      .filter((a): a is string => a !== undefined && !before.has(a))
    return blocked.length === 1 ? blocked[0] : undefined
  })

/** Addresses of the clients blocked in BZPOPMIN now (other test files may have workers too). */
const blockedNow = async (raw: ReturnType<typeof rawClient>): Promise<Set<string>> => {
  const list = (await raw.client("LIST")) as string
  return new Set(
    list
      .split("\n")
      .filter((l) => / cmd=bzpopmin /.test(l))
      .map((l) => /(?:^| )addr=(\S+)/.exec(l)?.[1] ?? ""),
  )
}

/** A queue and a worker on it, once the worker is blocked on the marker (`waiter`: that connection's address). */
const idleWorker = async (
  handler: (job: Job<string>) => Promise<unknown> | unknown,
  listen: (w: Worker<string>) => void = () => {},
) => {
  const q = name()
  const raw = rawClient()
  onCleanup(() => raw.disconnect())
  const before = await blockedNow(raw)
  const queue = useQueue<string>(q)
  const worker = useWorker<string>(q, async (job) => handler(job), { concurrency: 1 })
  listen(worker)
  await worker.ready
  return { q, queue, worker, raw, waiter: await blockedOn(raw, before) }
}

describe("idle pickup", () => {
  it("a job added to an idle queue is leased by the reserve sent behind the worker's marker wait, on that connection", async () => {
    const done = deferred<string>()
    const { q, queue, waiter } = await idleWorker(
      (job) => job.payload,
      (w) => w.on("completed", (job) => done.resolve(job.id)),
    )

    // MONITOR names the connection that ran each command
    const monitor = await monitorOf(redisUrl()) // on once MONITOR answered, before the add
    const reserves: string[] = []
    monitor.on(({ args, source }) => {
      if (args[0]?.toLowerCase() === "evalsha" && args[1] === Scripts.reserve.sha && args.includes(queueKeys(q).wait))
        reserves.push(source)
    })
    const id = await queue.add("hello")
    expect(await done.promise).toBe(id)
    await until("the reserve seen by MONITOR", () => reserves.length > 0)
    expect(reserves[0]).toBe(waiter)
  })

  it("closing an idle worker leases nothing: the reserve behind its wait never runs", async () => {
    const { q, queue, worker, raw, waiter } = await idleWorker(async () => {})
    await worker.close()
    expect(await blockedNow(raw)).not.toContain(waiter)
    const id = await queue.add("after close")
    const info = await queue.getJob(id)
    expect(info?.state).toBe("waiting")
    expect(await raw.zcard(queueKeys(q).active)).toBe(0)
    expect(await raw.llen(queueKeys(q).wait)).toBe(1)
  })

  it("a job leased by the reserve behind the wait just as close tears that connection down is given back at once, unrun and uncharged", async () => {
    const q = name()
    const raw = rawClient()
    onCleanup(() => raw.disconnect())
    const url = new URL(redisUrl())
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 6379) })
    onCleanup(() => proxy.close())
    const ran: string[] = []
    const worker = useWorker<string>(q, (job) => void ran.push(job.id), {
      concurrency: 1,
      connection: proxy.url,
      sweep: false,
    })
    await worker.ready
    // the worker's marker connection, as Redis sees it (through the proxy): blocked in BZPOPMIN
    const blockingPort = await until("the worker blocked in BZPOPMIN", async () => {
      const ports = proxy.upstreamPorts()
      const line = String(await raw.client("LIST"))
        .split("\n")
        .find((l) => / cmd=bzpopmin /.test(l) && ports.includes(Number(/ addr=[^ ]*:(\d+) /.exec(l)?.[1])))
      return line === undefined ? undefined : Number(/ addr=[^ ]*:(\d+) /.exec(line)![1])
    })
    // Redis still runs what that connection already sent (the wait, then the reserve), but
    // no reply reaches the worker: as when close tears the connection down just after Redis ran both
    proxy.freeze([blockingPort])
    const queue = useQueue<string>(q)
    const id = await queue.add("leased as the worker closes")
    await until(
      "the job leased by the reserve behind the wait",
      async () => (await queue.getJob(id))?.state === "active",
    )

    await worker.close()
    const info = await queue.getJob(id)
    expect(info?.state).toBe("waiting")
    expect(info?.lostLeases).toBe(0)
    expect(info?.attempt).toBe(1)
    expect(ran).toEqual([])
    expect(await raw.zcard(queueKeys(q).active)).toBe(0)
  })
})
