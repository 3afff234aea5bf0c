/**
 * A Queue or Worker (Promise face) whose close is registered the moment it is made, so a
 * failed assertion still closes it, and the leak check after the test
 * (test/support/setup-each.ts) reports only what the test really left open.
 *
 * Both take the constructor's arguments; `connection` defaults to the suite's Redis
 * (`redisUrl()`) when the options do not name one. A test may still `await x.close()`
 * where closing is part of what it checks: close is idempotent, the cleanup then does nothing.
 */
import type { Job } from "../../src/engine/queue/Job.ts"
import { Queue, type QueueOptions, Worker, type WorkerOptions } from "../../src/index.ts"
import { onCleanup } from "./cleanup.ts"
import { redisUrl } from "./redis.ts"

const withSuiteRedis = <O extends { readonly connection?: unknown }>(options: O): O =>
  "connection" in options ? options : { ...options, connection: redisUrl() }

/** `new Queue(name, options)` on the suite's Redis unless `options.connection` says otherwise; closed after the test. */
export const useQueue = <T = unknown>(name: string, options: QueueOptions = {}): Queue<T> => {
  const queue = new Queue<T>(name, withSuiteRedis(options))
  onCleanup(() => queue.close())
  return queue
}

/** `new Worker(name, handler, options)` on the suite's Redis unless `options.connection` says otherwise; closed after the test. */
export const useWorker = <T = unknown, R = unknown>(
  name: string,
  handler: (job: Job<T>) => Promise<R> | R,
  options: WorkerOptions = {},
): Worker<T, R> => {
  const worker = new Worker<T, R>(name, handler, withSuiteRedis(options))
  onCleanup(() => worker.close())
  return worker
}
