import * as Effect from "effect/Effect"
import { InvalidOptions } from "../engine/model/Errors.ts"
import { type RateLimit, validateConcurrency, validateRateLimit } from "../engine/model/Flow.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, type Io, toFailure, writeJson, writeText } from "./Output.ts"

/** Flags of `leaseq limits`. */
export interface LimitFlags extends CommonFlags {
  readonly queue: string
  readonly rate?: string
  readonly concurrency?: string
  readonly hold?: string
}

/** `--rate`: "off" clears, "<max>/<perMs>" sets (checked as setRateLimit checks it). */
export const parseRate = (text: string): RateLimit | null => {
  if (text === "off") return null
  const m = /^([^/]*)\/([^/]*)$/.exec(text)
  if (m === null)
    throw new InvalidOptions({ field: "rate", value: text, reason: 'must be "<max>/<perMs>" (e.g. 100/1000) or "off"' })
  return validateRateLimit({ max: Number(m[1]), perMs: Number(m[2]) }) as RateLimit
}

/** `--concurrency`: "off" clears, a whole number sets. */
export const parseConcurrency = (text: string): number | null =>
  text === "off" ? null : validateConcurrency(Number(text))

/** `--hold`: only "off" (lift a RateLimited hold); true when lifting. */
export const parseHold = (text: string): true => {
  if (text !== "off")
    throw new InvalidOptions({
      field: "hold",
      value: text,
      reason: 'must be "off" (lift a RateLimited hold; a hold is set only by a handler)',
    })
  return true
}

/** The text form of the limits. */
const formatLimits = (queue: string, rate: RateLimit | null, concurrency: number | null, heldMs: number): string =>
  `queue ${queue}: rate limit ${rate === null ? "none" : `${rate.max} per ${rate.perMs} ms`}, concurrency ${
    concurrency ?? "unlimited"
  }${heldMs > 0 ? `, held for ${heldMs} ms more (RateLimited)` : ""}\n`

/** Run `leaseq limits`: set what the flags say (every value checked first), then show the limits. */
export const runLimits = (io: Io, url: string, flags: LimitFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  Effect.try({
    try: () => ({
      rate: flags.rate === undefined ? undefined : parseRate(flags.rate),
      concurrency: flags.concurrency === undefined ? undefined : parseConcurrency(flags.concurrency),
      hold: flags.hold === undefined ? undefined : parseHold(flags.hold),
    }),
    catch: (e) => toFailure(e),
  }).pipe(
    Effect.flatMap((set) =>
      withRedis(url, (client) =>
        openQueueApi(client, flags.prefix, flags.queue).pipe(
          Effect.flatMap(({ api }) =>
            Effect.gen(function* () {
              if (set.rate !== undefined) yield* api.control.setRateLimit(set.rate)
              if (set.concurrency !== undefined) yield* api.control.setConcurrency(set.concurrency)
              if (set.hold) yield* api.control.clearHold
              return (yield* api.stats).limits
            }),
          ),
          Effect.mapError((e) => toFailure(e, `limits of queue ${flags.queue}`)),
        ),
      ),
    ),
    Effect.map((limits) => {
      if (flags.json) writeJson(io, { queue: flags.queue, ...limits })
      else writeText(io, formatLimits(flags.queue, limits.rateLimit, limits.concurrency, limits.heldMs))
      return ExitCode.ok
    }),
  )
