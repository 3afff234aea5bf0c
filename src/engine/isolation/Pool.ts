/**
 * The pool of threads (node:worker_threads) or child processes (node:child_process) that
 * runs an isolated worker's handler, one job at a time each, `size` of them. The worker
 * (leases, heartbeats, fence, settle) stays in this thread: the pool only runs a job's
 * handler and answers with its result or error, so a handler that blocks its own thread
 * never delays a heartbeat.
 *
 * - Hard stop: when a job's signal aborts for a lost or self-fenced lease, a cancel or a
 *   timeout, its thread is terminated (`worker.terminate()`) or its process killed
 *   (SIGKILL) at once, and the run rejects with the signal's reason. At close (the reason
 *   is the shutdown's), the handler's own signal aborts first and it gets `abortGraceMs`
 *   to end before it is stopped the same way. A stopped member's late answer is dropped.
 * - Crash: a member that ends while it runs a job (uncaught exception, `process.exit`,
 *   `resourceLimits`, a signal) rejects that run with {@link HandlerCrashed}.
 * - Every member that ends is replaced. A module that fails to load fails the start
 *   (`ready` rejects); a replacement that fails to load is reported once per streak and
 *   tried again with backoff (0.5 s doubling to 30 s); jobs wait for a member meanwhile.
 */
import type { ResourceLimits } from "node:worker_threads"
import { QueueClosed } from "../model/Errors.ts"
import type { Job } from "../queue/Job.ts"
import { HandlerCrashed, HandlerModuleFailed } from "./IsolationErrors.ts"
import { type Channel, type Events, openProcess, openThread, revive, stopsAtOnce } from "./Members.ts"
import { type FromHandler, toWire } from "./Protocol.ts"

/** Where an isolated handler runs. */
export type Isolation = "thread" | "process"

/** What a pool is made with. */
export interface PoolOptions {
  readonly isolation: Isolation
  /** The handler module, as a file URL. */
  readonly module: string
  /** Members (threads or processes): the worker's concurrency. */
  readonly size: number
  readonly queue: string
  /** After the shutdown aborts a handler, how long it may take to end before it is stopped (ms). */
  readonly abortGraceMs: number
  /** Threads only: the V8 heap limits of each thread. */
  readonly resourceLimits?: ResourceLimits | undefined
  /** A replacement that failed to load (once per streak). */
  readonly onError: (e: unknown) => void
  /** Told how long each hard stop took, from the decision to the member gone (ms). */
  readonly onStopped?: ((ms: number) => void) | undefined
}

/** A running pool. */
export interface Pool {
  /** Resolves once every member has loaded the module; rejects with {@link HandlerModuleFailed} if it cannot. */
  readonly ready: Promise<void>
  /** Run `job`'s handler on a free member. */
  readonly run: (job: Job<unknown>) => Promise<unknown>
  /** The members' process ids (process isolation) or thread ids. */
  readonly ids: () => number[]
  /** Stop every member; runs not ended reject with QueueClosed. */
  readonly close: () => Promise<void>
}

interface Task {
  readonly job: Job<unknown>
  readonly n: number
  readonly resolve: (v: unknown) => void
  readonly reject: (e: unknown) => void
  readonly onAbort: () => void
  settled: boolean
  member?: Member | undefined
  stopTimer?: ReturnType<typeof setTimeout> | undefined
}

interface Member {
  channel: Channel
  state: "starting" | "idle" | "busy" | "stopping" | "gone"
  task: Task | undefined
  /** What a thread threw before it exited. */
  thrown?: unknown
  stoppedAt?: number | undefined
  readonly exited: Promise<void>
}

/** The pool's state and moves (one class, so each move is a method of its own). */
class MemberPool implements Pool {
  readonly members = new Set<Member>()
  readonly waiting: Task[] = []
  readonly timers = new Set<ReturnType<typeof setTimeout>>()
  seq = 0
  closed = false
  started = false
  readyCount = 0
  loadFailures = 0
  readonly ready: Promise<void>
  settleReady!: (e?: unknown) => void

  readonly o: PoolOptions

