/**
 * A flow checked before anything is written (flows: jobs that wait for other jobs,
 * docs/flows.md): every node's queue, payload, options and policies, the whole tree at most
 * 10,000 jobs; the first bad node's path names the field (`children[2].options.priority`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import {
  type ChildFailurePolicy,
  checkDependencyRef,
  checkFlowQueue,
  checkPolicy,
  DEFAULT_CHILD_FAILURE,
  type EncodedFlowNode,
  FLOW_NODE_KEYS,
  MAX_FLOW_NODES,
} from "../model/Dependencies.ts"
import { InvalidOptions } from "../model/Errors.ts"
import { type Checked, checkKnownKeys, checkObject } from "../model/Validate.ts"
import type { NewJob } from "../scripts/AddScripts.ts"
import { checkJobOptions, type JobOptions, newJob, type ResolvedJobOptions } from "./Job.ts"

/** The ids of a flow's jobs, as its tree. */
export interface FlowIds {
  readonly id: string
  readonly queue: string
  readonly children: ReadonlyArray<FlowIds>
}

/** One node of a flow, checked: its job ready to send. */
export interface Planned {
  readonly path: string
  readonly queue: string
  readonly job: NewJob
  /** A custom id: the job may exist already, so it is linked after its add (deps-link). */
  readonly customId: boolean
  /** Its policy as its parent's dependency. */
  readonly policy: ChildFailurePolicy
  readonly open: boolean
  readonly children: ReadonlyArray<Planned>
  readonly dependsOn: ReadonlyArray<{
    readonly queue: string
    readonly id: string
    readonly policy: ChildFailurePolicy
    readonly path: string
  }>
}

/** Whether the node waits for other jobs (it is held in waiting-children when added). */
export const waitsForChildren = (p: Planned) => p.open || p.children.length > 0 || p.dependsOn.length > 0

/** A check that failed inside {@link planFlow}'s walk (thrown, caught once at its top). */
class Refused {
  readonly error: InvalidOptions
  constructor(error: InvalidOptions) {
    this.error = error
  }
}
const must = <A>(r: Checked<A>): A => {
  if (Result.isFailure(r)) throw new Refused(r.failure)
  return r.success
}
const refuse = (field: string, value: unknown, reason: string): never => {
  throw new Refused(new InvalidOptions({ field, value, reason }))
}
/** One empty list for every node without children or dependsOn (most of a flow's: no array each). */
const NONE: ReadonlyArray<never> = Object.freeze([])

/** The items of an optional array at `field` (none when left out). */
const arrayAt = (field: string, value: unknown): ReadonlyArray<unknown> => {
  if (value === undefined) return NONE
  return Array.isArray(value) ? value : refuse(field, value, "must be an array")
}
/** `items` mapped by `f` (with its index), {@link NONE} when empty. */
const mapAll = <A, B>(items: ReadonlyArray<A>, f: (a: A, i: number) => B): ReadonlyArray<B> =>
  items.length === 0 ? NONE : items.map(f)

