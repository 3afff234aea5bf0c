/**
 * Writing a checked flow (FlowPlan.ts) in bounded script calls, in an order that lets no
 * parent run early and leaves none waiting for ever after a crash part-way:
 * - a child in its parent's queue is added in the same add call as its parent, or a later
 *   one, and registered with it by that add (atomically); a parent whose children all come
 *   in its own call is sealed at that call's end: a flow in one queue of at most
 *   10,000 jobs (addBulk's bound) is one call, all or nothing;
 * - a child in another queue (or with a custom id: it may exist already, deps-link) is
 *   registered on its parent's queue (deps-children) after the parent's add and before its own;
 * - any other parent is added held open with a build deadline from the Redis clock
 *   (`buildTimeoutMs`, lua/include/deps-build.lua) and sealed by the flow's last calls
 *   (deps-seal); a flow whose writer stopped before them is never sealed, and the sweep
 *   fails its parents past the deadline (reason `flow-incomplete`).
 * A job that exists (`dependsOn`, a custom id) is linked by deps-link, atomically with reading
 * its state; a finished one is applied to its parent at once (deps-apply).
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { runScript } from "../calls/Commands.ts"
import { lookups } from "../calls/Lookups.ts"
import { Scripts } from "../calls/Scripts.ts"
import { DEFAULT_CHILD_FAILURE } from "../model/Dependencies.ts"
import { InvalidOptions } from "../model/Errors.ts"
import { type QueueKeys, queueKeys } from "../model/Keys.ts"
import type { ChildRef, LinkState, Note } from "../scripts/DepsScripts.ts"
import type { FlowIds, Planned } from "./FlowPlan.ts"
import { holdsOf, type Placed, planCalls, type Step, sealCalls } from "./FlowSteps.ts"

/** What a linked job's state means to its parent. */
const outcomeOf = (state: LinkState): Note["outcome"] | undefined =>
  state === "linked" ? undefined : state === "missing" ? "removed" : state

/** The script calls of a flow on one client, over the queues of `prefix`. */
const flowCalls = (client: RedisClient, prefix: string) => {
  const keysOf = new Map<string, QueueKeys>()
  const keys = (queue: string) => {
    const known = keysOf.get(queue)
    if (known) return known
    const k = queueKeys(queue, prefix)
    keysOf.set(queue, k)
    return k
  }
  const refOf = (parentQueue: string, queue: string) => (queue === parentQueue ? "" : queue)
  /** Jobs that exist become children of `parent`: linked, and the finished ones applied at once. */
  const link = (parent: { readonly queue: string; readonly id: string }, queue: string, ids: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      // deps-link answers a completed job's result (for the parent's edge) and stops once
      // its answer passes 1 MiB: the rest are sent again
      for (let from = 0; from < ids.length; ) {
        const rest = ids.slice(from)
        const states = yield* runScript(client, keys(queue), Scripts.depsLink, {
          parentQueue: refOf(queue, parent.queue),
          parent: parent.id,
          ids: rest,
        })
        const notes: Note[] = []
        states.forEach((s, i) => {
          const outcome = outcomeOf(s.state)
          if (outcome)
            notes.push({
              parent: parent.id,
              queue: refOf(parent.queue, queue),
              child: rest[i]!,
              outcome,
              result: s.result === "" ? undefined : s.result,
            })
        })
        if (notes.length > 0) yield* runScript(client, keys(parent.queue), Scripts.depsApply, notes)
        if (states.length === 0) break
        from += states.length
      }
    })
  return { keys, refOf, link }
}

/** Most children one deps-children call registers, parents one deps-seal call seals, in a flow. */
const FLOW_CHUNK = 1000

