/**
 * The Prometheus exposition of a {@link FleetSnapshot}, written by prom-client (the
 * format is not hand-built here). Gauges say what the queues hold now; the `_total`
 * counters are the queues' lifetime counters kept in Redis, so they are true counters
 * (they only go up, whichever process exports them, and survive exporter restarts).
 */
import { createRequire } from "node:module"
import type * as Prom from "prom-client"
import type { Registry } from "prom-client"
import type { QueueStats } from "../engine/calls/Commands.ts"
import type { FleetSnapshot } from "./Fleet.ts"

/** A gauge per queue (and the `state` label for `leaseq_jobs`). */
const JOB_STATES = ["waiting", "active", "delayed", "dead", "retained"] as const

/** Every counter: its name, its help text and where its value comes from. */
export const COUNTERS: ReadonlyArray<readonly [name: string, help: string, pick: (s: QueueStats) => number]> = [
  ["leaseq_jobs_added_total", "Jobs added (each job once, also when its add was re-sent).", (s) => s.counters.added],
  ["leaseq_jobs_completed_total", "Jobs completed.", (s) => s.counters.completed],
  ["leaseq_jobs_failed_total", "Handler failures (each failed attempt once).", (s) => s.counters.failed],
  [
    "leaseq_leases_lost_total",
    "Leases that ran out and were reclaimed by a sweep (the worker died or stalled).",
    (s) => s.counters.lostLeases,
  ],
  ["leaseq_jobs_dead_total", "Jobs moved to the dead letters.", (s) => s.counters.dead],
  [
    "leaseq_jobs_released_total",
    "Jobs given back without spending an attempt (graceful shutdown).",
    (s) => s.counters.released,
  ],
  ["leaseq_jobs_retried_total", "Dead jobs an operator retried.", (s) => s.counters.retried],
  ["leaseq_jobs_purged_total", "Dead jobs an operator purged.", (s) => s.counters.purged],
  ["leaseq_jobs_cancelled_total", "Jobs cancelled.", (s) => s.counters.cancelled],
  [
    "leaseq_acks_refused_total",
    "Late acknowledgements refused: a complete or fail under a lease token that was no longer current (fencing at work), not counting a cancelled job's.",
    (s) => s.counters.refused,
  ],
  [
    "leaseq_self_fences_total",
    "Handlers aborted by their worker because it could not reach Redis to extend their lease.",
    (s) => s.counters.selfFenced,
  ],
  [
    "leaseq_jobs_snoozed_total",
    "Jobs their handler snoozed (Snooze): sent to delayed without spending an attempt.",
    (s) => s.counters.snoozed,
  ],
  [
    "leaseq_jobs_rate_limited_total",
    "Jobs whose handler threw RateLimited: back to the front, the queue held for its retryAfterMs.",
    (s) => s.counters.rateLimited,
  ],
]

/** The flow limits that hold a reserve back, the `limit` label of `leaseq_reserves_limited_total`. */
const LIMITS = [
  ["rate", (s: QueueStats) => s.counters.limitedRate],
  ["concurrency", (s: QueueStats) => s.counters.limitedConcurrency],
  ["held", (s: QueueStats) => s.counters.limitedHeld],
] as const

let loaded: typeof Prom | undefined
/** prom-client (and the OpenTelemetry API it loads), required on the first render: a process that never serves metrics does not load them. */
const prom = (): typeof Prom => {
  loaded ??= createRequire(import.meta.url)("prom-client") as typeof Prom
  return loaded
}

