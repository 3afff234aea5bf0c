/**
 * The two kinds of pool member (Pool.ts): a worker thread or a child process running
 * Entry.ts, each behind one small channel (send, kill, its id), and what crosses back
 * rebuilt (the reasons that stop a member at once, leaseq's own refusals as their classes).
 */
import { type ChildProcess, fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import { type ResourceLimits, Worker as Thread } from "node:worker_threads"
import { InvalidOptions, InvalidPayload, JobCancelled, JobTimedOut, LeaseLost } from "../model/Errors.ts"
import { type FromHandler, fromWire, type ToHandler, type WireError } from "./Protocol.ts"

/** The handler side's entry: the .ts source under the source condition, the built .js otherwise. */
const ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./Entry.ts" : "./Entry.js", import.meta.url)

/** One member as the pool drives it. */
export interface Channel {
  readonly id: number
  readonly send: (m: ToHandler) => void
  readonly kill: () => void
}

/** What a member tells the pool. */
export type Events = {
  readonly message: (m: FromHandler) => void
  readonly exit: (code: number | null, signal: string | null) => void
  readonly error: (e: unknown) => void
}

/** What a member is opened with. */
export interface MemberOptions {
  readonly module: string
  readonly resourceLimits?: ResourceLimits | undefined
}

/** A worker thread running Entry.ts; `kill` terminates it. */
export const openThread = (o: MemberOptions, on: Events): Channel => {
  const t = new Thread(ENTRY, {
    workerData: { module: o.module },
    execArgv: process.execArgv,
    ...(o.resourceLimits ? { resourceLimits: o.resourceLimits } : {}),
  })
  t.on("message", on.message)
  t.on("error", on.error)
  t.on("exit", (code) => on.exit(code, null))
  return { id: t.threadId, send: (m) => t.postMessage(m), kill: () => void t.terminate() }
}

export const openProcess = (o: MemberOptions, on: Events): Channel => {
  const c: ChildProcess = fork(fileURLToPath(ENTRY), [o.module], {
    execArgv: process.execArgv,
    serialization: "advanced",
  })
  c.on("message", (m) => on.message(m as FromHandler))
  c.on("error", on.error)
  c.on("exit", (code, signal) => on.exit(code, signal))
  return {
    id: c.pid ?? -1,
    send: (m) => {
      if (c.connected) c.send(m)
    },
    kill: () => void c.kill("SIGKILL"),
  }
}

/** The reasons that stop a handler at once (the rest, the shutdown's, let it end first). */
export const stopsAtOnce = (reason: unknown): boolean =>
  reason instanceof LeaseLost || reason instanceof JobCancelled || reason instanceof JobTimedOut

/** A crossed error rebuilt; leaseq's own refusals as their classes (so `instanceof` holds as in-process). */
export const revive = (w: WireError): unknown => {
  const p = w.props ?? {}
  if (p._tag === "InvalidPayload") return new InvalidPayload({ field: String(p.field), reason: String(p.reason) })
  if (p._tag === "InvalidOptions")
    return new InvalidOptions({ field: String(p.field), value: p.value, reason: String(p.reason) })
  return fromWire(w)
}
