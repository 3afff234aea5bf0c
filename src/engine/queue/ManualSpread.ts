/**
 * How manual processing (`Manual.ts`) spreads over a partitioned queue's partitions
 * ({@link MANUAL_SPREAD}, applied by partition/FanOut.ts): `reserve` asks the partitions in
 * turn, from the next one each call, until one answers jobs (so a call leases from one
 * partition); a job is settled in the partition whose lease holds its token, found by one
 * read per partition (a job is in exactly one). A token no partition holds goes to the
 * partition that still has the job (it refuses it there, counted as a worker's late ack
 * is), and is refused with `LeaseLost` at once when none has.
 */
import * as Effect from "effect/Effect"
import { lookups } from "../calls/Lookups.ts"
import { LeaseLost, type RedisError } from "../model/Errors.ts"
import { readOnly } from "./Adding.ts"
import { leased, type ManualProcessing } from "./Manual.ts"
import type { Partitions, SpreadTable } from "./Spread.ts"

/** The index of the partition to settle job `id` under `token` in, or undefined when none has the job. */
const holderOf = (at: Partitions, id: string, token: number): Effect.Effect<number | undefined, RedisError> =>
  Effect.gen(function* () {
    const look = at.cores.map((p) => lookups(p.calls.client, p.keys))
    const tokens = yield* Effect.forEach(look, (l) => l.leaseToken(id), { concurrency: "unbounded" })
    const holder = tokens.indexOf(String(token))
    if (holder >= 0) return holder
    const has = yield* Effect.forEach(
      look,
      (l) => Effect.zipWith(l.hasPayload(id), l.isCancelled(id), (a, b) => a || b),
      {
        concurrency: "unbounded",
      },
    )
    const i = has.indexOf(true)
    return i >= 0 ? i : undefined
  }).pipe(readOnly)

/** A settle of job `id` under `token` (`f`: the call on the holder's manual processing), checked first. */
const settle =
  <A, E>(each: ReadonlyArray<ManualProcessing>, at: Partitions, f: (m: ManualProcessing) => Effect.Effect<A, E>) =>
  (id: string, token: number) =>
    leased(id, token, (jobId, tok) =>
      Effect.flatMap(
        holderOf(at, jobId, tok),
        (i): Effect.Effect<A, E | LeaseLost> =>
          i === undefined ? Effect.fail(new LeaseLost({ queue: at.name, jobId, token: tok })) : f(each[i]!),
      ),
    )

/** Manual processing over the partitions (see the top of this file). */
export const MANUAL_SPREAD: SpreadTable<ManualProcessing> = {
  reserve: {
    over: "custom",
    run: (each) => {
      let next = 0
      return (options) => {
        // every partition's call numbered now: running this Effect again re-sends the same calls
        const start = next++ % each.length
        const calls = each.map((_, k) => each[(start + k) % each.length]!.reserve(options))
        return Effect.gen(function* () {
          for (const call of calls) {
            const jobs = yield* call
            if (jobs.length > 0) return jobs
          }
          return []
        })
      }
    },
  },
  complete: {
    over: "custom",
    run: (each, at) => (id, token, result) => settle(each, at, (m) => m.complete(id, token, result))(id, token),
  },
  fail: {
    over: "custom",
    run: (each, at) => (id, token, error, options) =>
      settle(each, at, (m) => m.fail(id, token, error, options))(id, token),
  },
  extend: {
    over: "custom",
    run: (each, at) => (id, token, leaseMs) => settle(each, at, (m) => m.extend(id, token, leaseMs))(id, token),
  },
  release: {
    over: "custom",
    run: (each, at) => (id, token) => settle(each, at, (m) => m.release(id, token))(id, token),
  },
  refuse: {
    over: "custom",
    run: (each, at) => (job, message) =>
      Effect.flatMap(
        Effect.orElseSucceed(holderOf(at, job.id, job.token), () => undefined),
        (i) => (i === undefined ? Effect.void : each[i]!.refuse(job, message)),
      ),
  },
}
