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
 *    worker (`tree.10k.c16`), and 16 workers of one handler each (`tree.10k.w16`), from the
 *    add's start to the root's completion;
 * 5. bound: Redis CPU µs per child end (its run, its note, its parent's count) of a 1 × 100
 *    and a 1 × 10,000 flow, leaseq only: fan-in O(1) per child end when the two are alike.
 *
 *   node --conditions=leaseq-source bench/flows.ts <redis port> [rounds=5] [--only add,fanin,cost,tree,bound]
 *     [--before <path of another tree's src/index.ts>]
 *
 * `--before` runs that tree's leaseq too, as the library `before`, in the same rounds (a
 * change measured side by side with the tree before it). The add takes 5 flows per library
 * a round, interleaved. The Redis at `<port>` is FLUSHALLed.
 */
import { Queue as BullQueue, Worker as BullWorker, FlowProducer } from "bullmq"
import * as current from "../src/index.ts"
import { connect, flushAll, probe, scriptNames } from "./lib/redis.ts"
import { fmt, median, quantile, waitFor } from "./lib/stats.ts"
import { ROOT } from "./paths.ts"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const at = args.indexOf(name)
  return at >= 0 ? args.splice(at, 2)[1] : undefined
}
const only = option("--only")?.split(",") ?? ["add", "fanin", "cost", "tree", "bound"]
const beforePath = option("--before")
const [port = "6379", roundsArg = "5"] = args
const rounds = Number(roundsArg)
const url = `redis://127.0.0.1:${port}`
const connection = { host: "127.0.0.1", port: Number(port), maxRetriesPerRequest: null }
const admin = connect(url)
const names = await scriptNames(ROOT)
const payload = (n: number) => ({ n, s: "x".repeat(32) })
type Lib = "leaseq" | "bullmq" | "before"
const LIBS: ReadonlyArray<Lib> = beforePath ? ["leaseq", "bullmq", "before"] : ["leaseq", "bullmq"]
/** The leaseq of each leaseq library: this tree's, or the one `--before` names. */
const leaseqOf: Record<Exclude<Lib, "bullmq">, typeof current> = {
  leaseq: current,
  before: beforePath ? ((await import(beforePath)) as typeof current) : current,
}
const byLib = (): Record<Lib, number[]> => ({ leaseq: [], bullmq: [], before: [] })

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
    const order = r % 2 === 0 ? LIBS : [...LIBS].reverse()
    for (const lib of order) {
      await flushAll(admin)
      await body(lib, r)
    }
    process.stderr.write(`${what}: round ${r + 1}/${rounds}\n`)
  }
}

const rows: Array<{
  id: string
  leaseq: number
  bullmq: number
  before?: number
  unit: string
  better: "higher" | "lower"
}> = []
const report = (id: string, unit: string, better: "higher" | "lower", by: Record<Lib, number[]>) => {
  const row = { id, leaseq: median(by.leaseq), bullmq: median(by.bullmq), unit, better }
  const before = by.before.length > 0 ? median(by.before) : undefined
  rows.push(before === undefined ? row : { ...row, before })
  const gain = (x: number, y: number) => (better === "higher" ? x / y : y / x)
  const beside = (lib: Lib) => (by[lib].length > 0 ? `; ${lib} ${by[lib].map(fmt).join(" ")}` : "")
  console.log(
    `${id.padEnd(22)} leaseq ${fmt(row.leaseq).padStart(9)}  bullmq ${fmt(row.bullmq).padStart(9)} ${unit.padEnd(8)} leaseq ${gain(row.leaseq, row.bullmq).toFixed(2)}× better` +
      (before === undefined
        ? ""
        : `, before ${fmt(before)} (${gain(row.leaseq, before).toFixed(2)}× better than before)`) +
      `  (leaseq ${by.leaseq.map(fmt).join(" ")}${beside("bullmq")}${beside("before")})`,
  )
}

// 1. add 1 × 1,000: 5 flows a library a round, interleaved (one call is short: many samples)
if (only.includes("add")) {
  const by = byLib()
  const qs = {
    leaseq: new current.Queue("fa", { connection: url }),
    before: new leaseqOf.before.Queue("fc", { connection: url }),
  }
  const fp = new FlowProducer({ connection })
  const flow = leaseqFlow(1000)
  const bflow = bullFlow("fb", 1000)
  const once = (lib: Lib) => (lib === "bullmq" ? fp.add(bflow) : qs[lib].addFlow(flow))
  for (let r = 0; r < rounds; r++) {
    await flushAll(admin)
    for (const lib of LIBS) await once(lib) // scripts loaded, connected, after the FLUSHALL
    for (let k = 0; k < 5; k++) {
      for (const lib of (r * 5 + k) % 2 === 0 ? LIBS : [...LIBS].reverse()) {
        const t = performance.now()
        await once(lib)
        by[lib].push(1001 / ((performance.now() - t) / 1000))
      }
    }
    process.stderr.write(`add: round ${r + 1}/${rounds}\n`)
  }
  report("add.1x1000", "jobs/s", "higher", by)
  await qs.leaseq.close()
  await qs.before.close()
  await fp.close()
}

