/**
 * Dependencies (flows: jobs that wait for other jobs; docs/flows.md), the calls of one
 * queue: add a tree of jobs over queues of one prefix (checked in FlowPlan.ts, written in
 * FlowWrite.ts), depend on jobs that exist, give an open parent more children and seal it,
 * read a parent's children, drain the outbox (admin/Outbox.ts). Not flow control
 * (`model/Flow.ts`: rate limit, concurrency cap).
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { drainOutbox } from "../admin/Outbox.ts"
import type { ScriptFailure } from "../calls/Commands.ts"
import { readDependencies } from "../calls/DependencyPage.ts"
import type { ChildFailurePolicy, DependencyPage, EncodedFlowNode } from "../model/Dependencies.ts"
import { InvalidOptions, QueueClosed, type RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { checkKnownKeys, checkObject } from "../model/Validate.ts"
import { type FlowIds, type Planned, planFlow } from "./FlowPlan.ts"
import { DEFAULT_FLOW_BUILD_MS, writeChildren, writeFlow } from "./FlowWrite.ts"
import type { JobOptions } from "./Job.ts"

export type { Dependency, DependencyPage } from "../model/Dependencies.ts"
export type { FlowIds } from "./FlowPlan.ts"

/** What the dependency calls can fail with. */
export type DependencyFailure = InvalidOptions | QueueClosed | ScriptFailure | RedisError

/** Options of `addChildren`. */
export interface AddChildrenOptions {
  /** Jobs that exist which the parent waits for too. */
  readonly dependsOn?: ReadonlyArray<unknown> | undefined
  /** Seal the parent after these children (default false: it stays open). */
  readonly seal?: boolean | undefined
  /** The default policy of these dependencies (default "wait"). */
  readonly onChildFailure?: ChildFailurePolicy | undefined
}

/** Options of `addFlow`. */
export interface AddFlowOptions {
  /**
   * A flow written in several calls (over several queues, or with custom ids or `dependsOn`)
   * must be written within this many ms of its first call (Redis clock); past it, the sweep
   * fails its unsealed parents (reason `flow-incomplete`), so a writer that stopped part-way
   * leaves none waiting for ever. 1,000 to 3,600,000; default 60,000.
   */
  readonly buildTimeoutMs?: number | undefined
}

/** The dependency calls of one queue (flows: docs/flows.md), as Effects; payloads as JSON text. */
export interface DependencyControl {
  /** Add a parent and its children (any depth, any queue under the prefix): the tree of ids. */
  readonly addFlow: (root: EncodedFlowNode, options?: AddFlowOptions) => Effect.Effect<FlowIds, DependencyFailure>
  /** Give an open parent more children (and dependencies on jobs that exist); `seal` seals it after. */
  readonly addChildren: (
    parentId: string,
    children: ReadonlyArray<EncodedFlowNode>,
    options?: AddChildrenOptions,
  ) => Effect.Effect<ReadonlyArray<FlowIds>, DependencyFailure>
  /** Seal an open parent: it takes no more children and runs once none is pending. */
  readonly seal: (parentId: string) => Effect.Effect<void, DependencyFailure>
  /** A page of a parent's children (paged by `cursor`, `count` 1–1000, default 100). */
  readonly getDependencies: (
    parentId: string,
    page?: { readonly cursor?: string | undefined; readonly count?: number | undefined },
  ) => Effect.Effect<DependencyPage, DependencyFailure>
  /** Apply the notes this queue's finished children left for parents elsewhere (the sweep does it too): how many. */
  readonly drainOutbox: Effect.Effect<number, DependencyFailure>
}

/** The dependency calls of the queue `name` (keys `keys`) on `client` (each call bounded by the caller's client). */
export const makeDependencyControl = (c: {
  readonly name: string
  readonly keys: QueueKeys
  readonly client: RedisClient
  readonly defaultJobOptions: JobOptions
  readonly isClosed: () => boolean
}): DependencyControl => {
  const defaultsOf = (queue: string) => (queue === c.name ? c.defaultJobOptions : {})
  const guard = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | QueueClosed> =>
    Effect.suspend(
      (): Effect.Effect<A, E | QueueClosed> =>
        c.isClosed() ? Effect.fail(new QueueClosed({ queue: c.name })) : effect,
    )
  const checkId = (id: unknown): Effect.Effect<string, InvalidOptions> =>
    typeof id === "string" && id.length > 0 && id.length <= 128 && !/[|,]/.test(id)
      ? Effect.succeed(id)
      : Effect.fail(new InvalidOptions({ field: "parentId", value: id, reason: "must be a job id" }))
  const children = (parentId: string, nodes: ReadonlyArray<EncodedFlowNode>, options: AddChildrenOptions) =>
    guard(
      Effect.gen(function* () {
        const id = yield* checkId(parentId)
        const o = yield* Effect.fromResult(checkObject("options", options))
        yield* Effect.fromResult(checkKnownKeys("options", o, ["dependsOn", "seal", "onChildFailure"]))
        // the children as the children of a flow node: checked whole before any write
        const planned = yield* Effect.fromResult(
          planFlow(
            {
              payload: "",
              children: nodes,
              ...(options.dependsOn === undefined ? {} : { dependsOn: options.dependsOn }),
              ...(options.onChildFailure === undefined ? {} : { onChildFailure: options.onChildFailure }),
            },
            c.name,
            defaultsOf,
            "",
          ),
        )
        yield* writeChildren(
          c.client,
          c.keys.prefix,
          c.name,
          id,
          planned.children,
          planned.dependsOn,
          options.seal === true,
        )
        const ids = (p: Planned): FlowIds => ({ id: p.job.id, queue: p.queue, children: p.children.map(ids) })
        return planned.children.map(ids)
      }),
    )
  return {
    addFlow: (root, options = {}) =>
      guard(
        Effect.gen(function* () {
          const o = yield* Effect.fromResult(checkObject("options", options))
          yield* Effect.fromResult(checkKnownKeys("options", o, ["buildTimeoutMs"]))
          const buildMs = options.buildTimeoutMs ?? DEFAULT_FLOW_BUILD_MS
          if (!Number.isInteger(buildMs) || buildMs < 1000 || buildMs > 3_600_000)
            return yield* Effect.fail(
              new InvalidOptions({
                field: "buildTimeoutMs",
                value: buildMs,
                reason: "must be a whole number of ms from 1000 to 3600000",
              }),
            )
          const planned = yield* Effect.fromResult(planFlow(root, c.name, defaultsOf))
          return yield* writeFlow(c.client, c.keys.prefix, planned, false, buildMs)
        }),
      ),
    addChildren: (parentId, nodes, options = {}) => children(parentId, nodes, options),
    seal: (parentId) => Effect.asVoid(children(parentId, [], { seal: true })),
    getDependencies: (parentId, page) =>
      guard(Effect.flatMap(checkId(parentId), (id) => readDependencies(c.client, c.keys, id, page))),
    drainOutbox: guard(drainOutbox(c.client, c.keys)),
  }
}

/** The dependency calls of a partitioned queue: refused (a flow names a job by queue and id; a partitioned queue's jobs have no one queue). */
export const partitionedDependencies = (name: string): DependencyControl => {
  const refuse = Effect.fail(
    new InvalidOptions({
      field: "queue",
      value: name,
      reason: "is a partitioned queue: flows (addFlow, dependsOn, addChildren) need an ordinary queue",
    }),
  )
  return {
    addFlow: () => refuse,
    addChildren: () => refuse,
    seal: () => refuse,
    getDependencies: () => refuse,
    drainOutbox: Effect.succeed(0),
  }
}
