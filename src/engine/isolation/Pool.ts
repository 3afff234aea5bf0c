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
 * - A batch (`runBatch`, the `batch` option) runs on one member as one call of the module's
 *   batch handler; each job may be settled on its own (`complete`, `fail`). A job of it
 *   stopped at once (above) ends at once and its handler's `signal` aborts; the member is
 *   stopped once no job of the batch is left open. A crash fails every open job of it.
 * - Every member that ends is replaced once gone; a process pool keeps one spare (the job
 *   after a stop or crash need not wait for a start). A module that fails to load fails the
 *   start (`ready` rejects); a replacement that fails is reported once per streak and tried
 *   again with backoff (0.5 s doubling to 30 s); jobs wait for a member meanwhile.
 */
import { QueueClosed } from "../model/Errors.ts"
import type { Job } from "../model/HandlerJob.ts"
import type { BatchEntry, BatchRun } from "../worker/Batch.ts"
import { HandlerModuleFailed } from "./IsolationErrors.ts"
import { type Channel, type Events, openProcess, openThread, revive, stopsAtOnce } from "./Members.ts"
import type { Pool, PoolOptions } from "./PoolApi.ts"
import { type FromHandler, toWire } from "./Protocol.ts"
import { closePart, crashed, finish, type Part, type Task, wire } from "./Runs.ts"

export type { Isolation, Pool, PoolOptions } from "./PoolApi.ts"

interface Member {
  channel: Channel
  state: "starting" | "idle" | "busy" | "stopping" | "gone"
  task: Task<Member> | undefined
  /** What a thread threw before it exited. */
  thrown?: unknown
  stoppedAt?: number | undefined
  readonly exited: Promise<void>
}

/** The pool's state and moves (one class, so each move is a method of its own). */
class MemberPool implements Pool {
  readonly members = new Set<Member>()
  readonly waiting: Array<Task<Member>> = []
  readonly timers = new Set<ReturnType<typeof setTimeout>>()
  seq = 0
  closed = false
  started = false
  readyCount = 0
  loadFailures = 0
  readonly ready: Promise<void>
  settleReady!: (e?: unknown) => void

  readonly o: PoolOptions
  /** Members kept: `size`, and for processes one spare (a stopped or crashed run's next job need not wait for a process to start). */
  readonly target: number

