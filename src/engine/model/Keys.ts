/**
 * The key layout: every key of a queue, its Redis type and the key groups only one include
 * may write. Every key of a queue carries the queue name as a Redis Cluster hash tag, so the
 * whole queue lives in one slot: `<prefix>:{<queue>}:<suffix>`. The names that go into a key
 * (queue, prefix, partition) are checked in QueueName.ts.
 */
import { isQueueName, parsePartitionName, partitionName, validatePrefix, validateQueueName } from "./QueueName.ts"

/**
 * The key-layout version this client reads and writes (stored in `meta.layout`). It also
 * reads and writes a queue of layout 1 (the one before), which `upgrade` moves to this one.
 */
export const LAYOUT_VERSION = "2"

/** Default key prefix. */
export const DEFAULT_PREFIX = "leaseq"

/** The fixed set of keys of one queue. No key is ever created per job. */
export interface QueueKeys {
  readonly queue: string
  readonly prefix: string
  /** LIST of ready job ids of priority 0, the default (LPUSH by producers, RPOP by reserve). */
  readonly wait: string
  /** ZSET id -> lease deadline (ms, Redis clock). */
  readonly active: string
  /** ZSET id -> due time (ms). */
  readonly delayed: string
  /** ZSET id -> time of death (ms). */
  readonly dead: string
  /** ZSET id -> completion time, only when completed jobs are retained. */
  readonly done: string
  /** ZSET with one member "0": the wake-up marker idle workers block on. */
  readonly marker: string
  /** HASH: layout version, the token counter and queue counters. */
  readonly meta: string
  /** HASH id -> payload (JSON text). */
  readonly data: string
  /** HASH id -> maxAttempts. */
  readonly max: string
  /** HASH id -> fencing token of the current lease: key layout 1 only (layout 2 keeps it in `holder`). */
  readonly lease: string
  /** HASH id -> handler failures. */
  readonly fails: string
  /** HASH id -> lost leases. */
  readonly lost: string
  /** HASH id -> last error (JSON). */
  readonly err: string
  /** HASH id -> result of a retained completed job. */
  readonly result: string
  /** ZSET dedupe key -> expiry (ms). */
  readonly dedupe: string
  /** HASH dedupe key -> id of the job holding it. */
  readonly dedupeid: string
  /**
   * HASH request id of a recent add call that deduplicated a job -> the ids it answered
   * ("id,id,…"), or of an operator's call on one job (promote, reschedule, retry,
   * updatePayload) -> the state the job was in, so its re-send answers the same; dropped
   * with its receiptsAt entry.
   */
  readonly receipts: string
  /** ZSET request id of a recent add call (or operator's call on one job) -> its time (ms): a re-sent call finds it and writes nothing; trimmed past the window. */
  readonly receiptsAt: string
  /**
   * HASH "<workerId>:<n>" -> a worker's last reserve call numbered n mod 4 (request id, time,
   * rider statuses, leases), to answer a re-send of any call the worker may have out.
   */
  readonly reqs: string
  /**
   * STREAM of job events (added, active, completed, …), written by the scripts that change
   * a job's state and capped near the queue's event retention (meta field `eventsMaxLen`).
   */
  readonly events: string
  /**
   * HASH id -> "<workerId>|<token>|<startedAt>|<until>" for each leased job (layout 2: the one
   * hash of a lease; layout 1 wrote "<workerId>|<startedAt>|<until>" and the token in `lease`),
   * written by reserve and deleted with the lease: the worker holding the lease (the
   * `lease.workerId` a job lookup shows: the text before the first "|"), its fencing token,
   * when the run started (ms, Redis clock),
   * and the latest deadline extend may give the lease (start + timeoutMs + lease; 0 = no
   * timeout). A lease expired at its `until` is reclaimed as a failure with reason "timeout".
   * A completed job keeps the entry of the run that completed it while it is retained (its
   * `startedAt`), dropped with its data (lua/include/active.lua).
   */
  readonly holder: string
  /** HASH id -> timeoutMs, for jobs added with a `timeoutMs` (the worker's default applies to the others). */
  readonly timeout: string
  /** HASH id -> the latest `job.progress(value)` (JSON), stored by a heartbeat; kept with a retained or dead job. */
  readonly progress: string
  /** HASH worker id -> the worker's record (JSON: id, host, pid, concurrency, running, state, startedAt, lastSeenAt), written by its heartbeat. */
  readonly workers: string
  /** ZSET worker id -> time (ms) after which its record is stale (no heartbeat): the sweep drops it. */
  readonly workersAt: string
  /**
   * ZSET id -> time (ms) the job was cancelled: the newest max(keep, 1000) cancelled jobs. A
   * lease whose job is here ended by a cancel: extend reports it as cancelled (not plain
   * lost), so the handler's signal names the cancel.
   */
  readonly cancelled: string
  /** HASH id -> dedupe key, for a job added with one. */
  readonly dkey: string
  /** HASH schedule name -> the schedule (JSON: its timing, payload and job options), see `Schedule.ts`. */
  readonly schedules: string
  /** ZSET schedule name -> its next tick (ms, Redis clock): the sweep ticks the due ones. */
  readonly schedAt: string
  /** ZSET (score 0) of the waiting jobs of every group: "<group>\0<order>\0<id>", read per group BYLEX (lua/include/groups.lua). */
  readonly gwait: string
  /** ZSET group -> round-robin turn, of the groups that can run now (ungrouped jobs are the member ""). */
  readonly gready: string
  /** ZSET group -> time (ms) its rate window ends, of the groups held back by their `max`/`perMs`. */
  readonly gheld: string
  /** HASH id -> "<group>\0<order>" of every job added with a group (until it finishes). */
  readonly gjob: string
  /** HASH per-group state: "a\0<g>" active count, "p\0<g>" paused, "c\0<g>" own limits ("c\0" the default), "w\0<g>" rate window, "seq". */
  readonly gstate: string
  /** ZSET (score 0) of the groups known (waiting or active jobs, own limits, paused), for `groups()` paging BYLEX. */
  readonly gindex: string
  /** ZSET group -> its jobs waiting, written by earlier versions only (now counted when asked: ZLEXCOUNT of `gwait`); deleted with the queue. */
  readonly gcount: string
  /** ZSET of the ready jobs of priority 1..1,000,000: id -> priority * 2^32 + sequence (see lua/include/ready.lua). */
  readonly prioritized: string
  /** HASH id -> priority, for each job whose priority is not 0 (deleted with its other fields). */
  readonly priority: string
  /**
   * LIST of the rate limit's window (only while `setRateLimit` set one): "<ms>|<n>" per
   * reserve call that leased n jobs at ms (Redis clock), newest at the left; entries older
   * than the window are dropped by reserve, and meta.rateCount is the sum of those left.
   */
  readonly rate: string
  /** HASH id -> the job's own backoff (JSON `{ type, delayMs, … }`), for a job added with one; read by fail. */
  readonly backoff: string
  /** HASH id -> add time of a job whose id carries none; ZSET id -> add time of a waiting prioritized or grouped job. */
  readonly addedAt: string
  readonly waitSince: string
  /**
   * HASH id -> the errors of the job's failed attempts, oldest first, one JSON object a line
   * (`{"attempt","at",…the error}`), the newest 10 (lua/include/finish.lua `errors_push`).
   */
  readonly errors: string
  /** HASH id -> the job's log lines (`job.log`), oldest first, one JSON string a line, the newest 100. */
  readonly logs: string
  /** HASH child id -> its parents ("<queue>|<id>" joined by ",", queue "" = this one): dependencies (lua/include/deps.lua, docs/flows.md). */
  readonly depParents: string
  /** LIST of notes "<parent queue>|<parent id>|<child id>|<outcome>" a finished child left for a parent the script could not reach; drained by the sweep. */
  readonly depOutbox: string
  /** ZSET parent id -> when it began waiting for its children: the state `waiting-children`. */
  readonly depWaiting: string
  /** ZSET (score 0) "<parent id>|<child queue>|<child id>" of every parent's children, paged BYLEX. */
  readonly depChildren: string
  /** HASH "<parent id>|<child queue>|<child id>" -> the dependency's policy, then "<policy>|<outcome>" once it counted. */
  readonly depState: string
  /** HASH parent id -> children pending; "o|<id>" while the parent is open; "d|<id>" its delay once released. */
  readonly depCount: string
  /** ZSET: the sweep's flow work. Score 0: parent ids whose job data was dropped (their children's edges, depChildren and depState, deleted a page a pass); 1: parents cancelled with their children; 2: children to cancel (lua/include/deps-cascade.lua). */
  readonly depGone: string
  /** ZSET parent id -> its build deadline (ms, Redis clock): a node of a multi-call `addFlow` not yet sealed; the sweep fails it past the deadline. */
  readonly depBuild: string
}

