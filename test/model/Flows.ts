/**
 * The flows of the model test (docs/flows.md) as plain data: parents in the main queue wait
 * for children in the main queue or a side queue (another hash slot on a cluster). What the
 * docs promise, and the one mechanism they name: a child's end counts once per parent; a
 * completed child in its parent's queue counts at once, every other end (and every end in the
 * other queue) is a note in its queue's outbox, applied when that queue's sweep runs; a
 * cancelled parent's pending children are cancelled by the sweep (docs/flows.md "Cancel").
 *
 * The invariants it checks after each step ({@link FlowModel.invariants}): a parent never
 * leaves waiting-children before its last dependency ended (or it failed by one), and once
 * every outbox is empty no sealed parent with nothing pending is still waiting.
 */
import type { Ending, JobHooks, Model } from "./Model.ts"

/** What a parent does when a child dies, is cancelled or removed. */
export type Policy = "wait" | "fail" | "ignore" | "remove"

/** Which queue of the model a job is in. */
export type Where = "main" | "side"

export interface Edge {
  readonly queue: Where
  readonly id: string
  readonly policy: Policy
  /** The end that counted (or was marked once the parent stopped waiting); undefined while pending. */
  outcome: Ending | undefined
  /** The child's result is kept on the edge (a child that completed while linked: in its script, or by its note). */
  kept: boolean
}

export interface FlowParent {
  readonly edges: Edge[]
  open: boolean
  /** The child that failed it (its error names it). */
  failedBy: { readonly queue: Where; readonly id: string; readonly outcome: Ending } | undefined
  /** Children any of which its error may name (told in an order the queue does not fix). */
  failedAmong?: ReadonlyArray<string>
  /** Times it was leased (a parent runs once, unless retried by hand). */
  runs: number
  /** Retried by hand (it may run again, or before its children ended). */
  retried: boolean
  /** Times it left waiting-children for ready (its `dependencies-done` events): at most once. */
  released: number
}

/** A note in an outbox: a child's end for a parent (in main), or a cancelled parent's cascade to a side child. */
type Note =
  | {
      readonly kind: "end"
      readonly parent: string
      readonly queue: Where
      readonly child: string
      readonly outcome: Ending
      /** A completed child's note carries its result (kept on the parent's edge). */
      readonly result: boolean
    }
  | { readonly kind: "parent-cancelled"; readonly child: string; readonly parent: string }

export class FlowModel {
  readonly parents = new Map<string, FlowParent>()
  /** Each job's parents record (depParents): the parents (in main) it tells when it ends. */
  readonly parentsOf: Record<Where, Map<string, string[]>> = { main: new Map(), side: new Map() }
  readonly outbox: Record<Where, Note[]> = { main: [], side: [] }
  /** Parents cancelled with their children, whose cascade the main sweep has not run yet. */
  readonly cascade: string[] = []
  /** Side children queued to be cancelled by the side's sweep. */
  readonly sideCancel: string[] = []
  /**
   * The side queue's command set learnt main as its fan-in peer (calls/FanIn.ts: from a
   * complete's answer that carried a note for a parent in main): from then on a side child's
   * completion counts for its parents in its own script, as one in main does.
   */
  sidePeer = false
  /** The step's side completion left such a note (its answer teaches the peer when it arrives). */
  teaches = false
  readonly main: Model
  readonly side: Model

  constructor(main: Model, side: Model) {
    this.main = main
    this.side = side
    main.hooks = this.#hooks("main")
    side.hooks = this.#hooks("side")
  }

  /** Whether a flow was ever made (the harness reads the side queue and dependencies only then). */
  get used(): boolean {
    return this.parents.size > 0
  }

  model(where: Where): Model {
    return where === "main" ? this.main : this.side
  }

