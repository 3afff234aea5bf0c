/**
 * The queue as its user docs promise it (docs/jobs.md, flow-control.md, operations.md,
 * concepts.md), as plain data: no Redis, no Effect. Each method is one documented call and
 * answers what the docs say it answers; `eligible` answers which jobs a reserve may lease.
 * test/model/model.test.ts runs random command lists against this and a real queue side by side.
 *
 * Time: the model never reads a clock. Every instant it is given (a delayed job's due time, a
 * lease deadline) is a range [lo, hi] on the Redis clock, measured around the real call; the
 * harness keeps every time-dependent call clear of a range (it waits until the Redis clock
 * passed it), so `now` is never inside one. Rate windows are `WINDOW_MS` long: they never
 * end within one command list, so a window's count is exact.
 */

/** The states of a job (docs/jobs.md, "Look up a job"; `waiting-children`: docs/flows.md). */
export type State = "waiting" | "delayed" | "active" | "completed" | "cancelled" | "dead" | "waiting-children"
export const STATES: ReadonlyArray<State> = [
  "waiting",
  "delayed",
  "active",
  "completed",
  "cancelled",
  "dead",
  "waiting-children",
]

/** How a job left for good, as its parents are told (docs/flows.md): `removed` when its data was deleted. */
export type Ending = "completed" | "dead" | "cancelled" | "removed"

/**
 * What the flows' model (test/model/Flows.ts) is told of a queue's jobs: a job ended (its
 * parents get a note), its data was deleted (`forget`: a completed job not retained, whose
 * parents record goes first, no note), or a parent waiting for children was cancelled.
 */
export interface JobHooks {
  ended(id: string, outcome: Ending): void
  dropped(ids: ReadonlyArray<string>, forget: boolean): void
  cancelledParent(id: string): void
}

/** A rate window long enough never to end within one command list. */
export const WINDOW_MS = 600_000

/** A closed range of Redis-clock ms: an instant known only to lie between two reads of the clock. */
export interface Span {
  readonly lo: number
  readonly hi: number
}

export interface ModelJob {
  readonly id: string
  state: State
  priority: number
  readonly group: string | undefined
  /** Order among the ready jobs of its priority: lower runs first (the back: a rising number; the front: a falling one). */
  order: number
  /** When a delayed job becomes due. */
  due: Span
  token: number
  deadline: Span
  failures: number
  lost: number
  readonly maxAttempts: number
  /** Order of finishing, for retention by count (oldest first). */
  finished: number
  /** Its delay once released from waiting-children (a parent of a flow: long, or none). */
  releaseDelay?: boolean
  /** Its payload as added or last updated (undefined: not followed, a flow's job). */
  payload?: unknown
}

export interface GroupLimits {
  readonly concurrency?: number | undefined
  readonly max?: number | undefined
  /** At most this many of the group's jobs waiting: an add past it is refused (GroupFull), nothing written. */
  readonly maxSize?: number | undefined
}

/** What a reserve may lease: the ungrouped jobs in strict order, each group's ready jobs and its room, and how many one call takes. */
export interface Eligible {
  readonly ungrouped: ReadonlyArray<string>
  readonly groups: ReadonlyMap<string, { readonly ids: ReadonlyArray<string>; readonly room: number }>
  readonly total: number
}

const INF = Number.POSITIVE_INFINITY

export class Model {
  readonly jobs = new Map<string, ModelJob>()
  /** Every id ever added, in order, gone or not (the ones to look up). */
  readonly known: string[] = []
  paused = false
  concurrency: number | undefined
  rateMax: number | undefined
  /** Leases counted by the queue's rate window (while a rate limit is set). */
  rateCount = 0
  /** A RateLimited hold: until when nothing is leased (hi end; INF: longer than any command list). */
  heldUntil = 0
  groupDefault: GroupLimits | undefined
  readonly groupOwn = new Map<string, GroupLimits>()
  readonly groupPaused = new Set<string>()
  /** Leases of each group in its current window (windows never end within a command list). */
  readonly groupWindow = new Map<string, number>()
  retention = { completed: 1000, cancelled: 1000 }
  /** The flows' model, told of ends and deletes (none: a queue without flows). */
  hooks: JobHooks | undefined
  #seq = 0
  #fin = 0

  // ---- reading ----------------------------------------------------------------

  state(id: string): State | undefined {
    return this.jobs.get(id)?.state
  }

  inState(state: State): ModelJob[] {
    return [...this.jobs.values()].filter((j) => j.state === state)
  }

