/**
 * Handlers run off the worker's thread (`isolation: "thread" | "process"`, issue 32),
 * against real Redis: a handler that blocks its own thread keeps its lease (heartbeats
 * stay in the worker's thread); a timeout or a cancel stops it (the thread is terminated,
 * the process killed) and the pool runs the next job on a replacement; each kind of
 * crash fails one attempt as `HandlerCrashed`; a module that does not load is reported
 * once; a SIGKILLed worker leaves no child process behind.
 */
import { readFileSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import {
  HandlerCrashed,
  HandlerModuleFailed,
  InvalidOptions,
  InvalidPayload,
  JobTimedOut,
  Worker,
  type WorkerOptions,
} from "../../src/index.ts"
import { startChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("isolation")
const raw = rawClient()
afterAll(() => raw.quit())

const fixture = (file: string) => new URL(`./fixtures/${file}`, import.meta.url)

/** An isolated worker on the suite's Redis, closed after the test. */
const useIsolated = (queue: string, file: string, options: WorkerOptions & { isolation: "thread" | "process" }) => {
  const worker = new Worker(queue, fixture(file), { connection: redisUrl(), ...options })
  onCleanup(() => worker.close())
  return worker
}

/** What a worker told, in order. */
const record = (worker: Worker) => {
  const seen: Array<{ event: string; id: string; error?: unknown }> = []
  worker.on("completed", (job) => seen.push({ event: "completed", id: job.id }))
  worker.on("failed", (job, error) => seen.push({ event: "failed", id: job.id, error }))
  worker.on("lease-lost", (job) => seen.push({ event: "lease-lost", id: job.id }))
  worker.on("cancelled", (job) => seen.push({ event: "cancelled", id: job.id }))
  worker.on("dead", (job, reason) => seen.push({ event: `dead:${reason}`, id: job.id }))
  return seen
}

describe.each(["thread", "process"] as const)("isolation: %s", (isolation) => {
  // a 1 s lease: with 500 ms the parent, starved of CPU by the whole suite, once lost it
  it("a handler that blocks its thread for three leases keeps its lease and completes once", async () => {
    const q = name(`spin-${isolation}`)
    const queue = useQueue(q)
    const worker = useIsolated(q, "spin.ts", { isolation, leaseMs: 1000, concurrency: 1 })
    const seen = record(worker)
    await worker.ready
    const id = await queue.add({ ms: 3000 })
    await until("the spinning job to complete", () => seen.some((s) => s.event === "completed"))
    expect(seen).toEqual([{ event: "completed", id }])
    expect(await raw.exists(`leaseq:{${q}}:active`)).toBe(0)
  })

  it("a timeout stops a handler that never yields; the next job runs on its replacement", async () => {
    const q = name(`timeout-${isolation}`)
    const queue = useQueue(q)
    const worker = useIsolated(q, "spin.ts", { isolation, concurrency: 1 })
    const seen = record(worker)
    await worker.ready
    // the next job has no timeout: it may wait for the replacement to load
    const stuck = await queue.add({ forever: true }, { maxAttempts: 1, timeoutMs: 200 })
    const next = await queue.add({ ms: 0 })
    await until("the next job to complete", () => seen.some((s) => s.event === "completed"))
    expect(seen.map((s) => `${s.event} ${s.id}`)).toEqual([
      `failed ${stuck}`,
      `dead:timeout ${stuck}`,
      `completed ${next}`,
    ])
    expect(seen[0]!.error).toBeInstanceOf(JobTimedOut)
  })

  it("a cancel stops a handler that never yields; the next job runs on its replacement", async () => {
    const q = name(`cancel-${isolation}`)
    const queue = useQueue(q)
    // the cancel reaches the worker with its next heartbeat (every leaseMs / 3)
    const worker = useIsolated(q, "spin.ts", { isolation, concurrency: 1, leaseMs: 1500 })
    const seen = record(worker)
    await worker.ready
    const stuck = await queue.add({ forever: true })
    // leased (active) is not yet running: the worker must hold it before the test acts on it
    await until("the stuck job to run", () => worker.running === 1)
    await queue.cancel(stuck)
    const next = await queue.add({ ms: 0 })
    await until("the next job to complete", () => seen.some((s) => s.event === "completed"))
    expect(seen.map((s) => `${s.event} ${s.id}`)).toEqual([`cancelled ${stuck}`, `completed ${next}`])
  })

  it("a self-fenced lease (Redis cut off) stops the handler; the next job runs on its replacement", async () => {
    const q = name(`fence-${isolation}`)
    const queue = useQueue(q)
    const proxy = await proxyToSuiteRedis()
    const worker = useIsolated(q, "spin.ts", { isolation, concurrency: 1, leaseMs: 1000, connection: proxy.url })
    const seen = record(worker)
    worker.on("error", () => undefined) // the cut connections are reported
    await worker.ready
    const stuck = await queue.add({ forever: true }, { maxAttempts: 1 })
    // leased (active) is not yet running: the worker must hold it before the test acts on it
    await until("the stuck job to run", () => worker.running === 1)
    proxy.cut()
    await until("the lease self-fenced", () => seen.some((s) => s.event === "lease-lost"))
    proxy.heal()
    const next = await queue.add({ ms: 0 })
    await until("the next job to complete", () => seen.some((s) => s.event === "completed"))
    expect(seen.filter((s) => s.id === next || s.event === "lease-lost").map((s) => `${s.event} ${s.id}`)).toEqual([
      `lease-lost ${stuck}`,
      `completed ${next}`,
    ])
  })

  it("close past its grace stops a handler that ignores its signal; its job is released, attempts unchanged", async () => {
    const q = name(`close-${isolation}`)
    const queue = useQueue(q)
    const worker = useIsolated(q, "spin.ts", { isolation, shutdownGraceMs: 100, shutdownAbortGraceMs: 400 })
    const seen = record(worker)
    await worker.ready
    const stuck = await queue.add({ forever: true })
    // leased (active) is not yet running: the worker must hold it before the test acts on it
    await until("the stuck job to run", () => worker.running === 1)
    await worker.close()
    expect(worker.state).toBe("closed")
    expect(await queue.getJob(stuck)).toMatchObject({ state: "waiting", attempt: 1, failures: 0, lostLeases: 0 })
    expect(seen).toEqual([])
  })

  const crashes = [
    { mode: "uncaught", expect: { exitCode: 1 } },
    { mode: "exit", expect: { exitCode: 7 } },
    ...(isolation === "process" ? [{ mode: "kill", expect: { signal: "SIGKILL" } }] : []),
    ...(isolation === "thread" ? [{ mode: "oom", expect: {} }] : []),
  ]
  it.each(crashes)("a crash ($mode) fails that one attempt as crashed; the next job runs", async (c) => {
    const q = name(`crash-${c.mode}-${isolation}`)
    const queue = useQueue(q)
    const limits = c.mode === "oom" ? { resourceLimits: { maxOldGenerationSizeMb: 32 } } : {}
    const worker = useIsolated(q, "crash.ts", { isolation, concurrency: 1, ...limits })
    const seen = record(worker)
    await worker.ready
    const crashing = await queue.add({ mode: c.mode }, { maxAttempts: 1 })
    const next = await queue.add({ mode: "ok" })
    await until("the next job to complete", () => seen.some((s) => s.event === "completed"))
    expect(seen.map((s) => `${s.event} ${s.id}`)).toEqual([
      `failed ${crashing}`,
      `dead:failed ${crashing}`,
      `completed ${next}`,
    ])
    const error = seen[0]!.error as HandlerCrashed
    expect(error).toBeInstanceOf(HandlerCrashed)
    expect(error).toMatchObject({ reason: "crashed", isolation, ...c.expect })
    const stored = await queue.getJob(crashing)
    expect(JSON.stringify(stored?.error)).toContain("crashed")
  })

  it("a module that fails to load is reported once: ready rejects, one error event, state failed", async () => {
    for (const file of ["load-fails.ts", "no-default.ts"]) {
      const worker = useIsolated(name(`load-${isolation}`), file, { isolation, concurrency: 3 })
      const errors: unknown[] = []
      worker.on("error", (e) => errors.push(e))
      const failure = await worker.ready.then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(failure).toBeInstanceOf(HandlerModuleFailed)
      expect(String((failure as Error).message)).toContain(file)
      await until("the error event", () => errors.length > 0)
      expect(errors).toEqual([failure])
      expect(worker.state).toBe("failed")
    }
  })

  it("payloads and results cross checked: progress reaches the store, a result JSON cannot keep is refused naming its path", async () => {
    const q = name(`data-${isolation}`)
    const queue = useQueue(q)
    const echo = useIsolated(q, "echo.ts", { isolation, concurrency: 1 })
    const results: unknown[] = []
    echo.on("completed", (_job, result) => results.push(result))
    await echo.ready
    await queue.add({ n: 21 })
    await until("the echo job to complete", () => results.length > 0)
    expect(results[0]).toMatchObject({ doubled: 42 })
    await echo.close()

    // progress reported before the handler blocks its thread is stored while it runs
    const spin = useIsolated(q, "spin.ts", { isolation, concurrency: 1 })
    await spin.ready
    const spinning = await queue.add({ ms: 3000, progress: { step: 1 } })
    await until(
      "the progress stored",
      async () => JSON.stringify((await queue.getJob(spinning))?.progress) === `{"step":1}`,
    )
    await spin.close()

    const crash = useIsolated(q, "crash.ts", { isolation, concurrency: 1 })
    const failures: unknown[] = []
    crash.on("failed", (_job, error) => failures.push(error))
    await crash.ready
    await queue.add({ mode: "bad-result" }, { maxAttempts: 1 })
    await queue.add({ mode: "bad-progress" }, { maxAttempts: 1 })
    await until("the bad result and progress to fail", () => failures.length > 1)
    expect(failures[0]).toBeInstanceOf(InvalidPayload)
    expect((failures[0] as InvalidPayload).field).toBe("result")
    expect((failures[0] as InvalidPayload).reason).toContain("nested.f")
    expect(failures[1]).toBeInstanceOf(InvalidOptions)
    expect((failures[1] as InvalidOptions).field).toBe("progress")
  })
})

describe("isolation: options", () => {
  it("refuses a module without isolation, a function with it, and a missing file, naming the field", () => {
    const q = name("options")
    const connection = redisUrl()
    expect(() => new Worker(q, fixture("echo.ts"), { connection } as never)).toThrow(InvalidOptions)
    expect(() => new Worker(q, (() => 1) as never, { connection, isolation: "thread" })).toThrow(/handler/)
    expect(() => new Worker(q, fixture("missing.ts"), { connection, isolation: "thread" })).toThrow(/no such file/)
    expect(() => new Worker(q, fixture("echo.ts"), { connection, isolation: "fiber" as never })).toThrow(/isolation/)
  })
})

describe("isolation: SIGKILL of the worker", () => {
  it("leaves no child process behind, even while the children block their threads", async () => {
    const q = name("orphans")
    const queue = useQueue(q)
    const parent = startChild(new URL("./fixtures/parent.ts", import.meta.url).pathname, [q], { REDIS_URL: redisUrl() })
    await parent.waitFor((l) => l === "ready", "the worker ready")
    await queue.addBulk([{ payload: { forever: true, say: true } }, { payload: { forever: true, say: true } }])
    const first = await parent.waitFor((l) => l.startsWith("spinning"), "a child spinning")
    const second = await parent.waitFor((l) => l.startsWith("spinning") && l !== first.text, "both children spinning")
    const pids = [first.text, second.text].map((l) => Number(l.split(" ")[1]))
    expect(pids.every((pid) => alive(pid))).toBe(true)
    await parent.stop("SIGKILL")
    await until("every child process to be gone", () => pids.every((pid) => !alive(pid)))
  })
})

/** The process runs (a zombie, dead but not yet reaped by whoever adopted it, does not). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}