const chunks = <A>(items: ReadonlyArray<A>, size = FLOW_CHUNK): ReadonlyArray<ReadonlyArray<A>> => {
  const out: A[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

type FlowCalls = ReturnType<typeof flowCalls>

/** `items` by `key`, in first-seen order. */
const groupBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string): Map<string, A[]> => {
  const out = new Map<string, A[]>()
  for (const a of items) {
    const k = key(a)
    const g = out.get(k)
    if (g) g.push(a)
    else out.set(k, [a])
  }
  return out
}

/** Every job depended on exists (read before any write; one gone after this read counts as removed). */
const checkDependedOn = (client: RedisClient, calls: FlowCalls, nodes: ReadonlyArray<Planned>) =>
  Effect.forEach(
    nodes.flatMap((p) => p.dependsOn),
    (d) =>
      Effect.flatMap(lookups(client, calls.keys(d.queue)).hasPayload(d.id), (found) =>
        found
          ? Effect.void
          : Effect.fail(
              new InvalidOptions({
                field: d.path,
                value: d.id,
                reason: `no job ${d.id} in queue ${d.queue} (a completed job counts only while retained)`,
              }),
            ),
      ),
    { discard: true },
  )

/** How long a multi-call flow may take to write before the sweep fails its parents (default of `buildTimeoutMs`). */
export const DEFAULT_FLOW_BUILD_MS = 60_000

/** Why deps-children refused, as the error a caller gets. */
const notTaking = (p: Planned, status: "NOT_WAITING" | "SEALED") =>
  new InvalidOptions({
    field: p.path || "parentId",
    value: p.job.id,
    reason:
      status === "SEALED"
        ? `job ${p.job.id} of queue ${p.queue} is sealed: it takes no more children`
        : `job ${p.job.id} of queue ${p.queue} is not waiting for children (add it with open: true)`,
  })

/** The error of a flow that took longer to write than its build deadline (the sweep failed a parent meanwhile). */
const buildExpired = (p: Planned, buildMs: number) =>
  new InvalidOptions({
    field: "buildTimeoutMs",
    value: buildMs,
    reason: `the flow took longer to write than this: the sweep failed its parent ${p.job.id} of queue ${p.queue} (reason flow-incomplete); give a larger buildTimeoutMs`,
  })

/** Register `refs` with the parent `p` on its queue, in calls of at most FLOW_CHUNK (`seal` on the last). */
const register = (
  client: RedisClient,
  calls: FlowCalls,
  p: Planned,
  refs: ReadonlyArray<ChildRef>,
  seal: boolean,
  onRefused: (status: "NOT_WAITING" | "SEALED") => InvalidOptions,
) =>
  Effect.gen(function* () {
    const parts = refs.length === 0 ? [[]] : chunks(refs)
    for (let i = 0; i < parts.length; i++) {
      const answer = yield* runScript(client, calls.keys(p.queue), Scripts.depsChildren, {
        parent: p.job.id,
        seal: seal && i === parts.length - 1,
        children: parts[i]!,
      })
      if (answer.status !== "ok") return yield* Effect.fail(onRefused(answer.status))
    }
  })

/**
 * Write a checked flow (see the order above); `rootStored`: the root is a parent stored
 * already (addChildren: its children are registered on it, and it is sealed last when
 * `sealStored`). Every `dependsOn` job is looked up first: a missing one fails
 * {@link InvalidOptions} naming its path, and nothing is written.
 */
export const writeFlow = (
  client: RedisClient,
  prefix: string,
  root: Planned,
  rootStored = false,
  buildMs = DEFAULT_FLOW_BUILD_MS,
  sealStored = false,
) =>
  Effect.gen(function* () {
    const calls = flowCalls(client, prefix)
    const plan = planCalls(root, rootStored)
    yield* checkDependedOn(
      client,
      calls,
      plan.all.map((n) => n.p),
    )
    const { holds, seals } = holdsOf(plan, buildMs)
    const refused = (p: Planned) => (status: "NOT_WAITING" | "SEALED") =>
      (rootStored && p === root) || p.customId ? notTaking(p, status) : buildExpired(p, buildMs)
    // siblings alike (hold, policy, queue, custom id or not: what the text is made of) share one
    // deps text: a parent's children, one string, not one each
    let last: { parent: Planned; hold: string; child: Planned; text: string } | undefined
    const alike = (a: Planned, b: Planned) => a.policy === b.policy && a.queue === b.queue && a.customId === b.customId
    const depsOf = ({ p, parent }: Placed): string => {
      const hold = holds.get(p)!
      if (!parent) return `${hold};`
      if (last?.parent === parent && last.hold === hold && alike(last.child, p)) return last.text
      const ref = `${calls.refOf(p.queue, parent.queue)}|${parent.job.id}`
      const text = `${hold};${ref}${plan.explicit(p, parent) ? "" : `;${p.policy}`}`
      last = { parent, hold, child: p, text }
      return text
    }
    const send = (step: Step) =>
      Effect.gen(function* () {
        if (step.kind === "register") {
          const refs = step.children.map((c) => ({
            queue: calls.refOf(step.parent.queue, c.queue),
            id: c.job.id,
            policy: c.policy,
          }))
          return yield* register(client, calls, step.parent, refs, false, refused(step.parent))
        }
        const jobs = step.nodes.map((n) => ({ ...n.p.job, deps: depsOf(n) }))
        yield* runScript(client, calls.keys(step.queue), Scripts.add, { requestId: crypto.randomUUID(), jobs })
        // a custom id may name a job that exists: it is linked (recorded once, whichever ran)
        for (const { p, parent } of step.nodes)
          if (p.customId && parent)
            yield* calls.link({ queue: parent.queue, id: parent.job.id }, step.queue, [p.job.id])
      })
    // the jobs that exist which a node depends on: registered, then linked (a finished one applied)
    const dependOn = (p: Planned) =>
      Effect.gen(function* () {
        const refs = p.dependsOn.map((d) => ({ queue: calls.refOf(p.queue, d.queue), id: d.id, policy: d.policy }))
        yield* register(client, calls, p, refs, false, refused(p))
        for (const [queue, ds] of groupBy(p.dependsOn, (d) => d.queue))
          for (const part of chunks(ds.map((d) => d.id)))
            yield* calls.link({ queue: p.queue, id: p.job.id }, queue, part)
      })
    const seal = (part: ReadonlyArray<Planned>) =>
      Effect.gen(function* () {
        const answers = yield* runScript(
          client,
          calls.keys(part[0]!.queue),
          Scripts.depsSeal,
          part.map((p) => ({ id: p.job.id, keepOpen: p.open })),
        )
        const expired = answers.findIndex((a) => a !== "ok")
        if (expired >= 0) return yield* Effect.fail(buildExpired(part[expired]!, buildMs))
      })
    yield* Effect.forEach(plan.steps, send, { discard: true })
    yield* Effect.forEach(
      plan.all.filter((n) => n.p.dependsOn.length > 0),
      (n) => dependOn(n.p),
      { discard: true },
    )
    yield* Effect.forEach(sealCalls(seals, plan.depthOf, FLOW_CHUNK), seal, { discard: true })
    if (rootStored && sealStored) yield* register(client, calls, root, [], true, refused(root))
    const ids = (p: Planned): FlowIds => ({ id: p.job.id, queue: p.queue, children: p.children.map(ids) })
    return ids(root)
  })

/**
 * Give the open parent `parentId` of `queue` more children (new jobs, and jobs that exist),
 * and seal it when `seal` (after them). Fails {@link InvalidOptions} when the parent does not
 * wait for children or is sealed (nothing written).
 */
export const writeChildren = (
  client: RedisClient,
  prefix: string,
  queue: string,
  parentId: string,
  children: ReadonlyArray<Planned>,
  dependsOn: Planned["dependsOn"],
  seal: boolean,
  buildMs = DEFAULT_FLOW_BUILD_MS,
) =>
  writeFlow(
    client,
    prefix,
    {
      path: "",
      queue,
      // the parent's job is stored already: only its id is used
      job: { id: parentId, payload: "", delayMs: 0, maxAttempts: 3, dedupeKey: "", dedupeTtlMs: 0 },
      customId: false,
      policy: DEFAULT_CHILD_FAILURE,
      open: true,
      children,
      dependsOn,
    },
    true,
    buildMs,
    seal,
  )