  /** The groups `groups()` must list with jobs: waiting or active, or paused. */
  groupCounts(): Map<string, { waiting: number; active: number; paused: boolean }> {
    const out = new Map<string, { waiting: number; active: number; paused: boolean }>()
    const at = (g: string) => {
      const c = out.get(g) ?? { waiting: 0, active: 0, paused: this.groupPaused.has(g) }
      out.set(g, c)
      return c
    }
    for (const g of this.groupPaused) at(g)
    for (const j of this.jobs.values()) {
      if (j.group === undefined) continue
      if (j.state === "waiting") at(j.group).waiting++
      if (j.state === "active") at(j.group).active++
    }
    return out
  }

  /** Every instant a time-dependent call must stay clear of: due times of delayed jobs, deadlines of leases. */
  spans(): Span[] {
    const out: Span[] = []
    for (const j of this.jobs.values()) {
      if (j.state === "delayed") out.push(j.due)
      if (j.state === "active") out.push(j.deadline)
    }
    return out.filter((s) => Number.isFinite(s.hi))
  }

  #limitsOf(group: string): GroupLimits | undefined {
    return this.groupOwn.get(group) ?? this.groupDefault
  }

  /** Which jobs a reserve of `count` may lease at `now` (after it promoted the due delayed jobs), and how many it takes. */
  eligible(count: number, now: number): Eligible {
    this.#promoteDue(now)
    const ready = this.inState("waiting")
    const active = this.inState("active")
    let room = count
    if (this.paused || this.heldUntil > now) room = 0
    if (this.concurrency !== undefined) room = Math.min(room, this.concurrency - active.length)
    if (this.rateMax !== undefined) room = Math.min(room, this.rateMax - this.rateCount)
    const ungrouped = ready
      .filter((j) => j.group === undefined)
      .sort((a, b) => a.priority - b.priority || a.order - b.order)
      .map((j) => j.id)
    const groups = new Map<string, { ids: string[]; room: number }>()
    for (const j of ready) {
      if (j.group === undefined) continue
      const g = groups.get(j.group) ?? { ids: [], room: this.#groupRoom(j.group, active) }
      g.ids.push(j.id)
      groups.set(j.group, g)
    }
    let can = ungrouped.length
    for (const g of groups.values()) can += Math.min(g.room, g.ids.length)
    return { ungrouped, groups, total: Math.max(0, Math.min(room, can)) }
  }

  #groupRoom(group: string, active: ReadonlyArray<ModelJob>): number {
    if (this.groupPaused.has(group)) return 0
    const limits = this.#limitsOf(group)
    let room = INF
    if (limits?.concurrency !== undefined) room = limits.concurrency - active.filter((j) => j.group === group).length
    if (limits?.max !== undefined) room = Math.min(room, limits.max - (this.groupWindow.get(group) ?? 0))
    return Math.max(0, room)
  }

  // ---- adding -------------------------------------------------------------------

  /**
   * The refusal of an add of a new job to `group` (GroupFull) when the group's limits (own, or
   * the default) set a maxSize its jobs waiting already reach; undefined when the add goes in
   * (no group, no maxSize, room, or `id` of a job still findable: that add adds nothing).
   */
  groupFull(
    group: string | undefined,
    id: string | undefined,
  ): { group: string; maxSize: number; size: number } | undefined {
    if (group === undefined || (id !== undefined && this.jobs.has(id))) return undefined
    const maxSize = this.#limitsOf(group)?.maxSize
    if (maxSize === undefined) return undefined
    const size = this.inState("waiting").filter((j) => j.group === group).length
    return size + 1 > maxSize ? { group, maxSize, size } : undefined
  }

  /** `add`: a new job, or (a custom id of a job still findable) nothing: answers the id either way. */
  add(
    id: string,
    o: {
      priority: number
      lifo: boolean
      group: string | undefined
      delay: Span | undefined
      maxAttempts: number
      /** A parent: it waits for children (its delay, long, applies once released). */
      hold?: boolean
      /** Its payload, to check what reserve answers (default: not followed). */
      payload?: unknown
    },
  ): string {
    if (this.jobs.has(id)) return id
    if (!this.known.includes(id)) this.known.push(id)
    const job: ModelJob = {
      id,
      state: o.hold === true ? "waiting-children" : o.delay === undefined ? "waiting" : "delayed",
      priority: o.priority,
      group: o.group,
      order: o.lifo && o.delay === undefined ? -++this.#seq : ++this.#seq,
      due: o.delay ?? { lo: 0, hi: 0 },
      token: 0,
      deadline: { lo: 0, hi: 0 },
      failures: 0,
      lost: 0,
      maxAttempts: o.maxAttempts,
      finished: 0,
      releaseDelay: o.hold === true && o.delay !== undefined,
      ...(o.payload === undefined ? {} : { payload: o.payload }),
    }
    this.jobs.set(id, job)
    return id
  }

  /** A parent's last dependency ended: ready at the back of its priority, or delayed (long) by its own delay. */
  releaseParent(id: string): void {
    const j = this.jobs.get(id)!
    if (j.releaseDelay === true) {
      j.state = "delayed"
      j.due = { lo: INF, hi: INF }
    } else this.#ready(j, false)
  }

  /** A parent failed by a child's policy: dead. */
  failParent(id: string): void {
    this.#finish(this.jobs.get(id)!, "dead")
  }

  /** Delete `ids` from the model, telling the flows (not `forget`: each parent gets a `removed` note). */
  #drop(ids: ReadonlyArray<string>, forget = false): void {
    for (const id of ids) this.jobs.delete(id)
    if (ids.length > 0) this.hooks?.dropped(ids, forget)
  }

  #ready(j: ModelJob, front: boolean): void {
    j.state = "waiting"
    j.order = front ? -++this.#seq : ++this.#seq
  }

  /** Due delayed jobs become waiting, at the back of their priority, in due order (reserve and sweep do this first). */
  #promoteDue(now: number): void {
    const due = this.inState("delayed").filter((j) => j.due.hi < now)
    due.sort((a, b) => a.due.hi - b.due.hi)
    for (const j of due) this.#ready(j, false)
  }

  // ---- leasing ------------------------------------------------------------------

  /** Record the leases a reserve made (the harness checked them against {@link eligible}). */
  leased(leases: ReadonlyArray<{ id: string; token: number }>, deadline: Span): void {
    for (const l of leases) {
      const j = this.jobs.get(l.id)!
      j.state = "active"
      j.token = l.token
      j.deadline = deadline
      if (this.rateMax !== undefined) this.rateCount++
      if (j.group !== undefined && this.#limitsOf(j.group)?.max !== undefined)
        this.groupWindow.set(j.group, (this.groupWindow.get(j.group) ?? 0) + 1)
    }
  }

  /** The lease of `id` under `token`, or the refusal a stale token gets. */
  #lease(id: string, token: number): ModelJob | "LeaseLost" | "JobCancelled" {
    const j = this.jobs.get(id)
    if (j?.state === "active" && j.token === token) return j
    if (j?.state === "cancelled" && j.token === token) return "JobCancelled"
    return "LeaseLost"
  }

  complete(id: string, token: number): "ok" | "LeaseLost" | "JobCancelled" {
    const j = this.#lease(id, token)
    if (typeof j === "string") return j
    this.#finish(j, "completed")
    return "ok"
  }

  /** `fail`: an attempt spent; "retry" (delayed by `delay`) or "dead" when used up or `retry` false. */
  fail(id: string, token: number, retry: boolean, delay: Span): "retry" | "dead" | "LeaseLost" | "JobCancelled" {
    const j = this.#lease(id, token)
    if (typeof j === "string") return j
    j.failures++
    if (!retry || j.failures + j.lost >= j.maxAttempts) {
      this.#finish(j, "dead")
      return "dead"
    }
    j.state = "delayed"
    j.due = delay
    return "retry"
  }

  release(id: string, token: number): "ok" | "LeaseLost" | "JobCancelled" {
    const j = this.#lease(id, token)
    if (typeof j === "string") return j
    this.#ready(j, true)
    return "ok"
  }

  extend(id: string, token: number, deadline: Span): "ok" | "LeaseLost" | "JobCancelled" {
    const j = this.#lease(id, token)
    if (typeof j === "string") return j
    j.deadline = deadline
    return "ok"
  }

  /** A handler threw `RateLimited`: its job back to the front, the queue held (longer than any command list). */
  rateLimited(id: string): void {
    const j = this.jobs.get(id)!
    this.#ready(j, true)
    this.heldUntil = INF
  }

  /** `sweep` at `now`: expired leases back to the front (a lost lease spent), or dead when used up; due delayed jobs promoted. */
  sweep(now: number): { reclaimed: number } {
    let reclaimed = 0
    // in the order of the active set: by deadline, ties (one reserve's leases) by id
    const active = this.inState("active").sort((a, b) => a.deadline.hi - b.deadline.hi || (a.id < b.id ? -1 : 1))
    for (const j of active) {
      if (j.deadline.hi >= now) continue
      reclaimed++
      j.lost++
      if (j.failures + j.lost >= j.maxAttempts) this.#finish(j, "dead")
      else this.#ready(j, true)
    }
    this.#promoteDue(now)
    // the sweep trims the completed jobs to the retention count too (a count lowered since
    // they finished): the oldest beyond it are gone; cancelled ones it trims by age only
    const done = this.inState("completed").sort((a, b) => a.finished - b.finished)
    this.#drop(done.slice(0, Math.max(0, done.length - this.retention.completed)).map((j) => j.id))
    return { reclaimed }
  }

  /**
   * A finish stamp for the jobs one script finishes at one instant (a sweep's cascade): they
   * share it, and the queue orders them by id (a ZSET's ties), as retention does here.
   */
  stamp(): number {
    return ++this.#fin
  }

  #finish(j: ModelJob, state: "completed" | "cancelled" | "dead", stamp?: number): void {
    j.state = state
    j.finished = stamp ?? ++this.#fin
    // its parents are told in the script of its end (docs/flows.md)
    this.hooks?.ended(j.id, state)
    if (state === "dead") return
    const keep = this.retention[state]
    // a count of 0 keeps no finished job; then the oldest 2 beyond `keep` are gone (a lowered
    // count catches up): not listed, not counted, getJob undefined, the id free (a cancelled
    // one's id is kept, unlisted, for the fence only: no lease call here targets it)
    if (keep === 0) this.#drop([j.id], state === "completed")
    const kept = this.inState(state).sort((a, b) => a.finished - b.finished || (a.id < b.id ? -1 : 1))
    // completed jobs are trimmed in batches (trim_done, lua/include/finish.lua): past keep +
    // min(keep / 16, 256), back to keep, at most slack + 2 a completion (this model finishes
    // one job a step; its runs finish fewer jobs than a count of 1,000's slack lets run past)
    const slack = state === "completed" ? Math.min(Math.floor(keep / 16), 256) : 0
    if (kept.length <= keep + slack) return
    this.#drop(kept.slice(0, Math.max(0, Math.min(slack + 2, kept.length - keep))).map((o) => o.id))
  }

  // ---- operator's calls -----------------------------------------------------------

  /** `cancel`: the state it was in, or undefined (unknown or finished). */
  /** `cancel`: the state it was in, or undefined (unknown or finished); `cascade`: a parent's pending children too (by the sweep). */
  cancel(
    id: string,
    cascade = true,
    stamp?: number,
  ): "waiting" | "delayed" | "active" | "waiting-children" | undefined {
    const j = this.jobs.get(id)
    if (
      j === undefined ||
      (j.state !== "waiting" && j.state !== "delayed" && j.state !== "active" && j.state !== "waiting-children")
    )
      return undefined
    const was = j.state
    if (was === "waiting-children" && cascade) this.hooks?.cancelledParent(id)
    this.#finish(j, "cancelled", stamp)
    return was
  }

  /** `retry`: a completed, cancelled or dead job runs again, fresh attempts, at the back; else WrongJobState. */
  retry(id: string): State | { wrong: State | "unknown" } {
    const j = this.jobs.get(id)
    if (j === undefined) return { wrong: "unknown" }
    if (j.state !== "completed" && j.state !== "cancelled" && j.state !== "dead") return { wrong: j.state }
    const was = j.state
    j.failures = 0
    j.lost = 0
    this.#ready(j, false)
    return was
  }

  /** `promote`: a delayed job ready now, at the back. */
  promote(id: string): State | { wrong: State | "unknown" } {
    const j = this.jobs.get(id)
    if (j === undefined) return { wrong: "unknown" }
    if (j.state !== "delayed") return { wrong: j.state }
    this.#ready(j, false)
    return "delayed"
  }

  /** `reschedule(id, { delayMs })`: a waiting or delayed job due at `delay` (undefined: 0, ready now at the back). */
  reschedule(id: string, delay: Span | undefined): State | { wrong: State | "unknown" } {
    const j = this.jobs.get(id)
    if (j === undefined) return { wrong: "unknown" }
    if (j.state !== "waiting" && j.state !== "delayed") return { wrong: j.state }
    const was = j.state
    if (delay === undefined) this.#ready(j, false)
    else {
      j.state = "delayed"
      j.due = delay
    }
    return was
  }

  /** `updatePayload` to `payload`: a waiting, delayed or dead job keeps its state and takes it. */
  updatePayload(id: string, payload: unknown): State | { wrong: State | "unknown" } {
    const j = this.jobs.get(id)
    if (j === undefined) return { wrong: "unknown" }
    if (j.state !== "waiting" && j.state !== "delayed" && j.state !== "dead") return { wrong: j.state }
    if (j.payload !== undefined) j.payload = payload
    return j.state
  }

  /**
   * `changePriority`: a waiting job to the back of its new priority (`lifo`: its front, also of
   * the same one; without, a job of that priority keeps its place), a delayed one takes it when
   * due (at the back); else JobNotWaiting.
   */
  changePriority(id: string, priority: number, lifo = false): "ok" | { notWaiting: State | "missing" } {
    const j = this.jobs.get(id)
    if (j === undefined) return { notWaiting: "missing" }
    if (j.state !== "waiting" && j.state !== "delayed") return { notWaiting: j.state }
    const moves = lifo || j.priority !== priority
    j.priority = priority
    if (j.state === "waiting" && moves) this.#ready(j, lifo)
    return "ok"
  }

  /** `clean(state)` with olderThanMs 0: every finished job of that state deleted. */
  clean(state: "completed" | "cancelled" | "dead"): number {
    // oldest first, as the queue pages its finished set (its parents are told in this order)
    const gone = this.inState(state).sort((a, b) => a.finished - b.finished || (a.id < b.id ? -1 : 1))
    this.#drop(gone.map((j) => j.id))
    return gone.length
  }

  /** `drain({ delayed })`: every waiting job deleted, and the delayed ones with `delayed`. */
  drain(delayed: boolean): { waiting: number; delayed: number } {
    // in the queue's order (their parents are told in it): the ungrouped as a reserve takes
    // them, then the grouped ones group by group, then the delayed by due time
    const ready = (a: ModelJob, b: ModelJob) => a.priority - b.priority || a.order - b.order
    const w = [
      ...this.inState("waiting")
        .filter((j) => j.group === undefined)
        .sort(ready),
      ...this.inState("waiting")
        .filter((j) => j.group !== undefined)
        .sort((a, b) => (a.group === b.group ? ready(a, b) : a.group! < b.group! ? -1 : 1)),
    ]
    const d = delayed ? this.inState("delayed").sort((a, b) => a.due.hi - b.due.hi || (a.id < b.id ? -1 : 1)) : []
    this.#drop([...w, ...d].map((j) => j.id))
    return { waiting: w.length, delayed: d.length }
  }

  /** `obliterate({ force })`: refused while jobs are active unless forced; else the whole queue is gone. */
  obliterate(force: boolean): "QueueHasActiveJobs" | { active: number } {
    const active = this.inState("active").length
    if (active > 0 && !force) return "QueueHasActiveJobs"
    this.jobs.clear()
    this.paused = false
    this.concurrency = undefined
    this.rateMax = undefined
    this.rateCount = 0
    this.heldUntil = 0
    this.groupDefault = undefined
    this.groupOwn.clear()
    this.groupPaused.clear()
    this.groupWindow.clear()
    this.retention = { completed: 1000, cancelled: 1000 }
    return { active }
  }

  // ---- flow control -------------------------------------------------------------

  pause(): boolean {
    const changed = !this.paused
    this.paused = true
    return changed
  }

  resume(): boolean {
    const changed = this.paused
    this.paused = false
    return changed
  }

  /** `setRateLimit`: a limit (its window kept) or null (cleared, and with it any RateLimited hold). */
  setRateLimit(max: number | null): void {
    if (max === null) {
      this.rateMax = undefined
      this.rateCount = 0
      this.heldUntil = 0
    } else this.rateMax = max
  }

  setConcurrency(n: number | null): void {
    this.concurrency = n ?? undefined
  }

  /** `setGroupLimits`: a group's own limits or the default (null clears); a window already counted stays. */
  setGroupLimits(group: string | undefined, limits: GroupLimits | null): void {
    if (group === undefined) this.groupDefault = limits ?? undefined
    else if (limits === null) this.groupOwn.delete(group)
    else this.groupOwn.set(group, limits)
  }

  pauseGroup(group: string): boolean {
    const changed = !this.groupPaused.has(group)
    this.groupPaused.add(group)
    return changed
  }

  resumeGroup(group: string): boolean {
    return this.groupPaused.delete(group)
  }

  /** `setRetention` of completed and cancelled counts (enforced at each later finish of that kind). */
  setRetention(completed: number, cancelled: number): void {
    this.retention = { completed, cancelled }
  }
}
