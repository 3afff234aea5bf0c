/**
 * Workers over one queue or over every partition of a partitioned queue, with the
 * engine unchanged: one engine worker per (sub-)queue, each with its own blocking
 * connection for its marker wait; the command connection is shared.
 *
 * - A partitioned worker of concurrency C over N partitions runs N engine workers of
 *   concurrency ceil(C / N) each: every partition has its own slots and its own
 *   wake-up, so a busy partition never starves another.
 * - Cost: N + 1 connections (N blocking, 1 for commands), + 1 with `durability`
 *   ({@link openWorkerConnections}).
 * - Each engine worker sweeps its own partition (when sweeping is on).
 * - Over several partitions, a rebalance of the queue's split limits runs every
 *   {@link REBALANCE_EVERY_MS} (FlowSplit.ts); without a limit one small call every
 *   {@link REBALANCE_IDLE_MS}.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { RedisClient } from "../../redis/Client.ts"
import { makeCommands } from "../calls/Commands.ts"
import { DEFAULT_PREFIX, partitionKeys, type QueueKeys, queueKeys } from "../model/Keys.ts"
import { leastAdvanced, startWorker, type WorkerHandle, type WorkerProgram } from "../worker/Worker.ts"
import type { WorkerSettings } from "../worker/WorkerOptions.ts"
import { type DurabilitySettings, withDurability } from "./Durability.ts"
import { REBALANCE_EVERY_MS, REBALANCE_IDLE_MS, rebalance } from "./FlowSplit.ts"

/** The keys a worker serves: the queue's own, or each partition's (`partitions` > 1). */
export const servedKeys = (name: string, prefix: string = DEFAULT_PREFIX, partitions = 1): ReadonlyArray<QueueKeys> =>
  partitions <= 1
    ? [queueKeys(name, prefix)]
    : Array.from({ length: partitions }, (_, i) => partitionKeys(name, i, prefix))

/** Concurrency of each engine worker when `concurrency` is split over `partitions`: ceil(C / N). */
export const concurrencyPerPartition = (concurrency: number, partitions: number): number =>
  Math.ceil(concurrency / Math.max(1, partitions))

/**
 * One handle over several engine workers: `failed` when one of them is, else the least
 * advanced state; summed running jobs; closed, paused and resumed together.
 */
export const combineHandles = (handles: ReadonlyArray<WorkerHandle>): WorkerHandle => {
  if (handles.length === 1) return handles[0]!
  return {
    state: () => leastAdvanced(handles.map((h) => h.state())),
    running: () => handles.reduce((n, h) => n + h.running(), 0),
    close: Effect.forEach(handles, (h) => h.close, { concurrency: "unbounded", discard: true }),
    pause: (options) => Effect.forEach(handles, (h) => h.pause(options), { concurrency: "unbounded", discard: true }),
    resume: Effect.forEach(handles, (h) => h.resume, { concurrency: "unbounded", discard: true }),
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
    const startEach = Effect.gen(function* () {
      for (let i = 0; i < commands.length; i++)
        handles.push(yield* startWorker(commands[i]!, blocking[i]!, each, program))
    })
    // stopped while starting (closed before it reached every partition): close those started
    yield* startEach.pipe(Effect.onInterrupt(() => combineHandles(handles).close))
    const handle = combineHandles(handles)
    if (keys.length === 1) return handle
    // a failed rebalance (Redis away) is left to the next one: the shares stay as they are
    const balancing = yield* Effect.forkDetach(
      Effect.forever(
        rebalance(client, keys, REBALANCE_EVERY_MS - 20).pipe(
          Effect.orElseSucceed(() => "done" as const),
          Effect.flatMap((r) => Effect.sleep(r === "none" ? REBALANCE_IDLE_MS : REBALANCE_EVERY_MS)),
        ),
      ),
      { startImmediately: true },
    )
    return { ...handle, close: Effect.andThen(Fiber.interrupt(balancing), handle.close) }
  })

/** The connections a worker opens beside its command connection `base`. */
export interface WorkerConnections {
  /** `base`, or with `durability`: `base` whose completes are followed by `WAIT` on a connection of their own. */
  readonly client: RedisClient
  /** One blocking connection per served (sub-)queue, for its marker wait. */
  readonly blocking: ReadonlyArray<RedisClient>
  /** Close the connections opened here (not `base`), each within `timeoutMs` (default 1000). */
  readonly close: (timeoutMs?: number) => Promise<void>
}

/**
 * Open what a worker serving `served` (sub-)queues needs beside `base`: a blocking
 * connection for each, and with `durability` one more, so heartbeats never queue behind
 * a complete's `WAIT`. Duplicates of `base` share its error listener.
 */
export const openWorkerConnections = (
  base: RedisClient,
  served: number,
  durability: DurabilitySettings | undefined,
): WorkerConnections => {
  const durable = durability ? base.duplicate() : undefined
  const client = durability ? withDurability(base, durability, ["complete"], durable) : base
  const blocking = Array.from({ length: served }, () => base.duplicate())
  return {
    client,
    blocking,
    close: async (timeoutMs) => {
      await Promise.all([durable?.close(timeoutMs), ...blocking.map((b) => b.close(timeoutMs))])
    },
  }
}

/** The engine settings of a worker: with `durability` every complete is followed by WAIT, so it must not ride with a reserve. */
export const durableSettings = (
  settings: WorkerSettings,
  durability: DurabilitySettings | undefined,
): WorkerSettings => (durability ? { ...settings, rideAlong: false } : settings)