/** The flow-limit series: the limits set (absent when not), the hold, the reserves held back. */
const flowSeries = (registers: Registry[]) => {
  const { Counter, Gauge } = prom()
  const labelNames = ["queue"]
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames, registers })
  const g = {
    rateMax: gauge(
      "leaseq_rate_limit_max",
      "The queue's rate limit: at most this many jobs leased per window (absent: none).",
    ),
    ratePer: gauge("leaseq_rate_limit_window_seconds", "The rate limit's window (absent: no rate limit)."),
    concurrency: gauge(
      "leaseq_concurrency_limit",
      "At most this many jobs active at once across all workers (absent: no cap).",
    ),
    held: gauge(
      "leaseq_held_seconds",
      "How long the queue still leases nothing for (a handler's RateLimited); 0 when not held.",
    ),
  }
  const limited = new Counter({
    name: "leaseq_reserves_limited_total",
    help: "Reserve calls that leased fewer jobs than asked while jobs were ready, by the flow limit that held them back (rate, concurrency, held): how often the queue was held back.",
    labelNames: ["queue", "limit"],
    registers,
  })
  return (s: QueueStats): void => {
    const queue = s.queue
    const l = s.limits
    if (l.rateLimit !== null) {
      g.rateMax.set({ queue }, l.rateLimit.max)
      g.ratePer.set({ queue }, l.rateLimit.perMs / 1000)
    }
    if (l.concurrency !== null) g.concurrency.set({ queue }, l.concurrency)
    g.held.set({ queue }, l.heldMs / 1000)
    for (const [limit, pick] of LIMITS) limited.inc({ queue, limit }, pick(s))
  }
}

/** The MIME type of the exposition (Prometheus text format 0.0.4: prom-client's `Registry.PROMETHEUS_CONTENT_TYPE`). */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** Render one snapshot. A fresh registry each time, so a queue that is gone leaves no stale series. */
export const renderExposition = async (snapshot: FleetSnapshot): Promise<string> => {
  const { Counter, Gauge, Registry } = prom()
  const registry = new Registry()
  const registers = [registry]
  const jobs = new Gauge({
    name: "leaseq_jobs",
    help: "Jobs in each state now (retained = completed jobs kept by the queue's retention).",
    labelNames: ["queue", "state"],
    registers,
  })
  const gauges = {
    expired: new Gauge({
      name: "leaseq_leases_expired",
      help: "Active leases past their deadline that no sweep has reclaimed yet (should stay near 0: alert when it does not).",
      labelNames: ["queue"],
      registers,
    }),
    workers: new Gauge({
      name: "leaseq_workers",
      help: "Live workers of the queue (registered and heartbeating); 0 while jobs wait means nobody works them.",
      labelNames: ["queue"],
      registers,
    }),
    paused: new Gauge({
      name: "leaseq_paused",
      help: "1 while the queue is paused (workers lease nothing until resume), else 0.",
      labelNames: ["queue"],
      registers,
    }),
    groups: new Gauge({
      name: "leaseq_groups",
      help: "Groups of the queue (add's group option) with jobs waiting or active, own limits, or paused; no label per group (the busiest are in the dashboard).",
      labelNames: ["queue"],
      registers,
    }),
    oldest: new Gauge({
      name: "leaseq_oldest_waiting_age_seconds",
      help: "Age of the job that will run next (0 when none waits).",
      labelNames: ["queue"],
      registers,
    }),
  }
  const counters = COUNTERS.map(
    ([name, help, pick]) => [new Counter({ name, help, labelNames: ["queue"], registers }), pick] as const,
  )
  const unreadable = new Gauge({
    name: "leaseq_queue_unreadable",
    help: "1 for a queue under the prefix whose keys leaseq cannot read (a key of another type, an unknown layout): run leaseq verify / leaseq stats on it.",
    labelNames: ["queue"],
    registers,
  })
  const flow = flowSeries(registers)
  for (const u of snapshot.unreadable) unreadable.set({ queue: u.queue }, 1)
  new Gauge({
    name: "leaseq_queues_not_exported",
    help: "Queues under the prefix beyond maxQueues (--max-queues), not read and not exported: raise the cap or name the queues.",
    registers,
  }).set(snapshot.notRead)
  for (const s of snapshot.queues) {
    const queue = s.queue
    for (const state of JOB_STATES) jobs.set({ queue, state }, s[state])
    // parents waiting for their children (flows, docs/flows.md)
    jobs.set({ queue, state: "waiting-children" }, s.waitingChildren)
    gauges.expired.set({ queue }, s.expired)
    gauges.workers.set({ queue }, s.workers)
    gauges.paused.set({ queue }, s.paused ? 1 : 0)
    gauges.groups.set({ queue }, s.groups)
    gauges.oldest.set({ queue }, s.oldestWaitingAgeMs / 1000)
    for (const [counter, pick] of counters) counter.inc({ queue }, pick(s))
    flow(s)
  }
  return registry.metrics()
}
