/**
 * The dependency calls of the Promise face's {@link Queue} (flows: jobs that wait for other
 * jobs, docs/flows.md; one of the call groups src/promise/Queue.ts is composed of): `addFlow`, `addChildren`,
 * `seal`, `getDependencies`. Not flow control (rate limit, concurrency cap: job control, `Control.ts`).
 */
import * as Effect from "effect/Effect"
import type { ChildFailurePolicy, DependencyRef, EncodedFlowNode } from "../engine/model/Dependencies.ts"
import type { InvalidPayload } from "../engine/model/Errors.ts"
import type { Checked } from "../engine/model/Validate.ts"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import type { AddChildrenOptions, AddFlowOptions, DependencyPage, FlowIds } from "../engine/queue/Dependencies.ts"
import { encodeFlow } from "../engine/queue/FlowPlan.ts"
import type { JobOptions } from "../engine/queue/Job.ts"

export type { ChildFailurePolicy, DependencyRef } from "../engine/model/Dependencies.ts"
export type { AddFlowOptions, Dependency, DependencyPage, FlowIds } from "../engine/queue/Dependencies.ts"

/** One job of a flow: its payload and options, and the jobs it waits for. */
export interface FlowJob<T = unknown> {
  /** Its queue (default: its parent's; the root's: the queue `addFlow` is called on), under the same prefix. */
  readonly queue?: string | undefined
  readonly payload: T
  /** Job options as `add` takes them (`dedupeKey` is refused in a flow). */
  readonly options?: JobOptions | undefined
  /** New jobs this one waits for, any depth. */
  readonly children?: ReadonlyArray<FlowJob> | undefined
  /** Jobs that exist which this one waits for: an id (its own queue) or `{ queue, id, onFailure }`. */
  readonly dependsOn?: ReadonlyArray<DependencyRef> | undefined
  /** What this job does when one of its children dies, is cancelled or removed (default "wait"). */
  readonly onChildFailure?: ChildFailurePolicy | undefined
  /** This job's own policy as its parent's dependency (default: the parent's `onChildFailure`). */
  readonly onFailure?: ChildFailurePolicy | undefined
  /** Keep waiting for more children (`addChildren`) until `seal` (default false). */
  readonly open?: boolean | undefined
}

/** The dependency options `add` takes beside the job options (see {@link FlowJob}). */
export interface DependencyOptions {
  readonly dependsOn?: ReadonlyArray<DependencyRef> | undefined
  readonly onChildFailure?: ChildFailurePolicy | undefined
  readonly open?: boolean | undefined
}

/** The dependency calls of a queue (see the top of this file). */
export abstract class QueueDependencies<T> {
  /** @internal */
  abstract readonly queue: AnyQueue
  /** @internal The payload as JSON text, checked against the queue's `maxPayloadBytes`. */
  abstract encodeText(field: string, payload: unknown): Checked<string, InvalidPayload>

  /** @internal A flow's payloads encoded as JSON text, each error naming its path. */
  encodeFlow(path: string, node: FlowJob<unknown>): Effect.Effect<EncodedFlowNode, InvalidPayload> {
    return encodeFlow(node, (field, payload) => Effect.fromResult(this.encodeText(field, payload)), path)
  }

  /**
   * Add a parent and its children in one call, any depth, each in any queue under this
   * queue's prefix: resolves to the tree of ids (`id` the parent's). All checked before
   * anything is written (an error names the node's path, `children[2].options.priority`);
   * written in bounded calls (a parent first, waiting for its children, then its children),
   * so no parent runs before all its children ended. At most 10,000 jobs a call; a flow in
   * one queue is one call, all or nothing. A flow over several calls that stops part-way (a
   * crash) has its parents failed by the sweep after `options.buildTimeoutMs` (default 60 s).
   */
  addFlow(flow: FlowJob<T>, options?: AddFlowOptions): Promise<FlowIds> {
    return Effect.runPromise(
      Effect.flatMap(this.encodeFlow("", flow), (encoded) => this.queue.dependencies.addFlow(encoded, options)),
    )
  }

  /** @internal `add` with dependency options: a flow of one node (undefined without them: a plain add). */
  addDependent(
    payload: string,
    options: (JobOptions & DependencyOptions) | undefined,
  ): Effect.Effect<string, unknown> | undefined {
    if (
      !options ||
      (options.dependsOn === undefined && options.open === undefined && options.onChildFailure === undefined)
    )
      return undefined
    const { dependsOn, onChildFailure, open, ...rest } = options
    return this.queue.dependencies
      .addFlow({ payload, options: rest, dependsOn, onChildFailure, open })
      .pipe(Effect.map((ids) => ids.id))
  }

  /**
   * Give the open parent `parentId` (added with `open: true`) more children; `options.seal`
   * seals it after them. Rejects with `InvalidOptions` when it is sealed or not waiting for
   * children (nothing written). Resolves to the new children's ids.
   */
  addChildren(
    parentId: string,
    children: ReadonlyArray<FlowJob>,
    options?: AddChildrenOptions,
  ): Promise<ReadonlyArray<FlowIds>> {
    return Effect.runPromise(
      Effect.forEach(children, (c, i) => this.encodeFlow(`children[${i}]`, c)).pipe(
        Effect.flatMap((encoded) => this.queue.dependencies.addChildren(parentId, encoded, options)),
      ),
    )
  }

  /** Seal the open parent `parentId`: it takes no more children, and runs once none is pending. Idempotent. */
  seal(parentId: string): Promise<void> {
    return Effect.runPromise(this.queue.dependencies.seal(parentId))
  }

  /**
   * A page of the children of `parentId`: each one's queue, id, policy, state (`pending`,
   * or the outcome that counted) and result (a retained child of this queue). `count` 1–1000
   * (default 100); pass the page's `cursor` for the next (one of another parent's pages is
   * refused: InvalidOptions, field `cursor`). O(log N + count). `R`: the
   * children's result type as you declare it (each child's `value`, decoded; not checked).
   */
  getDependencies<R = unknown>(
    parentId: string,
    page?: { readonly cursor?: string | undefined; readonly count?: number | undefined },
  ): Promise<DependencyPage<R>> {
    return Effect.runPromise(this.queue.dependencies.getDependencies(parentId, page)) as Promise<DependencyPage<R>>
  }
}
