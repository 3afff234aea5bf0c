/**
 * What runs in each thread or child process of an isolated worker (Pool.ts starts it):
 * loads the handler module (its default export), then runs the jobs the worker sends,
 * one at a time, each with its own `signal` and `progress`, and answers with the result
 * or the error. Leases, heartbeats and settling stay with the worker.
 *
 * A child process first starts a watchdog thread that kills the process when its parent
 * is gone (it was re-parented), so a SIGKILLed worker leaves no child behind even while
 * the handler blocks the child's main thread; it is online before the module loads.
 */
import { once } from "node:events"
import { parentPort, Worker as Thread, workerData } from "node:worker_threads"
import * as Result from "effect/Result"
import { encodePayload } from "../model/Validate.ts"
import { progressText } from "../worker/Progress.ts"
import { type FromHandler, fromWire, type ToHandler, toWire, type WireJob } from "./Protocol.ts"

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

const runs = new Map<number, AbortController>()

const run = (handler: (job: unknown) => unknown, n: number, wire: WireJob): void => {
  const controller = new AbortController()
  runs.set(n, controller)
  const job = {
    ...wire,
    signal: controller.signal,
    progress: (value: unknown): void => {
      progressText(value) // the same refusal as in-process, thrown here
      if (runs.get(n) === controller) send({ t: "progress", n, value })
    },
  }
  const finish = (m: FromHandler): void => {
    runs.delete(n)
    send(m)
  }
  Promise.resolve()
    .then(() => handler(job))
    .then(
      (result) => {
        try {
          finish({ t: "done", n, ok: true, result })
        } catch (e) {
          // a result that does not clone: refused as in-process (naming the path), or as it threw
          const refused = encodePayload("result", result, Number.MAX_SAFE_INTEGER)
          finish({ t: "done", n, ok: false, error: toWire(Result.isFailure(refused) ? refused.failure : e) })
        }
      },
      (e) => finish({ t: "done", n, ok: false, error: toWire(e) }),
    )
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
    else runs.get(m.n)?.abort(fromWire(m.reason))
  })
  send({ t: "ready" })
}

void start()