/** Check a whole flow before anything is written; the first bad node's path names the field. */
export const planFlow = (
  root: unknown,
  rootQueue: string,
  defaultsOf: (queue: string) => JobOptions,
  rootPath = "",
): Checked<Planned> => {
  let nodes = 0
  // a node without options takes its queue's defaults: checked once per queue, not per node
  const plain = new Map<string, ResolvedJobOptions>()
  const optionsOf = (field: string, given: unknown, queue: string): ResolvedJobOptions => {
    if (given !== undefined) return must(checkJobOptions(field, given, defaultsOf(queue)))
    const known = plain.get(queue)
    if (known) return known
    const resolved = must(checkJobOptions(field, {}, defaultsOf(queue)))
    if (resolved.id === undefined) plain.set(queue, resolved)
    return resolved
  }
  const node = (path: string, value: unknown, queue: string, policy: ChildFailurePolicy): Planned => {
    if (++nodes > MAX_FLOW_NODES)
      refuse(
        path,
        nodes,
        `a flow holds at most ${MAX_FLOW_NODES} jobs; add a larger one in parts (open: true, then addChildren)`,
      )
    const v = must(checkObject(path || "flow", value))
    must(checkKnownKeys(path || "flow", v, FLOW_NODE_KEYS))
    const at = (f: string) => (path ? `${path}.${f}` : f)
    const q = must(checkFlowQueue(at("queue"), v.queue, queue))
    if (typeof v.payload !== "string") refuse(at("payload"), v.payload, "is missing")
    const options = optionsOf(at("options"), v.options ?? undefined, q)
    if (options.dedupeKey !== "")
      refuse(
        at("options.dedupeKey"),
        options.dedupeKey,
        "is not supported in a flow (a deduplicated job would be another job); leave it out",
      )
    const own = must(checkPolicy(at("onFailure"), v.onFailure, policy))
    const theirs = must(checkPolicy(at("onChildFailure"), v.onChildFailure, DEFAULT_CHILD_FAILURE))
    if (v.open !== undefined && typeof v.open !== "boolean") refuse(at("open"), v.open, "must be true or false")
    const children = mapAll(arrayAt(at("children"), v.children), (c, i) =>
      node(`${at("children")}[${i}]`, c, q, theirs),
    )
    const dependsOn = mapAll(arrayAt(at("dependsOn"), v.dependsOn), (d, i) => {
      const p = `${at("dependsOn")}[${i}]`
      return { ...must(checkDependencyRef(p, d, q, theirs)), path: p }
    })
    return {
      path,
      queue: q,
      job: newJob(v.payload as string, options),
      customId: options.id !== undefined,
      policy: own,
      open: v.open === true,
      children,
      dependsOn,
    }
  }
  try {
    return Result.succeed(node(rootPath, root, rootQueue, DEFAULT_CHILD_FAILURE))
  } catch (e) {
    if (e instanceof Refused) return Result.fail(e.error)
    throw e
  }
}

/** A flow as a face takes it: payloads not yet encoded (see {@link EncodedFlowNode}). */
export interface FlowNodeInput<P = unknown> extends Omit<EncodedFlowNode, "payload" | "children"> {
  readonly payload: P
  readonly children?: ReadonlyArray<FlowNodeInput> | undefined
}

/**
 * Encode every payload of a flow with `encode` (given each node's path field and queue,
 * undefined for the root's queue by default), the first error naming its path. A node that
 * is not an object is passed on as is, for {@link planFlow} to refuse by its path. An
 * encoder that answers at once (an Exit: JSON, a synchronous Schema) is read in one plain
 * walk, with no fiber per node; any other is run in order.
 */
export const encodeFlow = <E>(
  node: FlowNodeInput,
  encode: (field: string, payload: unknown, queue: string | undefined) => Effect.Effect<string, E>,
  path = "",
  inherited: string | undefined = undefined,
): Effect.Effect<EncodedFlowNode, E> => {
  // each object node's payload, in pre-order (the order the texts are read back in)
  const texts: Array<Effect.Effect<string, E>> = []
  let pending = false
  let failed: Effect.Effect<never, E> | undefined
  const walk = (n: FlowNodeInput, at: string, queue: string | undefined): void => {
    if (typeof n !== "object" || n === null || failed) return
    const q = typeof n.queue === "string" ? n.queue : queue
    const text = encode(`${at}payload`, n.payload, q)
    if (Exit.isExit(text)) {
      // a failure with nothing before it still to run is the first error: the walk stops
      if (Exit.isFailure(text) && !pending) failed = Effect.asVoid(text) as Effect.Effect<never, E>
    } else pending = true
    texts.push(text)
    const children = n.children
    if (Array.isArray(children)) for (let i = 0; i < children.length; i++) walk(children[i]!, `${at}children[${i}].`, q)
  }
  walk(node, path ? `${path}.` : "", inherited)
  if (failed) return failed
  const build = (values: ReadonlyArray<string>): EncodedFlowNode => {
    let k = 0
    const copy = (n: FlowNodeInput): EncodedFlowNode => {
      if (typeof n !== "object" || n === null) return n as unknown as EncodedFlowNode
      const payload = values[k++]!
      if (!Array.isArray(n.children)) return { ...n, payload } as EncodedFlowNode
      const children: EncodedFlowNode[] = new Array(n.children.length)
      for (let i = 0; i < n.children.length; i++) children[i] = copy(n.children[i]!)
      return { ...n, payload, children } as EncodedFlowNode
    }
    return copy(node)
  }
  if (!pending) return Effect.succeed(build(texts.map((t) => (t as Exit.Success<string>).value)))
  return Effect.map(
    Effect.forEach(texts, (t) => t),
    build,
  )
}