  #hooks(where: Where): JobHooks {
    return {
      ended: (id, outcome) => this.#ended(where, id, outcome),
      dropped: (ids, forget) => {
        for (const id of ids) {
          const ps = this.parentsOf[where].get(id)
          this.parentsOf[where].delete(id)
          if (forget || ps === undefined) continue
          for (const p of ps)
            this.outbox[where].push({
              kind: "end",
              parent: p,
              queue: where,
              child: id,
              outcome: "removed",
              result: false,
            })
        }
      },
      cancelledParent: (id) => {
        this.cascade.push(id)
      },
    }
  }

  #ended(where: Where, id: string, outcome: Ending): void {
    for (const p of this.parentsOf[where].get(id) ?? []) {
      // a completed child in its parent's queue counts in its own script; every other end is a note
      // (so does a side child once main is the side's fan-in peer)
      if (outcome === "completed" && (where === "main" || this.sidePeer)) this.apply(p, where, id, outcome, true)
      else {
        this.outbox[where].push({
          kind: "end",
          parent: p,
          queue: where,
          child: id,
          outcome,
          result: outcome === "completed",
        })
        if (outcome === "completed") this.teaches = true
      }
    }
  }

  /** A side completion's answer arrived (`delivered`; a lost reply's re-send carries no notes): a note it carried teaches the peer. */
  answered(delivered: boolean): void {
    if (delivered && this.teaches) this.sidePeer = true
    this.teaches = false
  }

  // ---- building -----------------------------------------------------------------------

  /** A new parent (already added to main, in waiting-children). */
  hold(id: string, open: boolean): void {
    this.parents.set(id, { edges: [], open, failedBy: undefined, runs: 0, retried: false, released: 0 })
  }

  /** `child` (in `queue`) becomes a child of `parent` with `policy`: registered, linked (counted once). */
  link(parent: string, queue: Where, child: string, policy: Policy): void {
    const p = this.parents.get(parent)!
    if (!p.edges.some((e) => e.queue === queue && e.id === child))
      p.edges.push({ queue, id: child, policy, outcome: undefined, kept: false })
    const ps = this.parentsOf[queue].get(child) ?? []
    if (!ps.includes(parent)) ps.push(parent)
    this.parentsOf[queue].set(child, ps)
  }

  /** A job that exists linked as a dependency: a finished one is applied to the parent at once (deps-link, deps-apply). */
  linkExisting(parent: string, queue: Where, child: string, policy: Policy): void {
    this.link(parent, queue, child, policy)
    const st = this.model(queue).state(child)
    // deps-link answers a completed job's result: kept on the edge
    if (st === "completed" || st === "dead" || st === "cancelled")
      this.apply(parent, queue, child, st, st === "completed")
  }

  /** The parent is sealed: it takes no more children, and runs once none is pending. */
  seal(parent: string): void {
    const p = this.parents.get(parent)!
    if (!p.open) return
    p.open = false
    this.#releaseIfDone(parent)
  }

  /** Whether `parent` waits for children and takes more (addChildren's check). */
  taking(parent: string): "ok" | "NOT_WAITING" | "SEALED" {
    if (this.main.state(parent) !== "waiting-children") return "NOT_WAITING"
    return this.parents.get(parent)?.open === true ? "ok" : "SEALED"
  }

  // ---- a child's end ---------------------------------------------------------------------

  pending(parent: string): number {
    return this.parents.get(parent)?.edges.filter((e) => e.outcome === undefined).length ?? 0
  }

  #releaseIfDone(parent: string): void {
    const p = this.parents.get(parent)!
    if (p.open || this.pending(parent) > 0 || this.main.state(parent) !== "waiting-children") return
    p.released++
    this.main.releaseParent(parent)
  }

  /** deps_apply: a child's end, once per parent; its policy decides for one that did not complete. `result`: it came with its result (kept on the edge). */
  apply(parent: string, queue: Where, child: string, outcome: Ending, result = false): void {
    const p = this.parents.get(parent)
    const e = p?.edges.find((x) => x.queue === queue && x.id === child)
    if (p === undefined || e === undefined || e.outcome !== undefined) return
    e.kept = result
    if (this.main.state(parent) !== "waiting-children") {
      e.outcome = outcome
      return
    }
    if (outcome !== "completed") {
      // "wait": a dead child may be retried; a cancelled or removed one can never complete
      if (e.policy === "wait" && outcome === "dead") return
      if (e.policy === "fail" || e.policy === "wait") {
        e.outcome = outcome
        p.failedBy = { queue, id: child, outcome }
        this.main.failParent(parent)
        return
      }
    }
    e.outcome = outcome
    this.#releaseIfDone(parent)
  }

  // ---- the sweeps -------------------------------------------------------------------------

  /** The main sweep's flow work, after its reclaims: the cascade, then the outbox as it stands. */
  sweepMain(): void {
    // one script, one instant: the jobs it cancels share a finish time (the queue orders them by id)
    const stamp = this.main.stamp()
    // the work list is one ZSET: cancelled parents (score 1) before queued children (2), ties by id
    const queued = new Set<string>()
    while (this.cascade.length > 0 || queued.size > 0) {
      if (this.cascade.length > 0) {
        this.cascade.sort()
        const pid = this.cascade.shift()!
        for (const e of this.parents.get(pid)?.edges ?? []) if (e.outcome === undefined) this.#cascadeTo(pid, e, queued)
      } else {
        const id = [...queued].sort()[0]!
        queued.delete(id)
        this.#cancelQueued(id, stamp)
      }
    }
    this.drain("main")
  }

  /** A queued child of main: cancelled unless another parent still waits on it. */
  #cancelQueued(id: string, stamp: number): void {
    // kept while another parent waits on it (one of another queue always counts: none here)
    const wanted = (this.parentsOf.main.get(id) ?? []).some((q) => this.main.state(q) === "waiting-children")
    if (!wanted) this.main.cancel(id, true, stamp)
  }

  /** The cascade of the cancelled parent `pid` to its pending child `e`. */
  #cascadeTo(pid: string, e: Edge, queued: Set<string>): void {
    if (e.queue === "side") {
      this.outbox.main.push({ kind: "parent-cancelled", child: e.id, parent: pid })
      return
    }
    if (!this.parentsOf.main.has(e.id)) return
    this.#unlink("main", e.id, pid)
    queued.add(e.id)
  }

  /** The side sweep: its queued cascade cancels, then its outbox as it stands. */
  sweepSide(): void {
    const stamp = this.side.stamp()
    for (const id of this.sideCancel.splice(0).sort()) {
      // a parent of another queue (all of them: parents live in main) is taken as waiting
      if ((this.parentsOf.side.get(id) ?? []).length > 0) continue
      this.side.cancel(id, true, stamp)
    }
    this.drain("side")
  }

  #unlink(where: Where, child: string, parent: string): void {
    const left = (this.parentsOf[where].get(child) ?? []).filter((p) => p !== parent)
    if (left.length === 0) this.parentsOf[where].delete(child)
    else this.parentsOf[where].set(child, left)
  }

  /** Apply the notes of `where`'s outbox as they stand (notes these leave wait for the next drain). */
  drain(where: Where): void {
    const notes = this.outbox[where].splice(0)
    for (const n of notes) {
      if (n.kind === "end") this.apply(n.parent, n.queue, n.child, n.outcome, n.result)
      else if (this.parentsOf.side.has(n.child)) {
        this.#unlink("side", n.child, n.parent)
        if (!this.sideCancel.includes(n.child)) this.sideCancel.push(n.child)
      }
    }
  }

  /** The main queue obliterated: its outbox applied first (docs/flows.md), then every record of it gone. */
  obliterateMain(): void {
    this.drain("main")
    this.parents.clear()
    this.parentsOf.main.clear()
    this.outbox.main.length = 0
    this.cascade.length = 0
  }

  /** For each parent, its pending side children whose removal fails it. */
  #failing(): Map<string, string[]> {
    const failing = new Map<string, string[]>()
    for (const [child, ps] of this.parentsOf.side)
      for (const pid of ps) {
        const e = this.parents.get(pid)?.edges.find((x) => x.queue === "side" && x.id === child)
        const fails = e !== undefined && e.outcome === undefined && (e.policy === "wait" || e.policy === "fail")
        if (fails) failing.set(pid, [...(failing.get(pid) ?? []), child])
      }
    return failing
  }

  /**
   * The side queue obliterated: its outbox applied first, then every parent of one of its jobs
   * told the child is `removed` (in the order of the parents records), then its records gone.
   */
  obliterateSide(): void {
    this.drain("side")
    // which of a parent's children is told first is the order of a hash scan: any of those
    // that would fail it may be the one its error names
    const failing = this.#failing()
    for (const [child, ps] of [...this.parentsOf.side]) for (const p of ps) this.apply(p, "side", child, "removed")
    for (const [pid, children] of failing) {
      const p = this.parents.get(pid)!
      if (p.failedBy?.queue === "side" && children.includes(p.failedBy.id)) p.failedAmong = children
    }
    this.parentsOf.side.clear()
    this.outbox.side.length = 0
    this.sideCancel.length = 0
  }

  /** Leased: counted (the harness checked it was eligible). */
  leased(id: string): void {
    const p = this.parents.get(id)
    if (p) p.runs++
  }

  /**
   * The flows' invariants, on the model itself: a parent left waiting-children only when no
   * dependency is pending and it is sealed, or failed by a child, or by an operator's call;
   * with every outbox and cascade empty, a sealed parent with nothing pending does not wait.
   * Answers the violations.
   */
  invariants(): string[] {
    const out: string[] = []
    const settled =
      this.outbox.main.length === 0 &&
      this.outbox.side.length === 0 &&
      this.cascade.length === 0 &&
      this.sideCancel.length === 0
    for (const [id, p] of this.parents) {
      const st = this.main.state(id)
      if (st === "waiting-children" && settled && !p.open && this.pending(id) === 0)
        out.push(`parent ${id} is sealed, nothing pending, outboxes empty, and still waits`)
      if (!p.retried && p.runs > 0 && p.edges.some((e) => e.outcome === undefined))
        out.push(`parent ${id} ran with a dependency pending`)
      if (p.released > 1) out.push(`parent ${id} released ${p.released} times`)
    }
    return out
  }
}
