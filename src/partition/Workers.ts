/**
 * Workers over one queue or over every partition of a partitioned queue, with the
 * engine unchanged: one engine worker per (sub-)queue, each with its own blocking
 * connection for its marker wait; the command connection is shared.
 *
 * - A partitioned worker of concurrency C over N partitions runs N engine workers of
 *   concurrency ceil(C / N) each: every partition has its own slots and its own
 *   wake-up, so a busy partition never starves another.
 * - Cost: N + 1 connections (N blocking, 1 for commands), + 1 with `durability`.
 * - Each engine worker sweeps its own partition (when sweeping is on).
 */
import * as Effect from "effect/Effect"
import { makeCommands } from "../engine/Commands.ts"
import { DEFAULT_PREFIX, partitionKeys, type QueueKeys, queueKeys } from "../engine/Keys.ts"
import { startWorker, type WorkerHandle, type WorkerProgram, type WorkerState } from "../engine/worker/Worker.ts"
import type { WorkerSettings } from "../engine/worker/WorkerOptions.ts"
import type { RedisClient } from "../redis/Client.ts"

/** The keys a worker serves: the queue's own, or each partition's (`partitions` > 1). */
export const servedKeys = (name: string, prefix: string = DEFAULT_PREFIX, partitions = 1): ReadonlyArray<QueueKeys> =>
  partitions <= 1
    ? [queueKeys(name, prefix)]
    : Array.from({ length: partitions }, (_, i) => partitionKeys(name, i, prefix))

/** Concurrency of each engine worker when `concurrency` is split over `partitions`: ceil(C / N). */
export const concurrencyPerPartition = (concurrency: number, partitions: number): number =>
  Math.ceil(concurrency / Math.max(1, partitions))

const ORDER: ReadonlyArray<WorkerState> = ["running", "draining", "releasing", "closed"]

/**
 * One handle over several engine workers: `failed` when one of them is, else the least
 * advanced state; summed running jobs; closed together.
 */
export const combineHandles = (handles: ReadonlyArray<WorkerHandle>): WorkerHandle => {
  if (handles.length === 1) return handles[0]!
  return {
    state: () =>
      handles.some((h) => h.state() === "failed")
        ? "failed"
        : (ORDER[Math.min(...handles.map((h) => ORDER.indexOf(h.state())))] ?? "closed"),
    running: () => handles.reduce((n, h) => n + h.running(), 0),
    close: Effect.forEach(handles, (h) => h.close, { concurrency: "unbounded", discard: true }),
  }
}

/**
 * Open every served (sub-)queue (layout and key types checked), then start one engine
 * worker on each with its blocking connection `blocking[i]` (closed by that worker's
 * `close`; the caller closes them itself if this fails). `client` stays the caller's.
 */
export const startServing = <A>(
  client: RedisClient,
  keys: ReadonlyArray<QueueKeys>,
  blocking: ReadonlyArray<RedisClient>,
  settings: WorkerSettings,
  program: WorkerProgram<A>,
) =>
  Effect.gen(function* () {
    const commands = keys.map((k) => makeCommands(client, k))
    yield* Effect.forEach(commands, (c) => c.open, { concurrency: "unbounded", discard: true })
    const each: WorkerSettings = {
      ...settings,
      concurrency: concurrencyPerPartition(settings.concurrency, keys.length),
    }
    const handles: WorkerHandle[] = []
    for (let i = 0; i < commands.length; i++)
      handles.push(yield* startWorker(commands[i]!, blocking[i]!, each, program))
    return combineHandles(handles)
  })
