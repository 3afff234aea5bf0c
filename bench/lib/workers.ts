import type { Adapter, RunningWorker, WorkerOptions } from "../adapters/types.ts"

/** The most jobs one worker instance holds; more in flight means more worker instances. */
export const PER_WORKER = 5_000

/**
 * Start enough worker instances of one library to hold `total` jobs at once
 * (each at most PER_WORKER): the way a real deployment gets that many jobs
 * in flight, and it keeps a peer's one-job-at-a-time fetch from taking minutes.
 */
export const startWorkers = async (
  a: Adapter,
  queue: string,
  total: number,
  options: Omit<WorkerOptions, "concurrency">,
): Promise<RunningWorker> => {
  const count = Math.max(1, Math.ceil(total / PER_WORKER))
  const each = Math.ceil(total / count)
  const ws: RunningWorker[] = []
  for (let i = 0; i < count; i++) ws.push(await a.worker(queue, { ...options, concurrency: each }))
  return {
    async close() {
      await Promise.all(ws.map((w) => w.close()))
    },
  }
}