  constructor(o: PoolOptions) {
    this.o = o
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (e) => (e === undefined ? resolve() : reject(e))
    })
    this.ready.catch(() => undefined)
    for (let i = 0; i < o.size; i++) this.spawn()
  }

  settle(t: Task, ok: boolean, value: unknown): void {
    if (t.settled) return
    t.settled = true
    if (t.stopTimer) clearTimeout(t.stopTimer)
    t.job.signal.removeEventListener("abort", t.onAbort)
    if (ok) t.resolve(value)
    else t.reject(value)
  }

  dispatch(): void {
    for (const m of this.members) {
      if (this.waiting.length === 0) return
      if (m.state !== "idle") continue
      const t = this.waiting.shift()!
      m.state = "busy"
      m.task = t
      t.member = m
      const { id, payload, attempt, maxAttempts, token, scheduledFor } = t.job
      m.channel.send({ t: "run", n: t.n, job: { id, payload, attempt, maxAttempts, token, scheduledFor } })
    }
  }

  /** Stop a member now: its run rejects with `reason`, its late answer is dropped, it is replaced once gone. */
  stop(m: Member, reason: unknown): void {
    const t = m.task
    m.task = undefined
    m.state = "stopping"
    m.stoppedAt = performance.now()
    m.channel.kill()
    if (t) this.settle(t, false, reason)
  }

  /** A run's signal aborted: a waiting one is dropped; a running one is stopped (at once, or after the grace at close). */
  abortTask(t: Task): void {
    const reason = t.job.signal.reason
    const m = t.member
    if (m === undefined || m.task !== t) {
      const i = this.waiting.indexOf(t)
      if (i >= 0) this.waiting.splice(i, 1)
      this.settle(t, false, reason)
    } else if (stopsAtOnce(reason)) this.stop(m, reason)
    else {
      m.channel.send({ t: "abort", n: t.n, reason: toWire(reason) })
      t.stopTimer = setTimeout(() => m.task === t && this.stop(m, reason), this.o.abortGraceMs)
    }
  }

  later(f: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      f()
    }, ms)
    this.timers.add(timer)
  }

  loadFailed(m: Member, reason: string): void {
    if (m.state === "gone") return
    m.state = "gone"
    this.members.delete(m)
    m.channel.kill()
    const error = new HandlerModuleFailed({ module: this.o.module, reason })
    if (!this.started) {
      // the start fails, once: nothing is respawned
      this.started = true
      this.closed = true
      for (const other of this.members) other.channel.kill()
      this.settleReady(error)
      return
    }
    if (this.closed) return
    if (++this.loadFailures === 1) this.o.onError(error)
    this.later(() => this.spawn(), Math.min(30_000, 500 * 2 ** (this.loadFailures - 1)))
  }

  onReady(m: Member): void {
    if (m.state !== "starting") return
    m.state = "idle"
    this.loadFailures = 0
    if (!this.started && ++this.readyCount === this.o.size) {
      this.started = true
      this.settleReady()
    }
    this.dispatch()
  }

  /** A run's progress or answer; a stopped run's late word is dropped (its task is no longer the member's). */
  onRunMessage(m: Member, msg: Extract<FromHandler, { n: number }>): void {
    const t = m.task
    if (t === undefined || t.n !== msg.n) return
    if (msg.t === "progress") {
      try {
        t.job.progress(msg.value)
      } catch (e) {
        this.o.onError(e)
      }
      return
    }
    m.task = undefined
    m.state = "idle"
    if (msg.ok) this.settle(t, true, msg.result)
    else this.settle(t, false, revive(msg.error))
    this.dispatch()
  }

  onMessage(m: Member, msg: FromHandler): void {
    if (msg.t === "ready") this.onReady(m)
    else if (msg.t === "load-failed") this.loadFailed(m, msg.reason)
    else this.onRunMessage(m, msg)
  }

  /** A member that ended while it ran `t`: that run crashed. */
  crashed(m: Member, t: Task, code: number | null, signal: string | null): void {
    const crash = { jobId: t.job.id, token: t.job.token, isolation: this.o.isolation, cause: m.thrown }
    this.settle(t, false, new HandlerCrashed(signal ? { ...crash, signal } : { ...crash, exitCode: code ?? undefined }))
  }

  onExit(m: Member, code: number | null, signal: string | null): void {
    const was = m.state
    if (was === "gone") return
    if (was === "starting") {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`
      this.loadFailed(m, `its ${this.o.isolation} ${how} before the module loaded`)
      return
    }
    m.state = "gone"
    this.members.delete(m)
    if (was === "stopping" && m.stoppedAt !== undefined) this.o.onStopped?.(performance.now() - m.stoppedAt)
    const t = m.task
    m.task = undefined
    if (t) this.crashed(m, t, code, signal)
    if (!this.closed) this.spawn()
  }

  spawn(): void {
    if (this.closed) return
    let exited!: () => void
    const m: Member = {
      channel: { id: -1, send: () => undefined, kill: () => undefined },
      state: "starting",
      task: undefined,
      exited: new Promise<void>((resolve) => (exited = resolve)),
    }
    const events: Events = {
      message: (msg) => this.onMessage(m, msg),
      exit: (code, signal) => {
        this.onExit(m, code, signal)
        exited()
      },
      error: (e) => {
        m.thrown = e
      },
    }
    this.members.add(m)
    m.channel = this.o.isolation === "thread" ? openThread(this.o, events) : openProcess(this.o, events)
  }

  ids(): number[] {
    return [...this.members].map((m) => m.channel.id)
  }

  run(job: Job<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new QueueClosed({ queue: this.o.queue }))
      const signal = job.signal
      if (signal.aborted) return reject(signal.reason)
      const t: Task = { job, n: ++this.seq, resolve, reject, settled: false, onAbort: () => this.abortTask(t) }
      signal.addEventListener("abort", t.onAbort, { once: true })
      this.waiting.push(t)
      this.dispatch()
    })
  }

  async close(): Promise<void> {
    const closing = new QueueClosed({ queue: this.o.queue })
    this.closed = true
    if (!this.started) this.settleReady(closing)
    this.started = true
    for (const timer of this.timers) clearTimeout(timer)
    for (const t of this.waiting.splice(0)) this.settle(t, false, closing)
    const all = [...this.members]
    for (const m of all) {
      if (m.task) this.settle(m.task, false, closing)
      m.channel.kill()
    }
    await Promise.all(all.map((m) => m.exited))
  }
}

/** Start a pool (see the module's comment): `size` members, loading the module now. */
export const startPool = (o: PoolOptions): Pool => new MemberPool(o)
