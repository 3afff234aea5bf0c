/**
 * Writing a checked flow (FlowPlan.ts) in bounded script calls, in an order that lets no
 * parent run early: a parent is added waiting for children and open; then its children are
 * registered on its queue (counted pending) and it is sealed; then its children are added,
 * each recording its parent atomically with its add. Level by level, so a child that is a
 * parent is itself open until its own children are registered. A job that exists
 * (`dependsOn`, a custom id) is linked by deps-link, atomically with reading its state; a
 * finished one is applied to its parent at once (deps-apply).
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { lookups, runScript } from "../calls/Commands.ts"
import { Scripts } from "../calls/Scripts.ts"
import { DEFAULT_CHILD_FAILURE } from "../model/Dependencies.ts"
import { InvalidOptions } from "../model/Errors.ts"
import { type QueueKeys, queueKeys } from "../model/Keys.ts"
import type { ChildRef, LinkState, Note } from "../scripts/DepsScripts.ts"
import { type FlowIds, type Planned, waitsForChildren } from "./FlowPlan.ts"

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
      if (ids.length === 0) return
      const states = yield* runScript(client, keys(queue), Scripts.depsLink, {
        parentQueue: refOf(queue, parent.queue),
        parent: parent.id,
        ids,
      })
      const notes: Note[] = []
      states.forEach((s, i) => {
        const outcome = outcomeOf(s)
        if (outcome) notes.push({ parent: parent.id, queue: refOf(parent.queue, queue), child: ids[i]!, outcome })
      })
      if (notes.length > 0) yield* runScript(client, keys(parent.queue), Scripts.depsApply, notes)
    })
  return { keys, refOf, link }
}

/** Most children one deps-children call registers, and jobs one add call sends, in a flow. */
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

/** A node to add, with the parent it tells (none for a flow's root). */
interface Placed {
  readonly p: Planned
  readonly parent: Planned | undefined
}

/** Add the nodes of one level, each recording its parent, by queue in calls of at most FLOW_CHUNK. */
const addLevel = (client: RedisClient, calls: FlowCalls, level: ReadonlyArray<Placed>) =>
  Effect.forEach(
    groupBy(level, (n) => n.p.queue),
    ([queue, nodes]) =>
      Effect.gen(function* () {
        for (const part of chunks(nodes)) {
          const jobs = part.map(({ p, parent }) => ({
            ...p.job,
            deps: `${waitsForChildren(p) ? 1 : 0};${parent ? `${calls.refOf(p.queue, parent.queue)}|${parent.job.id}` : ""}`,
          }))
          yield* runScript(client, calls.keys(queue), Scripts.add, { requestId: crypto.randomUUID(), jobs })
        }
        // a custom id may name a job that exists: it is linked (recorded once, whichever ran)
        for (const { p, parent } of nodes)
          if (p.customId && parent) yield* calls.link({ queue: parent.queue, id: parent.job.id }, queue, [p.job.id])
      }),
    { discard: true },
  )

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

/** Register a parent's children on its queue (sealing it unless open), then link the jobs it depends on. */
const registerParent = (client: RedisClient, calls: FlowCalls, p: Planned) =>
  Effect.gen(function* () {
    const refs: ChildRef[] = [
      ...p.children.map((c) => ({ queue: calls.refOf(p.queue, c.queue), id: c.job.id, policy: c.policy })),
      ...p.dependsOn.map((d) => ({ queue: calls.refOf(p.queue, d.queue), id: d.id, policy: d.policy })),
    ]
    const parts = refs.length === 0 ? [[]] : chunks(refs)
    for (let i = 0; i < parts.length; i++) {
      const answer = yield* runScript(client, calls.keys(p.queue), Scripts.depsChildren, {
        parent: p.job.id,
        seal: !p.open && i === parts.length - 1,
        children: parts[i]!,
      })
      if (answer.status !== "ok") return yield* Effect.fail(notTaking(p, answer.status))
    }
    for (const [queue, ds] of groupBy(p.dependsOn, (d) => d.queue))
      for (const part of chunks(ds.map((d) => d.id))) yield* calls.link({ queue: p.queue, id: p.job.id }, queue, part)
  })

/**
 * Write a checked flow (see the order above); `rootStored`: the root is a parent stored
 * already (addChildren). Every `dependsOn` job is looked up first: a missing one fails
 * {@link InvalidOptions} naming its path, and nothing is written.
 */
export const writeFlow = (client: RedisClient, prefix: string, root: Planned, rootStored = false) =>
  Effect.gen(function* () {
    const calls = flowCalls(client, prefix)
    const all: Planned[] = []
    const walk = (p: Planned) => {
      all.push(p)
      p.children.forEach(walk)
    }
    walk(root)
    yield* checkDependedOn(client, calls, all)
    if (!rootStored) yield* addLevel(client, calls, [{ p: root, parent: undefined }])
    // a stored root (addChildren, seal) is registered even with nothing new: its seal goes there
    const registers = (p: Planned) => waitsForChildren(p) || (rootStored && p === root)
    let level: ReadonlyArray<Planned> = [root]
    while (level.length > 0) {
      for (const p of level.filter(registers)) yield* registerParent(client, calls, p)
      const next = level.flatMap((p) => p.children.map((c) => ({ p: c, parent: p })))
      if (next.length > 0) yield* addLevel(client, calls, next)
      level = next.map((n) => n.p)
    }
    const ids = (p: Planned): FlowIds => ({ id: p.job.id, queue: p.queue, children: p.children.map(ids) })
    return ids(root)
  })

/**
 * Give the open parent `parentId` of `queue` more children (new jobs, and jobs that exist),
 * and seal it when `seal`. Fails {@link InvalidOptions} when the parent does not wait for
 * children or is sealed (nothing written).
 */
export const writeChildren = (
  client: RedisClient,
  prefix: string,
  queue: string,
  parentId: string,
  children: ReadonlyArray<Planned>,
  dependsOn: Planned["dependsOn"],
  seal: boolean,
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
      open: !seal,
      children,
      dependsOn,
    },
    true,
  )
