/**
 * Flows beside BullMQ 6.7's FlowProducer (issue 31; bench/HISTORY.md, "Flows"), on one Redis
 * in one run, the libraries alternating within each round, medians over the rounds:
 *
 * 1. add: a flow of 1 parent × 1,000 children, jobs/s added (the call's wall time);
 * 2. fan-in: flows of 1 parent (queue A) × 10 children (queue B), one worker per queue,
 *    from the last child's `completed` event to the parent's handler start, p50/p99;
 * 3. cost: Redis µs per child of add + run + the parent's release and run (1 × 1,000, the
 *    SLOWLOG sum of the top-level calls, and the main thread's CPU from INFO cpu);
 * 4. tree: a 3-level tree of 10,000 nodes (1 + 99 + 9,900), 16 handlers at once in one
 *    worker, from the add's start to the root's completion.
 *
 *   node --conditions=leaseq-source bench/flows.ts <redis port> [rounds=5] [--only add,fanin,cost,tree]
 *
 * The Redis at `<port>` is FLUSHALLed.
 */
import { Queue as BullQueue, Worker as BullWorker, FlowProducer } from "bullmq"
import { Queue, Worker } from "../src/index.ts"
import { connect, flushAll, probe, scriptNames } from "./lib/redis.ts"
import { fmt, median, quantile, waitFor } from "./lib/stats.ts"
import { ROOT } from "./paths.ts"

const args = process.argv.slice(2)
const onlyAt = args.indexOf("--only")
const only = onlyAt >= 0 ? args.splice(onlyAt, 2)[1]!.split(",") : ["add", "fanin", "cost", "tree"]
const [port = "6379", roundsArg = "5"] = args
const rounds = Number(roundsArg)
const url = `redis://127.0.0.1:${port}`
const connection = { host: "127.0.0.1", port: Number(port), maxRetriesPerRequest: null }
const admin = connect(url)
const names = await scriptNames(ROOT)
const payload = (n: number) => ({ n, s: "x".repeat(32) })
const LIBS = ["leaseq", "bullmq"] as const
type Lib = (typeof LIBS)[number]

/** One flow of a parent and `n` children, as each library takes it. */
const leaseqFlow = (n: number, childQueue?: string) => ({
  payload: payload(0),
  children: Array.from({ length: n }, (_, i) => ({ payload: payload(i + 1), queue: childQueue })),
})
const bullFlow = (queue: string, n: number, childQueue = queue) => ({
  name: "p",
  queueName: queue,
  data: payload(0),
  opts: { removeOnComplete: true },
  children: Array.from({ length: n }, (_, i) => ({
    name: "c",
    queueName: childQueue,
    data: payload(i + 1),
    opts: { removeOnComplete: true },
  })),
})

/** A 3-level tree: a root, 99 parents, 100 children each (10,000 jobs). */
const leaseqTree = () => ({
  payload: payload(0),
  children: Array.from({ length: 99 }, (_, i) => ({
    payload: payload(i),
    children: Array.from({ length: 100 }, (_, j) => ({ payload: payload(j) })),
  })),
})
const bullTree = (queue: string) => ({
  name: "root",
  queueName: queue,
  data: payload(0),
  opts: { removeOnComplete: true },
  children: Array.from({ length: 99 }, (_, i) => ({
    name: "mid",
    queueName: queue,
    data: payload(i),
    opts: { removeOnComplete: true },
    children: Array.from({ length: 100 }, (_, j) => ({
      name: "leaf",
      queueName: queue,
      data: payload(j),
      opts: { removeOnComplete: true },
    })),
  })),
})

/** Runs `body` for each library in each round, alternating which goes first, on an emptied Redis. */
const alternate = async (what: string, body: (lib: Lib, round: number) => Promise<void>) => {
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? LIBS : ([...LIBS].reverse() as unknown as typeof LIBS)
    for (const lib of order) {
      await flushAll(admin)
      await body(lib, r)
    }
    process.stderr.write(`${what}: round ${r + 1}/${rounds}\n`)
  }
}

const rows: Array<{ id: string; leaseq: number; bullmq: number; unit: string; better: "higher" | "lower" }> = []
const report = (id: string, unit: string, better: "higher" | "lower", by: Record<Lib, number[]>) => {
  const row = { id, leaseq: median(by.leaseq), bullmq: median(by.bullmq), unit, better }
  rows.push(row)
  const ratio = better === "higher" ? row.leaseq / row.bullmq : row.bullmq / row.leaseq
  console.log(
    `${id.padEnd(22)} leaseq ${fmt(row.leaseq).padStart(9)}  bullmq ${fmt(row.bullmq).padStart(9)} ${unit.padEnd(8)} leaseq ${ratio.toFixed(2)}× better  (leaseq ${by.leaseq.map(fmt).join(" ")}; bullmq ${by.bullmq.map(fmt).join(" ")})`,
  )
}

// 1. add 1 × 1,000
if (only.includes("add")) {
  const by: Record<Lib, number[]> = { leaseq: [], bullmq: [] }
  const q = new Queue("fa", { connection: url })
  const fp = new FlowProducer({ connection })
  await q.stats()
  await fp.add(bullFlow("fb", 1)) // scripts loaded, connected
  const flow = leaseqFlow(1000)
  const bflow = bullFlow("fb", 1000)
  await alternate("add", async (lib) => {
    const t = performance.now()
    if (lib === "leaseq") await q.addFlow(flow)
    else await fp.add(bflow)
    by[lib].push(1001 / ((performance.now() - t) / 1000))
  })
  report("add.1x1000", "jobs/s", "higher", by)
  await q.close()
  await fp.close()
}

