/**
 * `leaseq workers [--queue <q>]…`: the live workers of every queue under the prefix (or
 * of those named), as their heartbeats recorded them (read-only). A partitioned queue's
 * name stands for all its partitions; each worker of it is listed once per partition it serves.
 */
import * as Effect from "effect/Effect"
import type { WorkerInfo } from "../engine/model/Registry.ts"
import { openQueue, targetQueues, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import {
  type CliFailure,
  duration,
  ExitCode,
  type ExitCodeValue,
  type Io,
  table,
  toFailure,
  writeJson,
  writeText,
} from "./Output.ts"

/** Flags of `leaseq workers`. */
export interface WorkersFlags extends CommonFlags {
  /** `--queue`, repeatable; absent: every queue under the prefix (as `stats`). */
  readonly queue?: ReadonlyArray<string>
}

/** A live worker and the (sub-)queue it was found in. */
export interface ListedWorker extends WorkerInfo {
  readonly queue: string
}

/** The one JSON object `leaseq workers --json` prints. */
export interface WorkersReport {
  /** The queue named, when exactly one `--queue` was given. */
  readonly queue?: string
  /** The queues read (every queue under the prefix when none was named). */
  readonly queues: ReadonlyArray<string>
  /** Redis time of the read (ms), to age `lastSeenAt` by. */
  readonly now: number
  readonly workers: ReadonlyArray<ListedWorker>
}

/** The text form of a workers report. */
export const formatWorkers = (r: WorkersReport): string => {
  if (r.workers.length === 0)
    return r.queue !== undefined
      ? `no live workers on queue ${r.queue}\n`
      : `no live workers on ${r.queues.length === 1 ? "queue" : "queues"} ${r.queues.join(", ") || "(none found)"}\n`
  const rows = r.workers.map((w) => [
    w.id,
    w.queue,
    w.state,
    `${w.running}/${w.concurrency}`,
    `${duration(Math.max(0, r.now - w.lastSeenAt))} ago`,
    new Date(w.startedAt).toISOString(),
  ])
  return table(["WORKER", "QUEUE", "STATE", "RUNNING", "LAST SEEN", "STARTED"], rows)
}

/** Run `leaseq workers`. */
export const runWorkers = (io: Io, url: string, flags: WorkersFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  withRedis(url, (client) =>
    Effect.gen(function* () {
      const queues = yield* targetQueues(client, flags.prefix, flags.queue)
      const workers: ListedWorker[] = []
      let now = 0
      for (const queue of queues) {
        const listed = yield* openQueue(client, flags.prefix, queue).pipe(
          Effect.flatMap((c) => c.workers),
          Effect.mapError((e) => toFailure(e, `reading the workers of queue ${queue}`)),
        )
        now = Math.max(now, listed.now)
        for (const w of listed.workers) workers.push({ ...w, queue })
      }
      const one = flags.queue?.length === 1 ? { queue: flags.queue[0] as string } : {}
      return { ...one, queues, now, workers }
    }),
  ).pipe(
    Effect.map((r: WorkersReport) => {
      if (flags.json) writeJson(io, r)
      else writeText(io, formatWorkers(r))
      return ExitCode.ok
    }),
  )
