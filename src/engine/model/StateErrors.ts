/**
 * Refusals of a call by the state it found: a group already at its maxSize (an add), a
 * worker no longer running (resume). Re-exported by Errors.ts with every other tagged error.
 */
import * as Data from "effect/Data"

/**
 * `worker.resume()` on a worker that is not paused or running: it is closing, closed or
 * failed, and takes no more jobs (start a new worker).
 */
export class WorkerNotRunning extends Data.TaggedError("WorkerNotRunning")<{
  readonly queue: string
  readonly state: string
}> {
  override get message() {
    return `the worker of queue ${this.queue} is ${this.state}: only a paused or running worker can resume; start a new worker`
  }
}

/**
 * An add past a group's `maxSize` (`setGroupLimits(group, { maxSize })`, or the default
 * group limits): the group holds `size` jobs waiting, and the call's jobs of that group would
 * pass `maxSize`. Nothing was added (in `addBulk`, none of the jobs).
 */
export class GroupFull extends Data.TaggedError("GroupFull")<{
  readonly group: string
  readonly maxSize: number
  readonly size: number
}> {
  override get message() {
    return `group ${JSON.stringify(this.group)} is full: it holds ${this.size} jobs waiting, its maxSize is ${this.maxSize}; nothing was added (raise maxSize with setGroupLimits, or add later)`
  }
}
