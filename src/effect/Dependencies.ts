/**
 * The dependency members of the Effect face's queue service (flows: jobs that wait for
 * other jobs, docs/flows.md): `addFlow`, `addChildren`, `seal`, `getDependencies`, as the
 * Promise face's `Queue` has them. A node of this queue is encoded with the queue's codec
 * (its Schema, if any); a node of another queue as plain JSON.
 */
import * as Effect from "effect/Effect"
import type { ChildFailurePolicy, DependencyRef } from "../engine/model/Dependencies.ts"
import type { InvalidPayload } from "../engine/model/Errors.ts"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import type {
  AddChildrenOptions,
  AddFlowOptions,
  DependencyFailure,
  DependencyPage,
  FlowIds,
} from "../engine/queue/Dependencies.ts"
import { encodeFlow } from "../engine/queue/FlowPlan.ts"
import type { JobOptions } from "../engine/queue/Job.ts"
import { makePayloadCodec, type PayloadCodec } from "./Payload.ts"

/** One job of a flow (see the Promise face's `FlowJob`): `A` the payload type of the root's queue. */
export interface FlowJob<A = unknown> {
  readonly queue?: string | undefined
  readonly payload: A
  readonly options?: JobOptions | undefined
  readonly children?: ReadonlyArray<FlowJob> | undefined
  readonly dependsOn?: ReadonlyArray<DependencyRef> | undefined
  readonly onChildFailure?: ChildFailurePolicy | undefined
  readonly onFailure?: ChildFailurePolicy | undefined
  readonly open?: boolean | undefined
}

/** The dependency members of the queue service (see the top of this file). */
export interface DependencyMembers<A> {
  /** Add a parent and its children (any depth, any queue under the prefix): the tree of ids. All checked first; `options.buildTimeoutMs` as the Promise face's. */
  readonly addFlow: (
    flow: FlowJob<A>,
    options?: AddFlowOptions,
  ) => Effect.Effect<FlowIds, DependencyFailure | InvalidPayload>
  /** Give an open parent more children; `options.seal` seals it after them. */
  readonly addChildren: (
    parentId: string,
    children: ReadonlyArray<FlowJob>,
    options?: AddChildrenOptions,
  ) => Effect.Effect<ReadonlyArray<FlowIds>, DependencyFailure | InvalidPayload>
  /** Seal an open parent: it takes no more children, and runs once none is pending. */
  readonly seal: (parentId: string) => Effect.Effect<void, DependencyFailure>
  /** A page of a parent's children (`count` 1–1000, default 100; `cursor` from its last page, another parent's refused: InvalidOptions); `R` their result type as declared (each child's `value`). */
  readonly getDependencies: <R = unknown>(
    parentId: string,
    page?: { readonly cursor?: string | undefined; readonly count?: number | undefined },
  ) => Effect.Effect<DependencyPage<R>, DependencyFailure>
}

/** The members over the queue `core`, its own nodes encoded with `codec`. */
export const dependencyMembers = <A>(
  core: AnyQueue,
  codec: PayloadCodec<A>,
  maxPayloadBytes: number,
): DependencyMembers<A> => {
  const json = makePayloadCodec(undefined, maxPayloadBytes)
  const encode = (field: string, payload: unknown, queue: string | undefined) =>
    queue === undefined || queue === core.name ? codec.encode(field, payload) : json.encode(field, payload)
  return {
    addFlow: (flow, options) =>
      Effect.flatMap(encodeFlow(flow, encode), (encoded) => core.dependencies.addFlow(encoded, options)),
    addChildren: (parentId, children, options) =>
      Effect.forEach(children, (c, i) => encodeFlow(c, encode, `children[${i}]`)).pipe(
        Effect.flatMap((encoded) => core.dependencies.addChildren(parentId, encoded, options)),
      ),
    seal: (parentId) => core.dependencies.seal(parentId),
    getDependencies: <R>(
      parentId: string,
      page?: { readonly cursor?: string | undefined; readonly count?: number | undefined },
    ) => core.dependencies.getDependencies(parentId, page) as Effect.Effect<DependencyPage<R>, DependencyFailure>,
  }
}
