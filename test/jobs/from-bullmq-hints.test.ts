/**
 * The way in from BullMQ tells the truth: every BullMQ option and call shape of
 * docs/from-bullmq.md's table, written as a BullMQ user would, goes through the real
 * Promise API on a real Redis. A refused one writes nothing to its queue, and its hint
 * names something that exists: each `queue.<method>(` it names is a method of a Queue,
 * and the call it leads to (the option renamed, the method called) is accepted. Every
 * leaseq method the table names exists too, and a BullMQ name added to the table without
 * a case here fails the coverage test.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Queue, Worker } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("from-bullmq")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** The rows of the "Concepts and options" table: BullMQ's column and leaseq's. */
const rows = (() => {
  const text = readFileSync(new URL("../../docs/from-bullmq.md", import.meta.url), "utf8")
  const table = text.slice(text.indexOf("| BullMQ | leaseq |"), text.indexOf("## What leaseq does differently"))
  return table
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| BullMQ |"))
    .map((line) => {
      const cells = line.split(/(?<!\\)\|/).map((c) => c.trim())
      return { bullmq: cells[1] ?? "", leaseq: cells[2] ?? "" }
    })
})()

/** The names of BullMQ's column: the leading word of each `code` span (`removeOnComplete: { … }` is removeOnComplete). */
const bullmqNames = [
  ...new Set(rows.flatMap((r) => [...r.bullmq.matchAll(/`(\w+)(?=[`:( ])/g)].map((m) => m[1]!))),
].sort()

type Handler = (job: unknown) => Promise<void>
const noop: Handler = async () => {}

interface Case {
  /** What the BullMQ user wrote. */
  readonly bullmq: ReadonlyArray<string>
  /** The call as BullMQ's user writes it, on queue `q` (a worker on `name`). */
  readonly refused: (q: Queue<unknown>, name: string) => unknown
  /** What the hint must say. */
  readonly hint: RegExp
  /** The call the hint leads to, which must be accepted (on another queue). */
  readonly fixed: (q: Queue<unknown>, name: string) => Promise<unknown>
}

const worker = (queue: string, options: object, handler: Handler = noop) =>
  useWorker(queue, handler as never, { sweep: false, ...options } as never)
const started = async (w: { readonly ready: Promise<void>; close(): Promise<unknown> }) => {
  await w.ready
  await w.close()
}

