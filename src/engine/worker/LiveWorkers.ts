/**
 * The workers running in this process: the engine records each one as it starts and
 * as it closes; leak checks read the count (`liveWorkers`, exported by `leaseq/testing`).
 */
const workers = new Set<object>()

/** Record a worker as running (the engine calls this). */
export const trackWorker = (worker: object): void => {
  workers.add(worker)
}

/** Record a worker as closed (the engine calls this). */
export const untrackWorker = (worker: object): void => {
  workers.delete(worker)
}

/** How many leaseq workers are running in this process. */
export const liveWorkers = (): number => workers.size
