/**
 * The calls a checked flow (FlowPlan.ts) is written in, planned before any is sent
 * (FlowWrite.ts sends them): level by level, each queue's nodes batched into add calls of at
 * most addBulk's bound (so a flow in one queue is one call); a child in another queue than
 * its parent, or with a custom id, is registered apart on its parent's queue (deps-children)
 * after the parent's add and before its own.
 */
import { Limits } from "../model/Validate.ts"
import { type Planned, waitsForChildren } from "./FlowPlan.ts"

/** Most jobs one add call of a flow sends: addBulk's bound. */
const FLOW_ADD_CHUNK = Limits.bulk

/** A node to add, with the parent it tells (none for a flow's root). */
export interface Placed {
  readonly p: Planned
  readonly parent: Planned | undefined
}

/** One step of a flow's write, in order: an add call on one queue, or children registered on a parent's queue. */
export type Step =
  | { readonly kind: "add"; readonly queue: string; readonly nodes: Placed[] }
  | { readonly kind: "register"; readonly parent: Planned; readonly children: ReadonlyArray<Planned> }

/**
 * The steps of the flow `root` (`rootStored`: a parent stored already, addChildren's; not
 * added, its children all registered apart), every node with its parent and depth, and which
 * add call each node goes in.
 */
export const planCalls = (root: Planned, rootStored: boolean) => {
  const all: Placed[] = []
  const depthOf = new Map<Planned, number>()
  // each depth's nodes, left to right: the order of a walk level by level (one Placed a node)
  const levels: Placed[][] = []
  const walk = (p: Planned, parent: Planned | undefined, depth: number) => {
    const placed = { p, parent }
    all.push(placed)
    depthOf.set(p, depth)
    if (levels.length === depth) levels.push([])
    levels[depth]!.push(placed)
    for (const c of p.children) walk(c, p, depth + 1)
  }
  walk(root, undefined, 0)
  // registered by deps-children on the parent's queue, not by the child's own add (a parent
  // with a custom id may be a job that exists: deps-children refuses one not waiting)
  const explicit = (c: Planned, parent: Planned) =>
    c.queue !== parent.queue || c.customId || parent.customId || (rootStored && parent === root)
  const steps: Step[] = []
  const batches = new Map<string, Placed[]>()
  const callOf = new Map<Planned, Step>()
  const send = (queue: string) => {
    const nodes = batches.get(queue) ?? []
    const step: Step = { kind: "add", queue, nodes }
    for (const n of nodes) callOf.set(n.p, step)
    steps.push(step)
    batches.delete(queue)
  }
  // a level with children registered apart first sends what is batched (their parents must
  // exist), then registers them; then its nodes join their queue's batch
  const apart = (level: ReadonlyArray<Placed>) => {
    const regs = new Map<Planned, Planned[]>()
    for (const { p, parent } of level) {
      if (!parent || !explicit(p, parent)) continue
      const known = regs.get(parent)
      if (known) known.push(p)
      else regs.set(parent, [p])
    }
    return regs
  }
  const batch = (n: Placed) => {
    const b = batches.get(n.p.queue) ?? []
    b.push(n)
    batches.set(n.p.queue, b)
    if (b.length >= FLOW_ADD_CHUNK) send(n.p.queue)
  }
  const place = (level: ReadonlyArray<Placed>) => {
    const regs = apart(level)
    if (regs.size > 0) for (const q of [...batches.keys()]) send(q)
    for (const [parent, children] of regs) steps.push({ kind: "register", parent, children })
    for (const n of level) batch(n)
  }
  for (let depth = rootStored ? 1 : 0; depth < levels.length; depth++) place(levels[depth]!)
  for (const q of [...batches.keys()]) send(q)
  return { all, depthOf, explicit, steps, callOf, stored: rootStored ? root : undefined }
}

/** A flow's calls, as {@link planCalls} answers them. */
export type CallPlan = ReturnType<typeof planCalls>

/**
 * Each node's hold in its add (lua/include/deps-add.lua): a parent whose children all come in
 * its own call, none apart, is sealed at its end ("s", or "1" open); any other is added
 * building, with the deadline `buildMs` ("b<ms>"), and is one of `seals`.
 */
export const holdsOf = (plan: CallPlan, buildMs: number) => {
  const holds = new Map<Planned, string>()
  const seals: Planned[] = []
  for (const { p } of plan.all) {
    // a stored root (addChildren's) is not added: it is held already, and sealed by deps-children
    if (p === plan.stored) continue
    const step = plan.callOf.get(p)
    const together =
      p.dependsOn.length === 0 && p.children.every((c) => !plan.explicit(c, p) && plan.callOf.get(c) === step)
    if (!waitsForChildren(p)) holds.set(p, "0")
    else if (together) holds.set(p, p.open ? "1" : "s")
    else {
      holds.set(p, `b${buildMs}`)
      seals.push(p)
    }
  }
  return { holds, seals }
}

/**
 * The deps-seal calls of `seals`: deepest first (a cut between them leaves an ancestor
 * unsealed, which the sweep fails, never a sealed parent waiting on a child that died
 * unsealed), runs of one queue of at most `max`.
 */
export const sealCalls = (
  seals: ReadonlyArray<Planned>,
  depthOf: ReadonlyMap<Planned, number>,
  max: number,
): ReadonlyArray<ReadonlyArray<Planned>> => {
  const ordered = [...seals].sort(
    (x, y) => depthOf.get(y)! - depthOf.get(x)! || (x.queue < y.queue ? -1 : x.queue > y.queue ? 1 : 0),
  )
  const out: Planned[][] = []
  for (const p of ordered) {
    const last = out[out.length - 1]
    if (last && last[0]!.queue === p.queue && last.length < max) last.push(p)
    else out.push([p])
  }
  return out
}
