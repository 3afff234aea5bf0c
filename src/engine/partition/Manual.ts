/**
 * Manual processing over a partitioned queue's partitions (each one's own, see
 * `queue/Manual.ts`): `reserve` asks the partitions in turn, from the next one each call,
 * until one answers jobs (so a call leases from one partition); a job is settled in the
 * partition whose lease holds its token, found by one read per partition (a job is in
 * exactly one). A token no partition holds goes to the partition that still has the job
 * (it refuses it there, counted as a worker's late ack is), and is refused with
 * `LeaseLost` at once when none has.
 */
import * as Effect from "effect/Effect"
import { lookups } from "../calls/Lookups.ts"
import { LeaseLost, type RedisError } from "../model/Errors.ts"
import { leased, type ManualProcessing } from "../queue/Manual.ts"
import { type QueueCore, readOnly } from "../queue/QueueCore.ts"

/** Manual processing of the partitioned queue `name` over its partitions `parts`. */
export const makePartitionedManual = (name: string, parts: ReadonlyArray<QueueCore>): ManualProcessing => {
  const look = parts.map((p) => lookups(p.calls.client, p.keys))
  let next = 0
  /** The partition to settle job `id` under `token` in, or undefined when none has the job. */
  const partitionOf = (id: string, token: number): Effect.Effect<QueueCore | undefined, RedisError> =>
    Effect.gen(function* () {
      const tokens = yield* Effect.forEach(look, (l) => l.leaseToken(id), { concurrency: "unbounded" })
      const holder = tokens.indexOf(String(token))
      if (holder >= 0) return parts[holder]
      const has = yield* Effect.forEach(
        look,
        (l) => Effect.zipWith(l.hasPayload(id), l.isCancelled(id), (a, b) => a || b),
        { concurrency: "unbounded" },
      )
      const i = has.indexOf(true)
      return i >= 0 ? parts[i] : undefined
    }).pipe(readOnly)
  const settle = <A, E>(id: string, token: number, f: (m: ManualProcessing) => Effect.Effect<A, E>) =>
    leased(id, token, (jobId, tok) =>
      Effect.flatMap(
        partitionOf(jobId, tok),
        (p): Effect.Effect<A, E | LeaseLost> =>
          p === undefined ? Effect.fail(new LeaseLost({ queue: name, jobId, token: tok })) : f(p.manual),
      ),
    )
  return {
    reserve: (options) => {
      // every partition's call numbered now: running this Effect again re-sends the same calls
      const start = next++ % parts.length
      const calls = parts.map((_, k) => parts[(start + k) % parts.length]!.manual.reserve(options))
      return Effect.gen(function* () {
        for (const call of calls) {
          const jobs = yield* call
          if (jobs.length > 0) return jobs
        }
        return []
      })
    },
    complete: (id, token, result) => settle(id, token, (m) => m.complete(id, token, result)),
    fail: (id, token, error, options) => settle(id, token, (m) => m.fail(id, token, error, options)),
    extend: (id, token, leaseMs) => settle(id, token, (m) => m.extend(id, token, leaseMs)),
    release: (id, token) => settle(id, token, (m) => m.release(id, token)),
    refuse: (job, message) =>
      Effect.flatMap(
        Effect.orElseSucceed(partitionOf(job.id, job.token), () => undefined),
        (p) => (p === undefined ? Effect.void : p.manual.refuse(job, message)),
      ),
  }
}