/** Run `flows` flows of 1 × `n` through one worker per queue; the parent's start minus its last child's completed event, per flow. */
const fanIn = async (lib: Lib, flows: number, n: number): Promise<number[]> => {
  const lat: number[] = []
  let lastChildDone = 0
  let parentStarted = 0
  let childrenDone = 0
  if (lib === "leaseq") {
    const q = new Queue("pa", { connection: url })
    await q.setRetention({ completed: { count: 0 } })
    await new Queue("pb", { connection: url }).setRetention({ completed: { count: 0 } })
    const parents = new Worker(
      "pa",
      () => {
        parentStarted = performance.now()
      },
      { connection: url, concurrency: 1 },
    )
    const children = new Worker("pb", () => undefined, { connection: url, concurrency: 10 })
    children.on("completed", () => {
      childrenDone++
      lastChildDone = performance.now()
    })
    parents.on("error", () => {})
    children.on("error", () => {})
    try {
      for (let f = 0; f < flows; f++) {
        parentStarted = 0
        childrenDone = 0
        await q.addFlow(leaseqFlow(n, "pb"))
        await waitFor("parent", () => parentStarted > 0 && childrenDone === n, 30_000, 1)
        lat.push(parentStarted - lastChildDone)
      }
    } finally {
      await parents.close()
      await children.close()
      await q.close()
    }
  } else {
    const fp = new FlowProducer({ connection })
    const parents = new BullWorker(
      "pa",
      async () => {
        parentStarted = performance.now()
      },
      { connection, concurrency: 1 },
    )
    const children = new BullWorker("pb", async () => undefined, { connection, concurrency: 10 })
    children.on("completed", () => {
      childrenDone++
      lastChildDone = performance.now()
    })
    try {
      for (let f = 0; f < flows; f++) {
        parentStarted = 0
        childrenDone = 0
        await fp.add(bullFlow("pa", n, "pb"))
        await waitFor("parent", () => parentStarted > 0 && childrenDone === n, 30_000, 1)
        lat.push(parentStarted - lastChildDone)
      }
    } finally {
      await parents.close()
      await children.close()
      await fp.close()
    }
  }
  return lat
}

// 2. fan-in latency
if (only.includes("fanin")) {
  const p50: Record<Lib, number[]> = { leaseq: [], bullmq: [] }
  const p99: Record<Lib, number[]> = { leaseq: [], bullmq: [] }
  await alternate("fanin", async (lib) => {
    const lat = await fanIn(lib, 100, 10)
    p50[lib].push(quantile(lat, 0.5))
    p99[lib].push(quantile(lat, 0.99))
  })
  report("fanin.p50", "ms", "lower", p50)
  report("fanin.p99", "ms", "lower", p99)
}

/** Add a flow, run it to the end (all in queue `c`, one worker at concurrency `conc`); resolves when the root completed. */
const runFlow = async (lib: Lib, flow: "1x1000" | "tree", conc: number, measure: boolean) => {
  const total = flow === "tree" ? 10_000 : 1001
  let done = 0
  const t = { start: 0, end: 0 }
  if (lib === "leaseq") {
    const q = new Queue("c", { connection: url })
    await q.setRetention({ completed: { count: 0 } })
    const w = new Worker("c", () => undefined, { connection: url, concurrency: conc })
    w.on("completed", () => void done++)
    w.on("error", () => {})
    await w.ready
    const body = flow === "tree" ? leaseqTree() : leaseqFlow(1000)
    const go = async () => {
      t.start = performance.now()
      await q.addFlow(body)
      await waitFor("flow", () => done === total, 300_000, 2)
      t.end = performance.now()
    }
    let server: Awaited<ReturnType<typeof probe>>["server"] | undefined
    if (measure) server = (await probe(admin, names, go)).server
    else await go()
    await w.close()
    await q.close()
    return { ms: t.end - t.start, server }
  }
  const fp = new FlowProducer({ connection })
  const w = new BullWorker("c", async () => undefined, { connection, concurrency: conc })
  w.on("completed", () => void done++)
  await w.waitUntilReady()
  await new BullQueue("c", { connection }).waitUntilReady()
  const body = flow === "tree" ? bullTree("c") : bullFlow("c", 1000)
  const go = async () => {
    t.start = performance.now()
    await fp.add(body)
    await waitFor("flow", () => done === total, 300_000, 2)
    t.end = performance.now()
  }
  let server: Awaited<ReturnType<typeof probe>>["server"] | undefined
  if (measure) server = (await probe(admin, names, go)).server
  else await go()
  await w.close()
  await fp.close()
  return { ms: t.end - t.start, server }
}

// 3. Redis µs per child
if (only.includes("cost")) {
  const us: Record<Lib, number[]> = { leaseq: [], bullmq: [] }
  const cpu: Record<Lib, number[]> = { leaseq: [], bullmq: [] }
  const cmds: Record<Lib, number[]> = { leaseq: [], bullmq: [] }
  await alternate("cost", async (lib) => {
    const { server } = await runFlow(lib, "1x1000", 16, true)
    us[lib].push(server!.sumUs / 1000)
    cpu[lib].push(server!.cpuUs / 1000)
    cmds[lib].push(server!.commands / 1000)
  })
  report("cost.redis-us/child", "µs", "lower", us)
  report("cost.cpu-us/child", "µs", "lower", cpu)
  report("cost.commands/child", "cmds", "lower", cmds)
}

// 4. a 3-level tree of 10,000 nodes, 16 handlers
if (only.includes("tree")) {
  const wall: Record<Lib, number[]> = { leaseq: [], bullmq: [] }
  await alternate("tree", async (lib) => {
    wall[lib].push((await runFlow(lib, "tree", 16, false)).ms / 1000)
  })
  report("tree.10k.c16", "s", "lower", wall)
}

console.log(JSON.stringify({ rows }))
admin.disconnect()
process.exit(0)
