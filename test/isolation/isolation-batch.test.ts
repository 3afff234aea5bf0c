/**
 * The batch form with isolation (issue 32): a module whose default export is a batch
 * handler runs in a thread or a process with the in-process batch job shape (each job's
 * `complete`, `fail`, `progress`, `signal`); each job keeps its own outcome; a crash fails
 * every open job of the batch one attempt each; a cancel or a timeout ends its job at once,
 * and the thread (process) is stopped once no job of the batch is left open. Real Redis.
 */
import { describe, expect, it } from "vitest"
import { HandlerCrashed, JobTimedOut, Worker, type WorkerOptions } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("isolation-batch")
const BATCH = new URL("./fixtures/batch.ts", import.meta.url)

type Options = Omit<WorkerOptions, "batch"> & { readonly batch: { size: number; waitMs?: number } }

/** A batch worker of the fixture module, closed after the test, and what it told, in order. */
const useBatchWorker = (queue: string, isolation: "thread" | "process", options: Options) => {
  const worker = new Worker(queue, BATCH, { connection: redisUrl(), ...options, isolation })
  onCleanup(() => worker.close())
  const seen: Array<{ event: string; id: string; value?: unknown }> = []
  worker.on("completed", (job, result) => seen.push({ event: "completed", id: job.id, value: result }))
  worker.on("failed", (job, error) => seen.push({ event: "failed", id: job.id, value: error }))
  worker.on("cancelled", (job) => seen.push({ event: "cancelled", id: job.id }))
  worker.on("lease-lost", (job) => seen.push({ event: "lease-lost", id: job.id }))
  return { worker, seen }
}

const of = (seen: Array<{ event: string; id: string }>, event: string) =>
  seen.filter((s) => s.event === event).map((s) => s.id)

describe.each(["thread", "process"] as const)("isolation %s, batch", (isolation) => {
  it("the module gets the whole batch with the in-process job shape; each job keeps its own outcome", async () => {
    const q = name(`shape-${isolation}`)
    const queue = useQueue(q)
    const [one, two, refused, quiet] = await queue.addBulk([
      { payload: { mode: "double", n: 1 } },
      { payload: { mode: "double", n: 2 } },
      { payload: { mode: "fail" }, options: { maxAttempts: 1 } },
      { payload: { mode: "progress" } },
    ])
    const { worker, seen } = useBatchWorker(q, isolation, { batch: { size: 4, waitMs: 5_000 } })
    await worker.ready
    await until("the four jobs to end", () => seen.length === 4)
    const byId = new Map(seen.map((s) => [s.id, s]))
    expect(byId.get(one!)).toMatchObject({ event: "completed", value: { doubled: 2, size: 4 } })
    expect(byId.get(two!)).toMatchObject({ event: "completed", value: { doubled: 4, size: 4 } })
    expect(byId.get(quiet!)).toEqual({ event: "completed", id: quiet, value: undefined })
    expect(byId.get(refused!)?.event).toBe("failed")
    expect(String((byId.get(refused!)!.value as Error).message)).toBe(`refused ${refused}`)
    expect(await queue.getJob(quiet!)).toMatchObject({ state: "completed", progress: { of: quiet } })
    expect(await queue.getJob(refused!)).toMatchObject({ state: "dead", attempt: 1 })
  })

  it("a crash fails every open job of the batch, one attempt each; the next batch runs on a replacement", async () => {
    const q = name(`crash-${isolation}`)
    const queue = useQueue(q)
    const ids = await queue.addBulk([
      { payload: { mode: "crash" }, options: { maxAttempts: 1 } },
      { payload: { mode: "wait" }, options: { maxAttempts: 1 } },
    ])
    const { worker, seen } = useBatchWorker(q, isolation, { batch: { size: 2, waitMs: 5_000 } })
    await worker.ready
    await until("both jobs to fail", () => of(seen, "failed").length === 2)
    for (const id of ids) {
      const failure = seen.find((s) => s.id === id)?.value as HandlerCrashed
      expect(failure).toBeInstanceOf(HandlerCrashed)
      expect(failure).toMatchObject({ jobId: id, reason: "crashed", isolation, exitCode: 3 })
      expect(await queue.getJob(id)).toMatchObject({ state: "dead", attempt: 1, failures: 1 })
    }
    const [next] = await queue.addBulk([{ payload: { mode: "double", n: 5 } }, { payload: { mode: "wait" } }])
    await until("the next batch to complete", () => of(seen, "completed").length === 2)
    expect(seen.find((s) => s.id === next)?.value).toEqual({ doubled: 10, size: 2 })
  })

  it("a timeout ends each job of a batch that never yields, then its member is stopped; the next batch runs", async () => {
    const q = name(`timeout-${isolation}`)
    const queue = useQueue(q)
    const stuck = await queue.addBulk(
      [0, 1].map(() => ({ payload: { mode: "spin" }, options: { maxAttempts: 1, timeoutMs: 300 } })),
    )
    const { worker, seen } = useBatchWorker(q, isolation, { batch: { size: 2, waitMs: 5_000 } })
    await worker.ready
    await until("both stuck jobs to fail", () => of(seen, "failed").length === 2)
    expect(seen.map((s) => s.value)).toEqual([expect.any(JobTimedOut), expect.any(JobTimedOut)])
    expect(of(seen, "failed").sort()).toEqual([...stuck].sort())
    await queue.addBulk([{ payload: { mode: "double", n: 1 } }, { payload: { mode: "wait" } }])
    await until("the next batch to complete", () => of(seen, "completed").length === 2)
  })

  it("a cancel ends its job at once, the others of the batch keep what they settled; the member is stopped then", async () => {
    const q = name(`cancel-${isolation}`)
    const queue = useQueue(q)
    const [spinning, doubled] = await queue.addBulk([
      { payload: { mode: "spin" } },
      { payload: { mode: "double", n: 4 } },
    ])
    // the cancel is told by a heartbeat (every leaseMs / 3)
    const { worker, seen } = useBatchWorker(q, isolation, { batch: { size: 2, waitMs: 5_000 }, leaseMs: 1500 })
    await worker.ready
    await until("the settled job to complete", () => of(seen, "completed").length === 1)
    expect(seen).toEqual([{ event: "completed", id: doubled, value: { doubled: 8, size: 2 } }])
    await queue.cancel(spinning!)
    await until("the cancel told", () => of(seen, "cancelled").length === 1)
    // the spinning member was stopped (no job of its batch was left open) and replaced
    await queue.addBulk([{ payload: { mode: "double", n: 1 } }, { payload: { mode: "wait" } }])
    await until("the next batch to complete", () => of(seen, "completed").length === 3)
    expect(of(seen, "cancelled")).toEqual([spinning])
    expect(of(seen, "lease-lost")).toEqual([])
  })
})
