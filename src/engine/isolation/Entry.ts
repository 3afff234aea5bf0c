/**
 * What runs in each thread or child process of an isolated worker (Pool.ts starts it):
 * loads the handler module (its default export), then runs the jobs the worker sends,
 * one at a time, each with its own `signal` and `progress`, and answers with the result
 * or the error; a batch is one call with every job (each with `complete` and `fail`).
 * Leases, heartbeats and settling stay with the worker.
 *
 * A child process first starts a watchdog thread that kills the process when its parent
 * is gone (it was re-parented), so a SIGKILLed worker leaves no child behind even while
 * the handler blocks the child's main thread; it is online before the module loads.
 */
import { once } from "node:events"
import { parentPort, Worker as Thread, workerData } from "node:worker_threads"
import * as Result from "effect/Result"
import { encodePayload } from "../model/Validate.ts"
import { progressText } from "../worker/run/Progress.ts"
import { type FromHandler, fromWire, type ToHandler, toWire, type WireError, type WireJob } from "./Protocol.ts"

type Send = (m: FromHandler) => void

const send: Send = parentPort
  ? (m) => parentPort!.postMessage(m)
  : (m) => {
      process.send?.(m)
    }
const onMessage = (f: (m: ToHandler) => void): void => {
  if (parentPort) parentPort.on("message", f)
  else process.on("message", (m) => f(m as ToHandler))
}

/**
 * Kill this process once its parent (the worker, `workerData.ppid`, read before the thread
 * started) is gone: checked every 100 ms on a thread of its own, so a handler blocking the
 * main thread cannot delay it.
 */
const WATCHDOG = `
const { workerData } = require("node:worker_threads")
const check = () => { if (process.ppid !== workerData.ppid) process.kill(process.pid, "SIGKILL") }
check()
setInterval(check, 100)
`
const moduleRef: string = parentPort ? (workerData as { module: string }).module : (process.argv[2] ?? "")

/** A child process's watchdog, running before the module loads (so before any job). */
const startWatchdog = async (): Promise<void> => {
  const watchdog = new Thread(WATCHDOG, { eval: true, workerData: { ppid: process.ppid } })
  await once(watchdog, "online")
  watchdog.unref() // (only now: until the message listener is on, it keeps the process alive)
  // the worker closed the channel (it closed or died): nothing more will come
  process.on("disconnect", () => process.exit(0))
}

/** The runs going on: each one's jobs' abort controllers (one for a run of one job). */
const runs = new Map<number, AbortController[]>()

/** Send a result, or (one that does not clone) its refusal as in-process, naming the path. */
const sendResult = (
  make: (r: { ok: true; result: unknown } | { ok: false; error: WireError }) => FromHandler,
  result: unknown,
): void => {
  try {
    send(make({ ok: true, result }))
  } catch (e) {
    const refused = encodePayload("result", result, Number.MAX_SAFE_INTEGER)
    send(make({ ok: false, error: toWire(Result.isFailure(refused) ? refused.failure : e) }))
  }
}

/** The job as the handler sees it: the wire job with its own signal and progress. */
const handlerJob = (n: number, i: number, wire: WireJob, controllers: AbortController[]) => {
  const controller = new AbortController()
  controllers.push(controller)
  return {
    ...wire,
    signal: controller.signal,
    progress: (value: unknown): void => {
      progressText(value) // the same refusal as in-process, thrown here
      if (runs.get(n) === controllers && !controller.signal.aborted) send({ t: "progress", n, i, value })
    },
  }
}

/** Call the handler; its answer (for a batch, only how it ended) goes back as `done`. */
const call = (n: number, f: () => unknown, batch: boolean): void => {
  Promise.resolve()
    .then(f)
    .then(
      (result) => {
        runs.delete(n)
        sendResult((r) => ({ t: "done", n, ...r }), batch ? undefined : result)
      },
      (e) => {
        runs.delete(n)
        send({ t: "done", n, ok: false, error: toWire(e) })
      },
    )
}

const run = (handler: (job: unknown) => unknown, n: number, wire: WireJob): void => {
  const controllers: AbortController[] = []
  runs.set(n, controllers)
  const job = handlerJob(n, 0, wire, controllers)
  call(n, () => handler(job), false)
}

/** A batch: the handler gets every job, each with `complete` and `fail` (the first settle of each wins). */
const runBatch = (handler: (jobs: unknown) => unknown, n: number, wires: ReadonlyArray<WireJob>): void => {
  const controllers: AbortController[] = []
  runs.set(n, controllers)
  const jobs = wires.map((wire, i) => {
    const job = handlerJob(n, i, wire, controllers)
    let settled = false
    const open = () => {
      const was = settled || runs.get(n) !== controllers || job.signal.aborted
      settled = true
      return !was
    }
    return {
      ...job,
      complete: (result?: unknown): void => {
        if (open()) sendResult((r) => ({ t: "settle", n, i, ...r }), result)
      },
      fail: (error: unknown): void => {
        if (open()) send({ t: "settle", n, i, ok: false, error: toWire(error) })
      },
    }
  })
  call(n, () => handler(jobs), true)
}

const start = async (): Promise<void> => {
  if (!parentPort) await startWatchdog()
  let handler: unknown
  try {
    const loaded = (await import(moduleRef)) as { default?: unknown }
    handler = loaded.default
  } catch (e) {
    send({ t: "load-failed", reason: e instanceof Error ? `${e.name}: ${e.message}` : String(e) })
    return
  }
  if (typeof handler !== "function") {
    send({ t: "load-failed", reason: `its default export is ${handler === null ? "null" : typeof handler}` })
    return
  }
  const f = handler as (job: unknown) => unknown
  onMessage((m) => {
    if (m.t === "run") run(f, m.n, m.job)
    else if (m.t === "batch") runBatch(f, m.n, m.jobs)
    else runs.get(m.n)?.[m.i]?.abort(fromWire(m.reason))
  })
  send({ t: "ready" })
}

void start()
