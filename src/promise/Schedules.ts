/**
 * The schedule calls of the Promise face's `Queue` (one of the call groups it is composed of): `schedule`,
 * `unschedule`, `schedules`. Payloads are JSON, as for `add`; the queue's
 * `maxPayloadBytes` is checked by the engine.
 */
import * as Effect from "effect/Effect"
import { encodePayload, Limits } from "../engine/model/Validate.ts"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import {
  type ScheduledJob,
  type ScheduleInfo,
  type SchedulePage,
  type SchedulePageOptions,
  type ScheduleSet,
  type ScheduleWhen,
  schedulePageWith,
  schedulesWith,
  scheduleWith,
} from "../engine/queue/Schedules.ts"

/** Recurring jobs on a queue (see docs/schedules.md); `T` is the payload's type. */
export abstract class Scheduling<T> {
  /** @internal */
  abstract readonly queue: AnyQueue

  /**
   * Create or replace schedule `name` (1-100 characters from letters, digits, `.`, `_`,
   * `:`, `-`): each tick of `when` (`{ every: ms }`, at least 1000, ticks on multiples of
   * it; or `{ cron, tz }`, tz default "UTC") makes one job `{ payload, options }`, once,
   * however many workers and `leaseq sweep` processes run. After downtime the missed
   * ticks make one job (`catchUp: n`: the latest n). A replace with the same timing keeps
   * the next run. Rejects with InvalidOptions / InvalidPayload before anything is written.
   */
  schedule(name: string, when: ScheduleWhen, job: ScheduledJob<T>): Promise<ScheduleSet> {
    const encode = (p: T) => Effect.fromResult(encodePayload("job.payload", p, Limits.payloadBytes.max))
    return Effect.runPromise(scheduleWith(this.queue.schedules, name, when, job, encode))
  }

  /** Remove schedule `name`: no later tick makes a job (jobs made stay). Resolves to false when there was none. */
  unschedule(name: string): Promise<boolean> {
    return Effect.runPromise(this.queue.schedules.unschedule(name))
  }

  /**
   * The schedules, soonest next run first, each with `nextRunAt` (ms since the epoch, Redis
   * clock). At most 1000, read page by page ({@link schedulePage}): no call reads every payload.
   */
  schedules(): Promise<ReadonlyArray<ScheduleInfo<T>>> {
    return Effect.runPromise(schedulesWith(this.queue.schedules, (p) => Effect.sync(() => JSON.parse(p) as T)))
  }

  /**
   * One page of the schedules, soonest next run first: at most `count` (1 to 100, default
   * 100) and 1 MiB of schedule JSON (at least one schedule); pass `cursor` back for the next
   * (absent on the last page).
   */
  schedulePage(options?: SchedulePageOptions): Promise<SchedulePage<T>> {
    return Effect.runPromise(
      schedulePageWith(this.queue.schedules, (p) => Effect.sync(() => JSON.parse(p) as T), options),
    )
  }
}
