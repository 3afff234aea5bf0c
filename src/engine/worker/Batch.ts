/**
 * Batches (the `batch` worker option): the jobs a worker runs are gathered, up to `size`
 * at once or for at most `waitMs`, and handed together to one call of the user's batch
 * handler. Nothing else in the worker changes: each job still runs as its own run
 * (RunJob.ts or PlainRun.ts), with its own slot, lease, heartbeat, token, attempts and
 * outcome; its handler is a wait for its outcome in the batch. So a batch of 50 holds
 * 50 slots, a lost or cancelled lease ends only its own job, and the sweep reclaims a
 * dead worker's jobs one by one, as without batches.
 *
 * A job's outcome: `complete(result)` or `fail(error)` from the handler settles it at
 * once (its slot is freed then); when the handler resolves, every job not yet settled
 * completes (result undefined); when it throws, every one not yet settled fails with
 * that error (each spending its own attempt).
 */
import type { Job } from "../model/HandlerJob.ts"

/** The `batch` option: how many jobs one handler call gets, and how long to wait to fill it. */
export interface BatchOptions {
  /** Most jobs per handler call. Range 1 – 1000. `concurrency` must be at least this (its default is this). */
  readonly size: number
  /** How long the first job of a batch waits for the rest before the handler gets what is there, in ms. Default 100. Range 0 – 60 000. */
  readonly waitMs?: number | undefined
}

/** Validated batch settings. */
export interface BatchSettings {
  readonly size: number
  readonly waitMs: number
}

/** The default `batch.waitMs`. */
export const DEFAULT_BATCH_WAIT_MS = 100

/** A batch handler's running call: how it ends, and (the Effect face) how to interrupt it. */
export interface BatchRun {
  /** Resolves with the handler's value, rejects with its error. */
  readonly done: Promise<unknown>
  /** Interrupt the call (every open job of it ended: lost, cancelled, timed out, shut down). */
  readonly interrupt?: () => void
}

/** One job in a batch: its outcome, settled once. */
export interface BatchEntry<A> {
  readonly job: Job<A>
  /** Resolves with the job's result, rejects with its failure. */
  readonly outcome: Promise<unknown>
  /** Settle the job (first call wins): complete with `result`, or fail with `error`. */
  readonly complete: (result?: unknown) => void
  readonly fail: (error: unknown) => void
}

interface Entry<A> extends BatchEntry<A> {
  settled: boolean
  /** Its run was interrupted (the Effect face): it waits only for the batch to end. */
  abandoned: boolean
  batch: Gathered<A> | undefined
}

interface Gathered<A> {
  readonly entries: Array<Entry<A>>
  run: BatchRun | undefined
}

/** Gathers jobs into batches and runs the handler on each batch. */
export interface BatchCollector<A> {
  /** Add a started job; its entry's `outcome` is its handler's outcome. */
  readonly take: (job: Job<A>) => BatchEntry<A>
  /**
   * The job's run was interrupted: a job not handed yet leaves the batch (its outcome fails
   * at once); one handed over waits for its batch to end, and once every open job of a
   * batch is abandoned, the batch is interrupted. Resolves when the job's outcome is settled.
   */
  readonly abandon: (entry: BatchEntry<A>) => Promise<void>
  /** The worker closes: hand what is gathered at once, and every later job without waiting. */
  readonly close: () => void
}

const makeEntry = <A>(job: Job<A>): Entry<A> => {
  let resolve!: (v: unknown) => void
  let reject!: (e: unknown) => void
  const outcome = new Promise<unknown>((res, rej) => {
    resolve = res
    reject = rej
  })
  // a job abandoned before its outcome is read must not be an unhandled rejection
  outcome.catch(() => undefined)
  const entry: Entry<A> = {
    job,
    outcome,
    settled: false,
    abandoned: false,
    batch: undefined,
    complete: (result) => {
      if (entry.settled) return
      entry.settled = true
      resolve(result)
    },
    fail: (error) => {
      if (entry.settled) return
      entry.settled = true
      reject(error)
    },
  }
  return entry
}

/**
 * A collector of batches of `settings.size` jobs, each waiting at most `settings.waitMs`,
 * handed to `start` (which calls the user's handler and says how it ended).
 */
export const makeBatchCollector = <A>(
  settings: BatchSettings,
  start: (entries: ReadonlyArray<BatchEntry<A>>) => BatchRun,
): BatchCollector<A> => {
  let gathering: Array<Entry<A>> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false

  const hand = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    const entries = gathering
    gathering = []
    if (entries.length === 0) return
    const batch: Gathered<A> = { entries, run: undefined }
    for (const e of entries) e.batch = batch
    let run: BatchRun
    try {
      run = start(entries)
    } catch (error) {
      run = { done: Promise.reject(error) }
    }
    batch.run = run
    run.done.then(
      () => {
        for (const e of entries) e.complete(undefined)
      },
      (error) => {
        for (const e of entries) e.fail(error)
      },
    )
  }

  const take = (job: Job<A>): BatchEntry<A> => {
    const entry = makeEntry(job)
    gathering.push(entry)
    if (gathering.length >= settings.size) hand()
    else if (closed) queueMicrotask(hand)
    else if (timer === undefined) timer = setTimeout(hand, settings.waitMs)
    return entry
  }

  const abandon = (given: BatchEntry<A>): Promise<void> => {
    const entry = given as Entry<A>
    entry.abandoned = true
    const batch = entry.batch
    if (batch === undefined) {
      const i = gathering.indexOf(entry)
      if (i >= 0) gathering.splice(i, 1)
      entry.fail(new Error("the job's run ended before its batch was handed over"))
    } else if (batch.entries.every((e) => e.settled || e.abandoned)) batch.run?.interrupt?.()
    return entry.outcome.then(
      () => undefined,
      () => undefined,
    )
  }

  const close = () => {
    closed = true
    hand()
  }

  return { take, abandon, close }
}
