/**
 * Reads the stats of every queue under a prefix for the metrics exporter: one round
 * of `stats` calls (sent together, so one connection pipelines them), the queue list
 * found by a bounded SCAN that is redone only every `discoverEveryMs`, and each queue
 * opened (key types and layout checked) once.
 */
import * as Effect from "effect/Effect"
import { discoverQueues } from "../engine/admin/Discovery.ts"
import type { ScriptFailure } from "../engine/calls/Commands.ts"
import { type Commands, makeCommands, type QueueStats } from "../engine/calls/Commands.ts"
import type { InvalidOptions, RedisError } from "../engine/model/Errors.ts"
import { queueKeys, validatePrefix } from "../engine/model/Keys.ts"
import type { RedisClient } from "../redis/Client.ts"

/** One reading of the fleet. */
export interface FleetSnapshot {
  readonly prefix: string
  readonly queues: ReadonlyArray<QueueStats>
  /**
   * Queues found under the prefix whose keys leaseq cannot read (a key of another type, a
   * layout this version does not know), with why: reported, never a reason to show nothing.
   */
  readonly unreadable: ReadonlyArray<{ readonly queue: string; readonly reason: string }>
}

/** Options of {@link makeFleetReader}. */
export interface FleetOptions {
  readonly prefix: string
  /** Only these queues. Default: every queue under the prefix (found by SCAN). */
  readonly queues?: ReadonlyArray<string> | undefined
  /** How long a discovered queue list is reused before the next SCAN. Default 30 000 ms. */
  readonly discoverEveryMs?: number | undefined
}

/** Default of {@link FleetOptions.discoverEveryMs}. */
export const DEFAULT_DISCOVER_EVERY_MS = 30_000

/** Reads {@link FleetSnapshot}s from one client. */
export interface FleetReader {
  readonly read: Effect.Effect<FleetSnapshot, RedisError | ScriptFailure | InvalidOptions>
}

/**
 * The commands of a queue under `prefix`, opened (key types and layout checked) on first
 * use and kept: later readings of the same queue make no `open` call.
 */
export const makeOpener = (client: RedisClient, prefix: string) => {
  const opened = new Map<string, Commands>()
  return (queue: string) =>
    Effect.suspend(() => {
      const known = opened.get(queue)
      if (known !== undefined) return Effect.succeed(known)
      const commands = makeCommands(client, queueKeys(queue, prefix))
      return commands.open.pipe(
        Effect.tap(() => Effect.sync(() => opened.set(queue, commands))),
        Effect.as(commands),
      )
    })
}

/** Check the prefix and queue names (a bad one throws InvalidOptions or InvalidQueueName, naming it). */
export const checkFleetOptions = (options: FleetOptions): void => {
  validatePrefix(options.prefix)
  for (const q of options.queues ?? []) queueKeys(q, options.prefix)
}

/** Make a reader; the options are checked here too (see {@link checkFleetOptions}). */
export const makeFleetReader = (client: RedisClient, options: FleetOptions): FleetReader => {
  const prefix = options.prefix
  checkFleetOptions(options)
  const discoverEveryMs = options.discoverEveryMs ?? DEFAULT_DISCOVER_EVERY_MS
  let names: ReadonlyArray<string> | undefined = options.queues
  let discoveredAt = 0

  const queueNames = Effect.suspend(() => {
    if (options.queues !== undefined && options.queues.length > 0) return Effect.succeed(options.queues)
    if (names !== undefined && Date.now() - discoveredAt < discoverEveryMs) return Effect.succeed(names)
    return discoverQueues(client, prefix).pipe(
      Effect.tap((found) =>
        Effect.sync(() => {
          names = found
          discoveredAt = Date.now()
        }),
      ),
    )
  })

  const commandsOf = makeOpener(client, prefix)

  // a queue whose keys are not leaseq's is set aside with its reason; Redis failing fails the reading
  const statsOf = (q: string) =>
    Effect.flatMap(commandsOf(q), (c) => c.stats).pipe(
      Effect.map((stats) => ({ stats })),
      Effect.catchTags({
        WrongKeyType: (e) => Effect.succeed({ queue: q, reason: e.message }),
        LayoutMismatch: (e) => Effect.succeed({ queue: q, reason: e.message }),
      }),
    )
  const read = queueNames.pipe(
    Effect.flatMap((queues) => Effect.forEach(queues, statsOf, { concurrency: "unbounded" })),
    Effect.map(
      (each): FleetSnapshot => ({
        prefix,
        queues: each.flatMap((r) => ("stats" in r ? [r.stats] : [])),
        unreadable: each.flatMap((r) => ("stats" in r ? [] : [r])),
      }),
    ),
  )
  return { read }
}
