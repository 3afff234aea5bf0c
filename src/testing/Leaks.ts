/**
 * Bookkeeping of live workers, read by leak checks in tests (`leaseq/testing`).
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