/** Every BullMQ name the table lists that leaseq refuses, as BullMQ's user writes it. */
const CASES: ReadonlyArray<Case> = [
  {
    bullmq: ["attempts"],
    refused: (q) => q.add({}, { attempts: 3 } as never),
    hint: /did you mean maxAttempts\?/,
    fixed: (q) => q.add({}, { maxAttempts: 3 }),
  },
  {
    bullmq: ["delay"],
    refused: (q) => q.add({}, { delay: 100 } as never),
    hint: /did you mean delayMs\?/,
    fixed: (q) => q.add({}, { delayMs: 100 }),
  },
  {
    bullmq: ["backoff"],
    refused: (q) => q.add({}, { backoff: { type: "exponential", delay: 1000 } } as never),
    hint: /options\.backoff\.delay = 1000: unknown option; did you mean delayMs\?/,
    fixed: (q) => q.add({}, { backoff: { type: "exponential", delayMs: 1000 } }),
  },
  {
    bullmq: ["jobId"],
    refused: (q) => q.add({}, { jobId: "o-1" } as never),
    hint: /did you mean id\?/,
    fixed: (q) => q.add({}, { id: "o-1" }),
  },
  {
    bullmq: ["deduplication"],
    refused: (q) => q.add({}, { deduplication: { id: "k", ttl: 1000 } } as never),
    hint: /did you mean dedupeKey\?/,
    fixed: (q) => q.add({}, { dedupeKey: "k", dedupeTtlMs: 1000 }),
  },
  {
    bullmq: ["removeOnComplete"],
    refused: (q) => q.add({}, { removeOnComplete: { count: 10 } } as never),
    hint: /queue\.setRetention\(\{ completed: \{ count, ageMs \} \}\)/,
    fixed: (q) => q.setRetention({ completed: { count: 10 } }),
  },
  {
    bullmq: ["removeOnFail"],
    refused: (q) => q.add({}, { removeOnFail: { count: 10 } } as never),
    hint: /queue\.setRetention\(\{ dead: \{ count, ageMs \} \}\)/,
    fixed: (q) => q.setRetention({ dead: { count: 10 } }),
  },
  {
    bullmq: ["failParentOnFailure", "ignoreDependencyOnFailure", "removeDependencyOnFail"],
    refused: (q) => q.add({}, { failParentOnFailure: true } as never),
    hint: /addFlow\(\{ payload, onChildFailure: "fail", children \}\)/,
    fixed: (q) => q.addFlow({ payload: {}, onChildFailure: "fail", children: [{ payload: {} }] }),
  },
  {
    bullmq: ["repeat"],
    refused: (q) => q.add({}, { repeat: { every: 1000 } } as never),
    hint: /queue\.schedule\(name, \{ every \}/,
    fixed: (q) => q.schedule("tick", { every: 1000 }, { payload: {} }),
  },
  {
    bullmq: ["upsertJobScheduler", "pattern"],
    refused: (q) => q.schedule("nightly", { pattern: "0 3 * * *" } as never, { payload: {} }),
    hint: /when\.pattern = "0 3 \* \* \*": unknown option; did you mean cron\?/,
    fixed: (q) => q.schedule("nightly", { cron: "0 3 * * *" }, { payload: {} }),
  },
  {
    bullmq: ["limiter"],
    refused: (_, queue) => worker(queue, { limiter: { max: 10, duration: 1000 } }),
    hint: /queue\.setRateLimit\(\{ max, perMs \}\)/,
    fixed: (q) => q.setRateLimit({ max: 10, perMs: 1000 }),
  },
  {
    bullmq: ["lockDuration"],
    refused: (_, queue) => worker(queue, { lockDuration: 30_000 }),
    hint: /did you mean leaseMs\?/,
    fixed: (_, queue) => started(worker(queue, { leaseMs: 30_000 })),
  },
  {
    bullmq: ["lockRenewTime"],
    refused: (_, queue) => worker(queue, { lockRenewTime: 5000 }),
    hint: /did you mean heartbeatMs\?/,
    fixed: (_, queue) => started(worker(queue, { heartbeatMs: 5000 })),
  },
  {
    bullmq: ["stalledInterval"],
    refused: (_, queue) => worker(queue, { stalledInterval: 30_000 }),
    hint: /did you mean sweep\?/,
    fixed: (_, queue) => started(worker(queue, { sweep: { intervalMs: 30_000 } })),
  },
  {
    bullmq: ["maxStalledCount"],
    refused: (q) => q.add({}, { maxStalledCount: 2 } as never),
    hint: /did you mean maxAttempts\?/,
    fixed: (q) => q.add({}, { maxAttempts: 2 }),
  },
  {
    bullmq: ["batches"],
    refused: (_, queue) => worker(queue, { batches: { size: 10 } }),
    hint: /did you mean batch\?/,
    fixed: (_, queue) => started(worker(queue, { batch: { size: 10 } })),
  },
  {
    bullmq: ["useWorkerThreads"],
    refused: (_, queue) => worker(queue, { useWorkerThreads: true }),
    hint: /new Worker\(name, moduleUrlOrPath, \{ isolation: "thread" \}\)/,
    fixed: async (_, queue) => {
      const w = new Worker(queue, join(import.meta.dirname, "../isolation/fixtures/echo.ts"), {
        connection: redisUrl(),
        isolation: "thread",
        sweep: false,
      })
      onCleanup(() => w.close())
      await started(w)
    },
  },
  {
    bullmq: ["autorun"],
    refused: (_, queue) => worker(queue, { autorun: false }),
    hint: /a leaseq Worker starts when it is constructed/,
    fixed: (_, queue) => started(worker(queue, {})),
  },
  {
    bullmq: ["add"],
    refused: (q) => (q.add as (...args: unknown[]) => unknown)("charge", { id: 1 }, { attempts: 2 }),
    hint: /payload = "charge": add takes \(payload, options\) and was given 3 arguments; BullMQ's add\(name, data, opts\) is add\(data, \{ name, \.\.\.opts \}\)/,
    fixed: (q) => q.add({ id: 1 }, { name: "charge", maxAttempts: 2 }),
  },
  {
    bullmq: ["add"],
    refused: (q) => q.add("charge", { id: 1 } as never),
    hint: /options\.id = 1: must be .*; the payload is the string "charge": if that is a job name, BullMQ's add\(name, data, opts\) is add\(data, \{ name, \.\.\.opts \}\)/,
    fixed: (q) => q.add({ id: 1 }, { name: "charge" }),
  },
  {
    bullmq: ["getJobs"],
    refused: (q) => q.getJobs(["waiting"] as never),
    hint: /state = \["waiting"\]: must be one of waiting, .*: getJobs takes one state per call/,
    fixed: (q) => q.getJobs("waiting"),
  },
  {
    bullmq: ["getJobs"],
    refused: (q) => q.getJobs("failed" as never),
    hint: /state = "failed": must be one of .*; did you mean dead\?/,
    fixed: (q) => q.getJobs("dead"),
  },
  {
    bullmq: ["clean"],
    refused: (q) => (q.clean as (...args: unknown[]) => unknown)(0, 1000, "completed"),
    hint: /state = 0: .*clean\(type, \{ olderThanMs: grace, limit \}\)/,
    fixed: (q) => q.clean("completed", { olderThanMs: 0, limit: 1000 }),
  },
  {
    bullmq: ["clean"],
    refused: (q) => q.clean("failed" as never),
    hint: /state = "failed": must be one of completed, cancelled, dead; did you mean dead\?/,
    fixed: (q) => q.clean("dead"),
  },
]

/**
 * BullMQ names that are no refused option: the same name in leaseq, or a method, event or
 * class whose row names leaseq's method (each checked to exist by the last test below).
 */
const NOT_REFUSED = [
  ...["concurrency", "connection", "prefix", "defaultJobOptions", "priority", "lifo", "token", "signal"],
  ...["new", "closed", "completed", "error", "failed", "stalled"], // `new Worker(…)`, the Worker's events
  ...["setGlobalConcurrency", "getJobCounts", "getWorkers", "retryJobs", "drain", "obliterate", "resume"],
  ...["getNextJob", "moveToCompleted", "moveToFailed", "extendLock", "setAsFailed", "QueueEvents"],
  ...["exportPrometheusMetrics", "FlowProducer"],
  ...["failedReason", "stacktrace", "getJobLogs"], // reads of a job: getJob(id).error, errors, logs
  ...["drained", "group", "GroupMaxSizeExceededError"], // the Worker's event; Pro's group option and its error
  ...["exportPrometheusMetrics", "FlowProducer", "getChildrenValues"],
]

describe("BullMQ's options and call shapes, through the real API", () => {
  it("every BullMQ name of docs/from-bullmq.md's table has a case here, or leaseq takes it as it is", () => {
    const covered = new Set([...CASES.flatMap((c) => c.bullmq), ...NOT_REFUSED])
    expect(bullmqNames.filter((n) => !covered.has(n))).toEqual([])
  })

  for (const [i, c] of CASES.entries()) {
    it(`${c.bullmq.join(", ")} (${i}): refused with a hint that leads to an accepted call, nothing written`, async () => {
      const q = name("refused")
      const queue = useQueue(q)
      await queue.add({ seed: true })
      const before = await dumpQueue(raw, q)
      let error: unknown
      try {
        await c.refused(queue, q)
      } catch (e) {
        error = e
      }
      expect(error, "expected the BullMQ shape to be refused").toBeInstanceOf(Error)
      const message = (error as Error).message
      expect(message).toMatch(c.hint)
      expect(await dumpQueue(raw, q)).toEqual(before)
      for (const [, method] of message.matchAll(/queue\.(\w+)\(/g)) {
        expect(typeof (queue as unknown as Record<string, unknown>)[method!], `queue.${method}`).toBe("function")
      }
      const other = name("fixed")
      await expect(c.fixed(useQueue(other), other)).resolves.not.toBeInstanceOf(Error)
    })
  }

  it("a string payload with options that check is legal: add(name) alone is a job whose payload is the name", async () => {
    const q = name("string")
    const queue = useQueue<string>(q)
    const id = await queue.add("charge", { delayMs: 60_000 })
    expect((await queue.getJob(id))?.payload).toBe("charge")
  })

  it("every leaseq method the table names is a function of a Queue, a Worker or a job", async () => {
    const q = name("methods")
    const queue = useQueue(q)
    const jobs: Array<Record<string, unknown>> = []
    const seen = (queueName: string, options: object) =>
      new Promise<void>((resolve) => {
        worker(queueName, options, async (j) => {
          jobs.push((Array.isArray(j) ? j[0] : j) as Record<string, unknown>)
          resolve()
        })
      })
    const b = name("methods-batch")
    const ran = Promise.all([seen(q, {}), seen(b, { batch: { size: 1 } })])
    await queue.add({})
    await useQueue(b).add({})
    await ran
    const w = worker(name("methods-worker"), {})
    const has = (owner: string, method: string) =>
      owner === "job"
        ? jobs.some((j) => typeof j[method] === "function")
        : typeof (
            owner === "worker"
              ? (w as unknown as Record<string, unknown>)
              : (queue as unknown as Record<string, unknown>)
          )[method] === "function"
    const methods = rows
      .flatMap((r) => [...r.leaseq.matchAll(/(?:(queue|worker|job)\.)?(\w+)\(/g)])
      .map(([, owner, method]) => [owner ?? "queue", method!] as const)
      .filter(([, m]) => !["Queue", "Worker", "async"].includes(m))
    expect(methods.length).toBeGreaterThan(20)
    expect(methods.filter(([owner, m]) => !has(owner, m)).map(([owner, m]) => `${owner}.${m}`)).toEqual([])
  })
})