/** Expected Redis type of each key (checked once when a client opens a queue). */
export const KEY_TYPES = {
  meta: "hash",
  wait: "list",
  active: "zset",
  delayed: "zset",
  dead: "zset",
  done: "zset",
  marker: "zset",
  data: "hash",
  max: "hash",
  lease: "hash",
  fails: "hash",
  lost: "hash",
  err: "hash",
  result: "hash",
  dedupe: "zset",
  dedupeid: "hash",
  receipts: "hash",
  receiptsAt: "zset",
  reqs: "hash",
  events: "stream",
  holder: "hash",
  timeout: "hash",
  progress: "hash",
  workers: "hash",
  workersAt: "zset",
  cancelled: "zset",
  dkey: "hash",
  schedules: "hash",
  schedAt: "zset",
  gwait: "zset",
  gready: "zset",
  gheld: "zset",
  gjob: "hash",
  gstate: "hash",
  gindex: "zset",
  gcount: "zset",
  prioritized: "zset",
  priority: "hash",
  rate: "list",
  backoff: "hash",
  addedAt: "hash",
  waitSince: "zset",
  errors: "hash",
  logs: "hash",
  depParents: "hash",
  depOutbox: "list",
  depWaiting: "zset",
  depChildren: "zset",
  depState: "hash",
  depCount: "hash",
  depGone: "zset",
  depBuild: "zset",
} as const satisfies Record<Exclude<keyof QueueKeys, "queue" | "prefix">, "hash" | "list" | "zset" | "stream">

