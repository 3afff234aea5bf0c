/**
 * The group calls of the Promise face's `Queue` (one of the call groups it is composed of):
 * `setGroupLimits`, `pauseGroup`, `resumeGroup`, `groups` (add's `group` option; see
 * docs/flow-control.md).
 */
import * as Effect from "effect/Effect"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import { type GroupLimits, type GroupPage, setGroupLimitsOn } from "../engine/queue/Groups.ts"

export type { GroupInfo, GroupLimits, GroupPage } from "../engine/queue/Groups.ts"

/** Fair groups of a queue; `T` is the payload type. */
export abstract class Grouping {
  /** @internal */
  abstract readonly queue: AnyQueue

  /**
   * `setGroupLimits({ concurrency, max, perMs, maxSize })`: the default limits of every group;
   * `setGroupLimits(group, { … })`: one group's own, replacing the default for it; `null`
   * clears. Rejects with InvalidOptions naming the field before anything is written.
   */
  setGroupLimits(group: string | GroupLimits | null, limits?: GroupLimits | null): Promise<void> {
    return Effect.runPromise(setGroupLimitsOn(this.queue.groupControl, group, limits))
  }

  /** Lease none of `group`'s jobs until {@link resumeGroup} (its running jobs go on); false when paused already. O(log N). */
  pauseGroup(group: string): Promise<boolean> {
    return Effect.runPromise(this.queue.groupControl.pauseGroup(group))
  }

  /** Serve `group` again, waking idle workers; false when it was not paused. O(log N). */
  resumeGroup(group: string): Promise<boolean> {
    return Effect.runPromise(this.queue.groupControl.resumeGroup(group))
  }

  /** A page of the groups in name order (waiting, active, paused, own limits), from `cursor`; `count` 1–1000, default 100. */
  groups(options: { readonly cursor?: string; readonly count?: number } = {}): Promise<GroupPage> {
    return Effect.runPromise(this.queue.groupControl.groups(options))
  }
}