  constructor(o: PoolOptions) {
    this.o = o
    this.target = o.isolation === "process" ? o.size + 1 : o.size
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (e) => (e === undefined ? resolve() : reject(e))
    })
    this.ready.catch(() => undefined)
    for (let i = 0; i < this.target; i++) this.spawn()
  }

  dispatch(): void {
    for (const m of this.members) {
      if (this.waiting.length === 0) return
      if (m.state !== "idle") continue
      const t = this.waiting.shift()!
      m.state = "busy"
      m.task = t
      t.member = m
      t.parts = t.parts.filter((p) => p.open)
      if (t.batch) m.channel.send({ t: "batch", n: t.n, jobs: t.parts.map((p) => wire(p.job)) })
      else m.channel.send({ t: "run", n: t.n, job: wire(t.parts[0]!.job) })
    }
  }

  /** Stop a member now: its run's open jobs end with their signals' reasons (else `reason`), its late answer is dropped, it is replaced once gone. */
  stop(m: Member, reason: unknown): void {
    const t = m.task
    m.task = undefined
    m.state = "stopping"
    m.stoppedAt = performance.now()
    m.channel.kill()
    if (t) finish(t, false, reason, (p) => (p.job.signal.aborted ? p.job.signal.reason : reason))
  }

  /**
   * A job's signal aborted. Waiting, it leaves its run (and a run left with no job is
   * dropped). Running, a reason that stops at once ends it now and its handler's signal
   * aborts; the member is stopped when no job of its run is left open. Another reason (the
   * shutdown's) aborts its handler's signal, and the member is stopped after the grace.
   */
  abortPart(t: Task<Member>, p: Part): void {
    const reason = p.job.signal.reason
    const m = t.member
    const i = t.parts.indexOf(p)
    if (m === undefined || m.task !== t) {
      closePart(p, false, reason)
      if (t.parts.some((q) => q.open)) return
      const w = this.waiting.indexOf(t)
      if (w >= 0) this.waiting.splice(w, 1)
      finish(t, false, reason)
      return
    }
    if (stopsAtOnce(reason)) {
      closePart(p, false, reason)
      if (t.parts.some((q) => q.open)) m.channel.send({ t: "abort", n: t.n, i, reason: toWire(reason) })
      else this.stop(m, reason)
      return
    }
    m.channel.send({ t: "abort", n: t.n, i, reason: toWire(reason) })
    t.stopTimer ??= setTimeout(() => m.task === t && this.stop(m, reason), this.o.abortGraceMs)
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
    if (!this.started && ++this.readyCount === this.target) {
      this.started = true
      this.settleReady()
    }
    this.dispatch()
  }

  /** A run's progress, a batch job's settle, or the run's answer; a stopped run's late word is dropped (its task is no longer the member's). */
  onRunMessage(m: Member, msg: Extract<FromHandler, { n: number }>): void {
    const t = m.task
    if (t === undefined || t.n !== msg.n) return
    if (msg.t === "progress" || msg.t === "settle") {
      this.onPartMessage(t.parts[msg.i], msg)
      return
    }
    m.task = undefined
    m.state = "idle"
    if (msg.ok) finish(t, true, msg.result)
    else finish(t, false, revive(msg.error))
    this.dispatch()
  }

  /** A job's progress, or (a batch's) its settle by the handler; dropped once the job is closed. */
  onPartMessage(p: Part | undefined, msg: Extract<FromHandler, { t: "progress" | "settle" }>): void {
    if (p === undefined || !p.open) return
    if (msg.t === "settle") closePart(p, msg.ok, msg.ok ? msg.result : revive(msg.error))
    else
      try {
        p.job.progress(msg.value)
      } catch (e) {
        this.o.onError(e)
      }
  }

  onMessage(m: Member, msg: FromHandler): void {
    if (msg.t === "ready") this.onReady(m)
    else if (msg.t === "load-failed") this.loadFailed(m, msg.reason)
    else this.onRunMessage(m, msg)
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
    if (t) crashed(t, { isolation: this.o.isolation, cause: m.thrown, code, signal })
    this.spawn()
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

  /** Queue a run of the parts `make` gives (those already aborted end at once; a run left with none ends so). */
  enqueue(batch: boolean, make: (t: Task<Member>) => Part[], end: Task<Member>["end"]): void {
    const t: Task<Member> = { n: ++this.seq, batch, parts: [], end, ended: false }
    t.parts = make(t)
    for (const p of t.parts) {
      if (p.job.signal.aborted) closePart(p, false, p.job.signal.reason)
      else p.job.signal.addEventListener("abort", p.onAbort, { once: true })
    }
    if (t.parts.some((p) => p.open)) {
      this.waiting.push(t)
      this.dispatch()
    } else finish(t, false, t.parts[0]?.job.signal.reason)
  }

  part(t: Task<Member>, job: Job<unknown>, settle: Part["settle"]): Part {
    const p: Part = { job, settle, open: true, onAbort: () => this.abortPart(t, p) }
    return p
  }

  run(job: Job<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new QueueClosed({ queue: this.o.queue }))
      const settle = (ok: boolean, v: unknown) => (ok ? resolve(v) : reject(v))
      this.enqueue(
        false,
        (t) => [this.part(t, job, settle)],
        () => undefined,
      )
    })
  }

  runBatch(entries: ReadonlyArray<BatchEntry<unknown>>): BatchRun {
    const done = new Promise<unknown>((resolve, reject) => {
      if (this.closed) return reject(new QueueClosed({ queue: this.o.queue }))
      const parts = (t: Task<Member>) =>
        entries.map((e) => this.part(t, e.job, (ok: boolean, v: unknown) => (ok ? e.complete(v) : e.fail(v))))
      this.enqueue(true, parts, (ok, v) => (ok ? resolve(undefined) : reject(v)))
    })
    return { done }
  }

  async close(): Promise<void> {
    const closing = new QueueClosed({ queue: this.o.queue })
    this.closed = true
    if (!this.started) this.settleReady(closing)
    this.started = true
    for (const timer of this.timers) clearTimeout(timer)
    for (const t of this.waiting.splice(0)) finish(t, false, closing)
    const all = [...this.members]
    for (const m of all) {
      if (m.task) finish(m.task, false, closing)
      m.channel.kill()
    }
    await Promise.all(all.map((m) => m.exited))
  }
}

/** Start a pool (see the module's comment): `size` members, loading the module now. */
export const startPool = (o: PoolOptions): Pool => new MemberPool(o)
