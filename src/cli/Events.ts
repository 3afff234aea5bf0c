/**
 * `leaseq events`: a queue's job events, from its events stream. Without `--follow` it
 * prints the events retained now (from `--from`, default "start") and ends; with
 * `--follow` it prints them as they are recorded (from `--from`, default "now") until
 * stopped, reading on after a lost connection from the last event it printed.
 * `--queue orders` naming a partitioned queue covers every partition, merged.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { eventStream, forEachRetainedPage, type JobEvent, validateFrom } from "../engine/events/Events.ts"
import { queueKeys } from "../engine/model/Keys.ts"
import { openQueue, targetQueues, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, escapeControl, type Io, jsonLine, toFailure } from "./Output.ts"

/** Flags of `leaseq events`. */
export interface EventsFlags extends CommonFlags {
  readonly queue: string
  /** "start", "now" or an event id; default "start", or "now" with --follow. */
  readonly from?: string
  readonly follow?: boolean
}

/** The fields of an event beyond the common ones, as `key=value` text. */
const details = (e: JobEvent): string => {
  const { eventId: _i, jobId: _j, at: _a, queue: _q, kind: _k, ...rest } = e
  return Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v.replace(/\s+/g, " ") : JSON.stringify(v)}`)
    .join(" ")
}

/**
 * One event as a line: JSON (one object per line) with --json, else `<id> <time> <queue>
 * <kind> <job> <fields>`; escaped either way (see `escapeControl`).
 */
export const formatEvent = (e: JobEvent, json: boolean): string =>
  json
    ? jsonLine(e)
    : `${escapeControl([e.eventId, new Date(e.at).toISOString(), e.queue, e.kind, e.jobId || "-", details(e)].join(" ").trimEnd())}\n`

/** Run `leaseq events`. */
export const runEvents = (io: Io, url: string, flags: EventsFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  Effect.gen(function* () {
    const from = yield* Effect.try({
      try: () => validateFrom(flags.from ?? (flags.follow ? "now" : "start")),
      catch: (e) => toFailure(e, "--from"),
    })
    return yield* withRedis(url, (client) =>
      Effect.gen(function* () {
        const names = yield* targetQueues(client, flags.prefix, [flags.queue])
        yield* Effect.forEach(names, (q) => openQueue(client, flags.prefix, q))
        const queues = names.map((q) => queueKeys(q, flags.prefix))
        // each page is written, and stdout has room again, before the next is read
        const print = (events: ReadonlyArray<JobEvent>) =>
          Effect.promise(() => {
            io.out(events.map((e) => formatEvent(e, flags.json === true)).join(""))
            return io.outReady?.() ?? Promise.resolve(true)
          })
        if (!flags.follow) {
          yield* forEachRetainedPage(client, queues, from, print)
          return ExitCode.ok
        }
        yield* eventStream(client, queues, from).pipe(Stream.runForEachWhile((e) => print([e])))
        return ExitCode.ok
      }).pipe(Effect.mapError((e) => toFailure(e, `events of queue ${flags.queue}`))),
    )
  })
