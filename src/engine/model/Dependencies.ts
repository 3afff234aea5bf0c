/**
 * Dependencies between jobs (flows: a parent that waits for its children; docs/flows.md),
 * the words and the checks: a flow's tree as a caller gives it, its size bound, the failure
 * policies. Not flow control (`Flow.ts`: rate limit, concurrency cap).
 */
import * as Result from "effect/Result"
import { InvalidOptions } from "./Errors.ts"
import { isQueueName } from "./QueueName.ts"
import type { Checked } from "./Validate.ts"

/**
 * What a parent does when a child dies, is cancelled or removed (BullMQ's names beside):
 * - `"wait"` (the default): keep waiting; a dead child can be retried by hand and its
 *   completion then counts (BullMQ's default). A cancelled or removed child can never
 *   complete: it fails the parent, so no parent waits for ever.
 * - `"fail"`: the parent dies at once, its error naming the child (`failParentOnFailure`).
 * - `"ignore"`: the child counts as done; the parent reads its outcome (`ignoreDependencyOnFailure`).
 * - `"remove"`: the child counts as done and leaves the parent's children (`removeDependencyOnFail`).
 */
export type ChildFailurePolicy = "fail" | "ignore" | "remove" | "wait"

/** The policies, in the order the docs list them. */
export const CHILD_FAILURE_POLICIES: ReadonlyArray<ChildFailurePolicy> = ["wait", "fail", "ignore", "remove"]

/** The default {@link ChildFailurePolicy}: `"wait"`. */
export const DEFAULT_CHILD_FAILURE: ChildFailurePolicy = "wait"

/** Most jobs one `addFlow` call adds (each node of the tree is one job). */
export const MAX_FLOW_NODES = 10_000

/** A job that already exists, named as a dependency: its id (in the parent's queue) or its queue and id. */
export type DependencyRef =
  | string
  | { readonly queue?: string | undefined; readonly id: string; readonly onFailure?: ChildFailurePolicy | undefined }

/** One node of a flow, its payload encoded (JSON text) by the face. */
export interface EncodedFlowNode {
  /** The node's queue (default: its parent's; the root's: the queue `addFlow` is called on). */
  readonly queue?: string | undefined
  readonly payload: string
  /** Job options, as `add` takes them (a dedupe key is refused in a flow). */
  readonly options?: unknown
  /** New jobs this one waits for (each any depth, any queue under the prefix). */
  readonly children?: ReadonlyArray<EncodedFlowNode> | undefined
  /** Jobs that already exist which this one waits for. */
  readonly dependsOn?: ReadonlyArray<DependencyRef> | undefined
  /** The default policy of this job's dependencies (default {@link DEFAULT_CHILD_FAILURE}). */
  readonly onChildFailure?: ChildFailurePolicy | undefined
  /** This node's own policy as its parent's dependency (default: its parent's `onChildFailure`). */
  readonly onFailure?: ChildFailurePolicy | undefined
  /** Keep the job waiting for more children (`addChildren`) until `seal` (default false). */
  readonly open?: boolean | undefined
}

const bad = (field: string, value: unknown, reason: string) => Result.fail(new InvalidOptions({ field, value, reason }))

/** A policy given at `field`, or its default. */
export const checkPolicy = (
  field: string,
  value: unknown,
  fallback: ChildFailurePolicy,
): Checked<ChildFailurePolicy> => {
  if (value === undefined) return Result.succeed(fallback)
  return CHILD_FAILURE_POLICIES.includes(value as ChildFailurePolicy)
    ? Result.succeed(value as ChildFailurePolicy)
    : bad(
        field,
        value,
        `must be one of ${CHILD_FAILURE_POLICIES.map((p) => `"${p}"`).join(", ")} (or left out: "wait")`,
      )
}

