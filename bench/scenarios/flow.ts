/**
 * flow.rate: the rate-limit run — a queue rate limit of { max: 100, perMs: 1000 },
 * 1,000 jobs waiting, 4 workers at concurrency 20 with a no-op handler: seconds from the
 * workers' start to the last completion (leaseq only: the peers' rate limits are per
 * worker or paid). 1,000 leases at 100 a window need 10 windows, so 9 s is the floor; the
 * target is 10.5 s. Each run also records the busiest 1,000 ms of the lease start times
 * (Redis clock), which must never pass 100.
 */
import type { Redis } from "ioredis"
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { fresh, QUEUE, type Section, withDeadline } from "../harness.ts"

type Lq = typeof import("../../src/index.ts")
const entry = new URL("../../src/index.ts", import.meta.url)
const JOBS = 1000
const WORKERS = 4

/** The most of the sorted times `ts` that fall in any 1,000 ms. */
const busiestWindow = (ts: ReadonlyArray<number>): number => {
  let most = 0
  for (let i = 0, j = 0; i < ts.length; i++) {
    while (ts[i]! - ts[j]! >= 1000) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

/**
 * One run: seconds from the workers' start to the 1,000th completion, and the busiest
 * window of the lease start times (the reserve script's own clock, read from each job's
 * holder entry by the handler: an event's stream id may be a ms later than its script's
 * clock, and the leases of a window all start at its opening).
 */
const rateRun = async (lq: Lq, url: string, admin: Redis): Promise<{ seconds: number; busiest: number }> => {
  const queue = new lq.Queue(QUEUE, { connection: url })
  const workers: Array<InstanceType<Lq["Worker"]>> = []
  try {
    await queue.setRateLimit({ max: 100, perMs: 1000 })
    await queue.addBulk(Array.from({ length: JOBS }, (_, n) => ({ payload: payload(n) })))
    let done = 0
    let finish: () => void = () => {}
    const finished = new Promise<void>((resolve) => {
      finish = resolve
    })
    const starts: number[] = []
    const holder = `leaseq:{${QUEUE}}:holder`
    const started = performance.now()
    for (let w = 0; w < WORKERS; w++) {
      const worker = new lq.Worker(
        QUEUE,
        async (job: { id: string }) => {
          starts.push(Number(((await admin.hget(holder, job.id)) ?? "").split("|")[1]))
        },
        { connection: url, concurrency: 20 },
      )
      worker.on("completed", () => {
        if (++done === JOBS) finish()
      })
      workers.push(worker)
    }
    await withDeadline("leaseq rate-limited drain", 120_000, finished)
    const seconds = (performance.now() - started) / 1000
    return { seconds, busiest: busiestWindow(starts.sort((a, b) => a - b)) }
  } finally {
    await Promise.all(workers.map((w) => w.close()))
    await queue.close()
  }
}

export const flowSection: Section = {
  name: "flow",
  async run(ctx: BenchContext) {
    if (!ctx.config.libs.includes("leaseq") || !wanted(ctx.config, "flow.rate")) return
    const lq = (await import(entry.href)) as Lq
    const s = ctx.results.scenario(
      "flow.rate",
      "rate limit 100 per 1000 ms, 1,000 jobs, 4 workers at concurrency 20 (s to drain)",
      "s",
      "lower",
    )
    ctx.log(s.title)
    for (let rep = 0; rep < Math.min(ctx.config.sizes.reps, 3); rep++) {
      await fresh(ctx)
      const { seconds, busiest } = await rateRun(lq, ctx.url, ctx.admin)
      ctx.results.record(s, "leaseq", seconds, { busiestWindow: busiest })
    }
    await fresh(ctx)
  },
}