/** The name of one key of a queue (`wait`, `active`, …): a field of {@link QueueKeys}. */
export type KeyName = keyof typeof KEY_TYPES

/** The suffixes, in a fixed order (meta first). */
export const KEY_NAMES = Object.keys(KEY_TYPES) as ReadonlyArray<KeyName>

/** In {@link READY_KEYS}: the waiting jobs' add times (lua/include/ready.lua), the fair groups' keys (groups.lua). */
const AGE_KEYS = ["addedAt", "waitSince"] as const
const GROUP_KEYS = ["gcount", "gwait", "gready", "gheld", "gjob", "gstate", "gindex"] as const
/**
 * In {@link READY_KEYS}, first: the dependencies' keys (a parent waiting for its children, the
 * notes a finished child leaves), read and written only by lua/include/deps.lua. "Dependencies",
 * not "flow": include/flow.lua is flow control (rate limit, concurrency cap).
 */
export const DEPS_KEYS = [
  "depBuild",
  "depGone",
  "depParents",
  "depOutbox",
  "depWaiting",
  "depChildren",
  "depState",
  "depCount",
] as const

/**
 * The ready group: the keys of the jobs ready to run or delayed, and the wake-up marker.
 * Only `lua/include/ready.lua` reads or writes them. A script that moves jobs into or out
 * of ready or delayed (or reads them) ends its KEYS with this group, in this order (its
 * header says `KEYS[i..] ready`), so the include finds them at the end of KEYS and a new
 * ordering rule adds its keys here without renumbering any script's own keys.
 */
export const READY_KEYS = [
  ...DEPS_KEYS,
  ...AGE_KEYS,
  ...GROUP_KEYS,
  "wait",
  "delayed",
  "marker",
  "prioritized",
  "priority",
] as const

/** The keys of the leased jobs: only `lua/include/active.lua` writes them (enter, extend, leave). */
export const ACTIVE_KEYS = ["active", "lease", "holder"] as const

/**
 * The named groups a script header may declare as one line `KEYS[i..] <group>`: `ready`
 * ({@link READY_KEYS}) and `all` (every key, in {@link KEY_NAMES} order).
 */
export const KEY_GROUPS = { ready: READY_KEYS, all: KEY_NAMES } as const satisfies Record<
  string,
  ReadonlyArray<KeyName>
>

/** The keys of partition `index` of `queue`: `<prefix>:{<queue>~<index>}:<suffix>`, its own hash tag. */
export const partitionKeys = (queue: string, index: number, prefix: string = DEFAULT_PREFIX): QueueKeys =>
  queueKeys(partitionName(queue, index), prefix)

/**
 * Build the keys of `queue` under `prefix` (both validated). `queue` is a queue name,
 * or a partition's sub-queue name `<queue>~<index>` (see {@link partitionKeys}).
 */
export const queueKeys = (queue: string, prefix: string = DEFAULT_PREFIX): QueueKeys => {
  if (parsePartitionName(queue) === undefined) validateQueueName(queue)
  validatePrefix(prefix)
  const base = `${prefix}:{${queue}}:`
  const keys: Record<string, string> = { queue, prefix }
  for (const name of KEY_NAMES) keys[name] = base + name
  return keys as unknown as QueueKeys
}

/** A SCAN pattern matching the meta key of every queue under `prefix`. */
export const metaPattern = (prefix: string): string => `${prefix.replace(/[*?[\]\\]/g, "\\$&")}:{*}:meta`

/**
 * The queue name in a meta key `<prefix>:{<queue>}:meta`, or undefined. A partition's
 * meta key gives its sub-queue name `<queue>~<index>` (which {@link queueKeys} accepts).
 */
export const queueFromMetaKey = (prefix: string, key: string): string | undefined => {
  const head = `${prefix}:{`
  if (!key.startsWith(head) || !key.endsWith("}:meta")) return undefined
  const name = key.slice(head.length, -"}:meta".length)
  return isQueueName(name) || parsePartitionName(name) !== undefined ? name : undefined
}