/** A queue name given at `field`, or `fallback`. */
export const checkFlowQueue = (field: string, value: unknown, fallback: string): Checked<string> => {
  if (value === undefined) return Result.succeed(fallback)
  return typeof value === "string" && isQueueName(value)
    ? Result.succeed(value)
    : bad(field, value, "must be a queue name (1–100 characters from letters, digits, '.', '_' and '-')")
}

/** A dependency on an existing job, checked: its queue (default `queue`), id and policy. */
export const checkDependencyRef = (
  field: string,
  value: unknown,
  queue: string,
  policy: ChildFailurePolicy,
): Checked<{ readonly queue: string; readonly id: string; readonly policy: ChildFailurePolicy }> => {
  if (typeof value === "string") {
    return value.length > 0 && value.length <= 128 && !/[|,]/.test(value)
      ? Result.succeed({ queue, id: value, policy })
      : bad(field, value, "must be a job id (or { queue, id })")
  }
  if (typeof value !== "object" || value === null) return bad(field, value, "must be a job id or { queue, id }")
  const v = value as Record<string, unknown>
  for (const k of Object.keys(v)) {
    if (k !== "queue" && k !== "id" && k !== "onFailure")
      return bad(`${field}.${k}`, v[k], "is not an option of a dependency (queue, id, onFailure)")
  }
  if (typeof v.id !== "string" || v.id.length === 0 || v.id.length > 128 || /[|,]/.test(v.id))
    return bad(`${field}.id`, v.id, "must be a job id")
  const q = checkFlowQueue(`${field}.queue`, v.queue, queue)
  if (Result.isFailure(q)) return Result.fail(q.failure)
  const p = checkPolicy(`${field}.onFailure`, v.onFailure, policy)
  if (Result.isFailure(p)) return Result.fail(p.failure)
  return Result.succeed({ queue: q.success, id: v.id, policy: p.success })
}

/** The keys a flow node may have. */
export const FLOW_NODE_KEYS = [
  "queue",
  "payload",
  "options",
  "children",
  "dependsOn",
  "onChildFailure",
  "onFailure",
  "open",
] as const

/** How a child ended, as its parent counted it. */
export type ChildOutcome = "completed" | "dead" | "cancelled" | "removed"

/**
 * A child of a parent, as `dependencies()` and `getDependencies` answer it; `R` the child's
 * result type as the caller declares it (`job.dependencies<R>()`, not checked: default unknown).
 */
export interface Dependency<R = unknown> {
  readonly queue: string
  readonly id: string
  readonly policy: ChildFailurePolicy
  /** "pending" until it counted, else the outcome that counted: completed, dead, cancelled, removed. */
  readonly state: "pending" | ChildOutcome
  /**
   * The result (JSON text) of a completed child, kept on the parent's edge as the child ended
   * (≤ 64 KiB), or read where the child is retained in the parent's queue; undefined without one.
   */
  readonly result: string | undefined
  /**
   * The size in bytes of a result past 64 KiB, which the edge does not keep (`result` then
   * undefined: read it with `getJob` in the child's queue while it is retained); else undefined.
   */
  readonly resultBytes: number | undefined
  /** That result decoded from its JSON text, typed `R` as declared; undefined without one. */
  readonly value: R | undefined
}

/** A page of a parent's children (`R`: their result type, as {@link Dependency}). */
export interface DependencyPage<R = unknown> {
  readonly children: ReadonlyArray<Dependency<R>>
  /** Pass it back for the next page; undefined at the end. */
  readonly cursor: string | undefined
  /** Children still pending. */
  readonly pending: number
  /** True while the parent takes more children (`open`, until `seal`). */
  readonly open: boolean
  /** True while the parent waits for children (`waiting-children`). */
  readonly waiting: boolean
}

/** Which page of a parent's children to read: `count` 1–1000 (default 100), `cursor` from the last page of the same parent (another's is refused). */
export interface DependencyPageOptions {
  readonly cursor?: string | undefined
  readonly count?: number | undefined
}
