/**
 * Flows across a Redis crash (issue 31, "What must hold"): a dedicated redis-server with
 * `--appendonly yes --appendfsync always` is `kill -9`ed while workers (child processes) run
 * the children of many flows over two queues, then restarted on the same port and directory.
 * Afterwards every parent ran exactly once (no worker died and no lease ran out: leases are
 * longer than the downtime), none before each of its children returned, none is left
 * waiting, and verify is clean on both queues.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { type Child, startWorkerChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { report, size } from "../support/figures.ts"
import { queueNamer } from "../support/redis.ts"
import { tempDir } from "../support/tmp.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("rel-flows-crash")
const FLOWS = size(150, 1_000)
const AOF = ["--appendonly", "yes", "--appendfsync", "always"]

let tmp: ReturnType<typeof tempDir>
beforeAll(() => {
  tmp = tempDir("flows-aof")
})
afterAll(() => {
  tmp.remove()
})

/** Per job id: the epoch ms (the workers' clock, CHAOS_TIMES=1) of each `kind` line; `at`: the field holding it. */
const timesOf = (workers: ReadonlyArray<Child>, kind: string, at: number) => {
  const out = new Map<string, number[]>()
  const lines = workers.flatMap((w) => w.lines.map((l) => l.text.split(" ")))
  for (const parts of lines.filter((p) => p[0] === kind)) {
    out.set(parts[1]!, [...(out.get(parts[1]!) ?? []), Number(parts[at])])
  }
  return out
}

describe("flows across a Redis crash", () => {
  it("kill -9 of Redis (AOF, fsync always) mid-flow: every parent runs exactly once, none early, none stuck", async () => {
    const q = name()
    const q2 = name()
    const port = await freePort()
    let server: LocalRedis = await startRedisServer({ port, dir: tmp.dir, args: AOF })
    onCleanup(() => server.stop())
    const url = server.url
    const queue = useQueue<null>(q, { connection: url })
    const other = useQueue<null>(q2, { connection: url })
    for (const x of [queue, other]) await x.setRetention({ completed: { count: FLOWS * 10 } })
    // 50 adds at a time: with fsync always, the adds Redis runs in one turn share an fsync
    const flows: Array<{ parent: string; children: string[] }> = []
    for (let i = 0; i < FLOWS; i += 50) {
      const trees = await Promise.all(
        Array.from({ length: Math.min(50, FLOWS - i) }, () =>
          queue.addFlow({
            payload: null,
            children: [
              { payload: null },
              { payload: null },
              { payload: null, queue: q2 },
              { payload: null, queue: q2 },
            ],
          }),
        ),
      )
      flows.push(...trees.map((tree) => ({ parent: tree.id, children: tree.children.map((c) => c.id) })))
    }
    const options = { leaseMs: 30_000, concurrency: 8, sweep: { intervalMs: 500 } }
    const env = { CHAOS_TIMES: "1" }
    const workers = [
      startWorkerChild(url, q, "work:2", options, env),
      startWorkerChild(url, q, "work:2", options, env),
      startWorkerChild(url, q2, "work:2", options, env),
    ]
    await Promise.all(workers.map((w) => w.waitFor((l) => l === "ready", "ready")))
    const doneLines = () => workers.reduce((n, w) => n + w.lines.filter((l) => l.text.startsWith("done ")).length, 0)
    // mid-flow: some parents ran, most have not
    await until("a tenth of the jobs completed", () => doneLines() >= FLOWS / 2, { timeoutMs: 120_000 })

    server.process.kill("SIGKILL")
    await new Promise((r) => server.process.once("exit", r))
    const doneAtCrash = doneLines()
    server = await startRedisServer({ port, dir: tmp.dir, args: AOF })

    const s = await until(
      "every parent completed after the restart",
      async () => {
        const [a, b] = await Promise.all([queue.stats(), other.stats()])
        return a.counters.completed === FLOWS * 3 && b.counters.completed === FLOWS * 2 && a
      },
      { timeoutMs: size(120_000, 600_000), everyMs: 200 },
    )
    expect(s.waitingChildren).toBe(0)
    const started = timesOf(workers, "started", 4)
    const returned = timesOf(workers, "returned", 3)
    const twice = flows.filter((f) => started.get(f.parent)?.length !== 1)
    const early = flows.filter((f) =>
      f.children.some((c) => Math.min(...(returned.get(c) ?? [Number.POSITIVE_INFINITY])) > started.get(f.parent)![0]!),
    )
    expect(twice.map((f) => f.parent)).toEqual([])
    expect(early.map((f) => f.parent)).toEqual([])
    for (const f of flows.slice(0, 20)) {
      expect((await queue.getJob(f.parent))?.state).toBe("completed")
    }
    expect(await queue.verify()).toMatchObject({ violations: 0 })
    expect(await other.verify()).toMatchObject({ violations: 0 })
    const exits = await Promise.all(workers.map((w) => w.stop("SIGTERM")))
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0])
    report("flows-redis-crash", {
      flows: FLOWS,
      jobs: FLOWS * 5,
      doneAtCrash,
      twice: twice.length,
      early: early.length,
    })
  }, 900_000)
})