/** Run `flows` flows of 1 × `n` through one worker per queue; the parent's start minus its last child's completed event, per flow. */
const fanIn = async (lib: Lib, flows: number, n: number): Promise<number[]> => {
  const lat: number[] = []
  let lastChildDone = 0
  let parentStarted = 0
  let childrenDone = 0
  if (lib !== "bullmq") {
    const { Queue, Worker } = leaseqOf[lib]
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
  const p50 = byLib()
  const p99 = byLib()
  await alternate("fanin", async (lib) => {
    const lat = await fanIn(lib, 100, 10)
    p50[lib].push(quantile(lat, 0.5))
    p99[lib].push(quantile(lat, 0.99))
  })
  report("fanin.p50", "ms", "lower", p50)
  report("fanin.p99", "ms", "lower", p99)
}

/** What runFlow runs: the flow, and its handlers (`workers` workers of `conc` each). */
interface FlowRun {
  readonly flow: "1x1000" | "tree" | "1x100" | "1x10000"
  readonly workers: number
  readonly conc: number
  /**
   * Measure Redis (SLOWLOG, INFO) around the run; `afterAdd`: only the run, the flow added
   * to a paused queue and resumed inside the probe (leaseq libraries only).
   */
  readonly measure: false | "all" | "afterAdd"
}
const sizeOf = (flow: FlowRun["flow"]) =>
  flow === "tree" ? 10_000 : flow === "1x100" ? 101 : flow === "1x10000" ? 10_000 : 1001

/** Add a flow, run it to the end (all in queue `c`); resolves when every job completed. */
const runFlow = async (lib: Lib, run: FlowRun) => {
  const total = sizeOf(run.flow)
  let done = 0
  const t = { start: 0, end: 0 }
  let add: () => Promise<unknown>
  let close: () => Promise<void>
  let resume = async () => {}
  if (lib !== "bullmq") {
    const { Queue, Worker } = leaseqOf[lib]
    const q = new Queue("c", { connection: url })
    await q.setRetention({ completed: { count: 0 } })
    if (run.measure === "afterAdd") {
      await q.pause()
      resume = async () => void (await q.resume())
    }
    const ws = Array.from({ length: run.workers }, () => {
      const w = new Worker("c", () => undefined, { connection: url, concurrency: run.conc })
      w.on("completed", () => void done++)
      w.on("error", () => {})
      return w
    })
    for (const w of ws) await w.ready
    const body = run.flow === "tree" ? leaseqTree() : leaseqFlow(total - 1)
    add = () => q.addFlow(body)
    close = async () => {
      for (const w of ws) await w.close()
      await q.close()
    }
  } else {
    const fp = new FlowProducer({ connection })
    const ws = Array.from({ length: run.workers }, () => {
      const w = new BullWorker("c", async () => undefined, { connection, concurrency: run.conc })
      w.on("completed", () => void done++)
      return w
    })
    for (const w of ws) await w.waitUntilReady()
    await new BullQueue("c", { connection }).waitUntilReady()
    const body = run.flow === "tree" ? bullTree("c") : bullFlow("c", total - 1)
    add = () => fp.add(body)
    close = async () => {
      for (const w of ws) await w.close()
      await fp.close()
    }
  }
  const finish = async () => {
    await waitFor("flow", () => done === total, 300_000, 2)
    t.end = performance.now()
  }
  let server: Awaited<ReturnType<typeof probe>>["server"] | undefined
  t.start = performance.now()
  if (run.measure === "all")
    server = (
      await probe(admin, names, async () => {
        await add()
        await finish()
      })
    ).server
  else if (run.measure === "afterAdd") {
    await add()
    server = (
      await probe(admin, names, async () => {
        await resume()
        await finish()
      })
    ).server
  } else {
    await add()
    await finish()
  }
  await close()
  return { ms: t.end - t.start, server }
}

// 3. Redis µs per child
if (only.includes("cost")) {
  const us = byLib()
  const cpu = byLib()
  const cmds = byLib()
  await alternate("cost", async (lib) => {
    const { server } = await runFlow(lib, { flow: "1x1000", workers: 1, conc: 16, measure: "all" })
    us[lib].push(server!.sumUs / 1000)
    cpu[lib].push(server!.cpuUs / 1000)
    cmds[lib].push(server!.commands / 1000)
  })
  report("cost.redis-us/child", "µs", "lower", us)
  report("cost.cpu-us/child", "µs", "lower", cpu)
  report("cost.commands/child", "cmds", "lower", cmds)
}

// 4. a 3-level tree of 10,000 nodes, 16 handlers in one worker, then 16 workers of one
if (only.includes("tree")) {
  for (const [id, workers, conc] of [
    ["tree.10k.c16", 1, 16],
    ["tree.10k.w16", 16, 1],
  ] as const) {
    const wall = byLib()
    await alternate(id, async (lib) => {
      wall[lib].push((await runFlow(lib, { flow: "tree", workers, conc, measure: false })).ms / 1000)
    })
    report(id, "s", "lower", wall)
  }
}

// 5. fan-in bounded: Redis CPU per child end, 1 × 100 beside 1 × 10,000 (leaseq libraries only)
if (only.includes("bound")) {
  const small = byLib()
  const large = byLib()
  await alternate("bound", async (lib) => {
    if (lib === "bullmq") return
    for (const [flow, into] of [
      ["1x100", small],
      ["1x10000", large],
    ] as const) {
      const { server } = await runFlow(lib, { flow, workers: 1, conc: 16, measure: "afterAdd" })
      into[lib].push(server!.cpuUs / (sizeOf(flow) - 1))
    }
  })
  for (const lib of LIBS.filter((l) => l !== "bullmq")) {
    const [s1, s2] = [median(small[lib]), median(large[lib])]
    console.log(
      `bound.cpu-us/child-end ${lib.padEnd(7)} 1×100 ${fmt(s1)} µs, 1×10,000 ${fmt(s2)} µs: ×${(s2 / s1).toFixed(2)}  (${small[lib].map(fmt).join(" ")}; ${large[lib].map(fmt).join(" ")})`,
    )
  }
}

console.log(JSON.stringify({ rows }))
admin.disconnect()
process.exit(0)
