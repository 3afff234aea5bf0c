/**
 * What to say about an unknown option name: leaseq's name for what the user meant. Names
 * a BullMQ user would type map to leaseq's (`attempts` → `maxAttempts`); names of BullMQ
 * features leaseq lacks say what to do instead; any other name close to a known one (a
 * typo, another case) is suggested by spelling. See docs/from-bullmq.md.
 */

/** BullMQ option names (job, queue and worker options) and leaseq's for the same thing. */
const RENAMED: Readonly<Record<string, ReadonlyArray<string>>> = {
  attempts: ["maxAttempts"],
  delay: ["delayMs"],
  lockDuration: ["leaseMs"],
  lockRenewTime: ["heartbeatMs"],
  stalledInterval: ["sweep"],
  maxStalledCount: ["maxAttempts"],
  deduplication: ["dedupeKey"],
  timeout: ["timeoutMs", "waitMs"],
  jobId: ["id"],
  drainDelay: ["blockTimeoutMs"],
  batches: ["batch"],
  pattern: ["cron"],
}

/** BullMQ features leaseq has no option for, and what to do instead. */
const MISSING: Readonly<Record<string, string>> = {
  priority: "priority is a job option: add(payload, { priority })",
  repeat: "repeating jobs are schedules in leaseq: queue.schedule(name, { every } | { cron, tz }, { payload })",
  limiter:
    "the rate limit is the queue's, across all workers: queue.setRateLimit({ max, perMs }) (a queue policy stored in Redis); queue.setConcurrency(n) caps the jobs running at once",
  removeOnComplete: "finished jobs are kept per queue: queue.setRetention({ completed: { count, ageMs } })",
  keepCompleted:
    "keepCompleted moved to queue.setRetention({ completed: { count, ageMs } }) (a queue policy stored in Redis)",
  removeOnFail:
    "dead jobs are kept per queue: queue.setRetention({ dead: { count, ageMs } }) (a queue policy stored in Redis), or removed by queue.purgeDead(ids)",
  useWorkerThreads:
    'a handler runs off the main thread as a module: new Worker(name, moduleUrlOrPath, { isolation: "thread" }) (or "process")',
  autorun: "a leaseq Worker starts when it is constructed; construct it when it should run",
  lifo: "lifo is a job option: add(payload, { lifo: true })",
  parent:
    "a child is added with its parent: queue.addFlow({ payload, children }), or the parent waits for it: add(payload, { dependsOn: [id] })",
  failParentOnFailure: 'the parent sets it for its children: addFlow({ payload, onChildFailure: "fail", children })',
  ignoreDependencyOnFailure:
    'the parent sets it for its children: addFlow({ payload, onChildFailure: "ignore", children })',
  removeDependencyOnFail:
    'the parent sets it for its children: addFlow({ payload, onChildFailure: "remove", children })',
  connection: "give connection to the Queue or Worker, not to a job",
}

/** BullMQ's names of job states that leaseq names otherwise. */
const STATES: Readonly<Record<string, string>> = {
  failed: "dead",
  wait: "waiting",
  prioritized: "waiting",
}

/**
 * The reason a state argument of `call` (`getJobs`, `clean`) was refused, given the states it
 * takes: BullMQ's array of states (one state per call here) and BullMQ's names (`failed` is
 * `dead`) say so; BullMQ's `clean(grace, limit, type)` (a number first) says leaseq's shape.
 */
export const stateReason = (call: string, value: unknown, states: ReadonlyArray<string>): string => {
  const choices = `must be one of ${states.join(", ")}`
  if (Array.isArray(value)) {
    return `${choices}: ${call} takes one state per call (BullMQ's array of states is one call per state)`
  }
  const named = typeof value === "string" ? STATES[value] : undefined
  if (named && states.includes(named)) return `${choices}; did you mean ${named}? (BullMQ's ${value} is ${named} here)`
  if (call === "clean" && typeof value === "number") {
    return `${choices}: BullMQ's clean(grace, limit, type) is clean(type, { olderThanMs: grace, limit }) here`
  }
  return choices
}

/** Levenshtein distance of two short strings, compared without case. */
const distance = (a: string, b: string): number => {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  let row = Array.from({ length: y.length + 1 }, (_, j) => j)
  for (let i = 1; i <= x.length; i++) {
    const next = [i]
    for (let j = 1; j <= y.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1))
    }
    row = next
  }
  return row[y.length]!
}

/**
 * The reason of an "unknown option" error for `key`, given the names `allowed` there:
 * "unknown option; did you mean maxAttempts?", or what to do instead, or the known names.
 */
export const unknownOptionReason = (key: string, allowed: ReadonlyArray<string>): string => {
  const renamed = RENAMED[key]?.find((name) => allowed.includes(name) && name !== key)
  if (renamed) return `unknown option; did you mean ${renamed}?`
  const known = `known options are ${allowed.join(", ")}`
  const missing = MISSING[key]
  if (missing && !allowed.includes(key)) return `unknown option: ${missing}; ${known}`
  const close = allowed
    .map((name) => ({ name, d: distance(key, name) }))
    .filter(({ d }) => d <= Math.max(1, Math.min(2, Math.floor(key.length / 3))))
    .sort((a, b) => a.d - b.d)[0]
  return close ? `unknown option; did you mean ${close.name}?` : `unknown option; ${known}`
}
