/**
 * Typed calls of the Lua scripts for one queue. Each returns an Effect whose error
 * channel says exactly what can go wrong. A call's KEYS come from its script's
 * descriptor (scripts/*.ts, by key name) and the queue's {@link QueueKeys}; its ARGV
 * and the meaning of its reply from the same descriptor.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import type { GroupFull, InvalidOptions, LayoutMismatch, RedisError, WrongKeyType } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import type { WorkerRecord } from "../model/Registry.ts"
import { newRequestId, newWorkerId } from "../model/RequestId.ts"
import type { FailInput } from "../scripts/AckScripts.ts"
import type { NewJob } from "../scripts/AddScripts.ts"
import type { DeadTarget } from "../scripts/AdminScripts.ts"
import type { Completion, ExtendRef, LeaseRef, ReserveInput } from "../scripts/LeaseScripts.ts"
import { type ScriptDef, scriptKeys } from "../scripts/Script.ts"
import { chunked, chunkedLastFirst } from "./Chunks.ts"
import { type FanInPeer, fanInPeer } from "./FanIn.ts"
import { type MarkerWait, markerThenReserve } from "./Marker.ts"
import { type OutboxSignal, outboxSignal, pokeOnNotes } from "./OutboxSignal.ts"
import { fillPayloads } from "./PayloadRefs.ts"
import { decodeReply, redisError } from "./Replies.ts"
import { Scripts } from "./Scripts.ts"
import { DEFAULT_VERIFY_LINES, DEFAULT_VERIFY_PAGE, verifyQueue } from "./Verify.ts"

export type { NewJob } from "../scripts/AddScripts.ts"
export type { DeadJob, QueueStats } from "../scripts/AdminScripts.ts"
export {
  type ExtendAnswer,
  type ExtendRef,
  extendAnswer,
  type LeaseRef,
  type Reservation,
} from "../scripts/LeaseScripts.ts"
export type { SweepResult, SweptDead } from "../scripts/SweepScripts.ts"
export { SCRIPT_CHUNK } from "./Chunks.ts"

/** Errors a script call can end with (InvalidOptions: a size argument outside the script's own limit; GroupFull: an add past a group's maxSize; see Replies.ts). */
export type ScriptFailure = RedisError | LayoutMismatch | WrongKeyType | InvalidOptions | GroupFull

/**
 * Send one call of `script` on `client` for the queue of `keys` (KEYS by default from
 * the descriptor) and answer its raw reply. The ARGV is built now, when the Effect is
 * built: running the Effect again sends the same call (the same request id), which is
 * what a re-send must do.
 */
const sendScript = <In>(
  client: RedisClient,
  keys: QueueKeys,
  script: ScriptDef<In, unknown>,
  input: In,
  callKeys: ReadonlyArray<string> = scriptKeys(script, keys),
): Effect.Effect<unknown, RedisError> => {
  const args = script.args(input)
  return Effect.tryPromise({
    try: () => client.script(script, callKeys, args),
    catch: (e) => redisError(`${script.name} script`, e, client.describe, client.lastError?.()),
  })
}

/**
 * Run one call of `script` (see {@link sendScript}): a refusal (layout, key type) fails
 * typed, any other reply is decoded.
 */
export const runScript = <In, Out>(
  client: RedisClient,
  keys: QueueKeys,
  script: ScriptDef<In, Out>,
  input: In,
  callKeys?: ReadonlyArray<string>,
): Effect.Effect<Out, ScriptFailure> =>
  sendScript(client, keys, script, input, callKeys).pipe(Effect.flatMap(decodeReply(keys, script.decode)))

/**
 * Add jobs in one add script call on `client` (see `add` of {@link makeCommands}); its
 * own function so that a producer can send each call through a differently bounded
 * client without building a whole command set per call.
 */
export const addJobs = (
  client: RedisClient,
  keys: QueueKeys,
  jobs: ReadonlyArray<NewJob>,
  requestId: string = newRequestId(),
): Effect.Effect<Array<string>, ScriptFailure> => runScript(client, keys, Scripts.add, { requestId, jobs })

/** A script call for one queue, as {@link runScript} with the queue's keys. */
type Run = <In, Out>(script: ScriptDef<In, Out>, input: In) => Effect.Effect<Out, ScriptFailure>

/** {@link runScript} for the queue of `keys`, each script's KEYS built on its first call and kept. */
const runner = (client: RedisClient, keys: QueueKeys): Run => {
  const keysOf = new Map<ScriptDef<never, unknown>, ReadonlyArray<string>>()
  return (script, input) => {
    let callKeys = keysOf.get(script)
    if (callKeys === undefined) {
      callKeys = scriptKeys(script, keys)
      keysOf.set(script, callKeys)
    }
    return runScript(client, keys, script, input, callKeys)
  }
}

/**
 * One complete call of `items`: with a fan-in peer learnt (flows, FanIn.ts) it carries the
 * peer's keys, so the script releases such parents itself; the notes it answers teach the peer.
 */
const completeCall = (
  run: Run,
  client: RedisClient,
  keys: QueueKeys,
  peer: FanInPeer,
  items: ReadonlyArray<Completion>,
  lane: string | undefined,
) => {
  const p = peer.current()
  const call =
    p === undefined
      ? run(Scripts.complete, { items, lane })
      : runScript(client, keys, Scripts.complete, { items, lane, fanin: p.fanin }, p.keys)
  return call.pipe(Effect.tap((a) => (a.outbox === undefined ? Effect.void : Effect.sync(() => peer.learn(a.outbox)))))
}

/** The reserve command of one queue: the script, then the payloads it answered by reference (PayloadRefs.ts). */
const reserveCommand =
  (run: Run, client: RedisClient, keys: QueueKeys, defaultWorkerId: string) =>
  (
    count: number,
    leaseMs: number,
    promoteLimit: number,
    completes: ReadonlyArray<Completion> = [],
    ids: {
      readonly workerId?: string
      readonly requestId?: string
      readonly timeoutMs?: number
      readonly refAt?: number
    } = {},
  ) => {
    const refAt = ids.refAt ?? 0
    const call = run(Scripts.reserve, {
      workerId: ids.workerId ?? defaultWorkerId,
      requestId: ids.requestId ?? newRequestId(),
      count,
      leaseMs,
      promoteLimit,
      timeoutMs: ids.timeoutMs ?? 0,
      completes,
      refAt,
    })
    return refAt > 0 ? Effect.flatMap(call, (r) => fillPayloads(client, keys, r)) : call
  }

/** The calls about leased jobs: reserve, extend, complete, fail, release. */
const leaseCommands = (run: Run, outbox: OutboxSignal, client: RedisClient, keys: QueueKeys, peer: FanInPeer) => {
  const defaultWorkerId = newWorkerId()
  return {
    /**
     * Lease up to `count` jobs. `completes` (a worker's finished jobs) are acknowledged
     * first in the same call, exactly as `complete` would: `completed[i]` says which held.
     * `ids.workerId` names the calling worker (default: one id per command set) and
     * `ids.requestId` the call (default: a fresh random id, drawn when this Effect is
     * built): a second run of the worker's last call (a re-send after a lost reply, or
     * the same Effect run again) answers the same leases and statuses and changes nothing.
     * `ids.timeoutMs` is the worker's default timeout for jobs added without one (default
     * none): the server extends no such lease past its run start + timeout + leaseMs.
     * `ids.refAt` (default 0: none): payloads of that many bytes or more are read by a plain
     * HMGET after the script instead of through it (PayloadRefs.ts).
     */
    reserve: reserveCommand(run, client, keys, defaultWorkerId),

    /**
     * Extend leases (storing the progress each carries); per lease its new deadline (> 0),
     * or 0 lost, -1 cancelled, -2 at its timeout limit (see {@link extendAnswer}).
     * `worker` (optional) refreshes that worker's registry record in the same call. Any
     * number of leases (chunked; the record goes with each chunk).
     */
    extend: (leases: ReadonlyArray<ExtendRef>, leaseMs: number, worker?: WorkerRecord) =>
      chunked(leases, (part) => run(Scripts.extend, { leases: part, leaseMs, worker })),

    /**
     * Read the registry: the workers whose heartbeat is recent enough, by id, and the Redis
     * time of the read (ms). O(W) for W workers.
     */
    workers: run(Scripts.workers, undefined),

    /** Take a worker's record out of the registry (at close). */
    workerLeave: (workerId: string) => run(Scripts.workerLeave, workerId),

    /** Add lines (JSON strings) to a leased job's log, fenced by its token: lines kept, or undefined (lease not held). */
    log: (lease: LeaseRef, lines: ReadonlyArray<string>) =>
      run(Scripts.log, { id: lease.id, token: lease.token, lines }),

    /**
     * Acknowledge jobs; true per job completed, false when its lease was lost. Any number
     * (chunked, one call after another). `lane` (default: none) is the caller's ack lane
     * (model/AckLanes.ts): a call re-sent after a lost reply answers what it did.
     */
    complete: (items: ReadonlyArray<Completion>, lane?: string) =>
      chunked(items, (part) => completeCall(run, client, keys, peer, part, lane).pipe(Effect.tap(pokeOnNotes(outbox)))),

    /**
     * Fail a leased job: retried later (after its own backoff's delay when it has one, else
     * `options.backoff`'s, else `delayMs`), moved to dead, or `lost` when its lease was.
     * `options.lane` as complete's `lane`.
     */
    fail: (lease: LeaseRef, options: Omit<FailInput, "lease">) =>
      // a job gone to dead may have parents: the outbox is drained now (flows; one read without)
      run(Scripts.fail, { lease, ...options }).pipe(Effect.tap(pokeOnNotes(outbox, (r) => r === "dead"))),

    /**
     * Give leased jobs back (graceful shutdown); true per job released, false when its
     * lease was lost. They run next, in their order. Any number of leases: chunks of
     * {@link SCRIPT_CHUNK}, each atomic, the last sent first. `lane` as complete's.
     */
    release: (leases: ReadonlyArray<LeaseRef>, lane?: string) =>
      chunkedLastFirst(leases, (part) => run(Scripts.release, { leases: part, lane })),
  }
}

/** The operator's calls: sweep, stats, the dead jobs, verify. */

const adminCommands = (run: Run, client: RedisClient, keys: QueueKeys) => ({
  /** One bounded sweep call: at most `limit` of each kind of work (see lua/sweep.lua). */
  sweep: (limit: number) => run(Scripts.sweep, limit),

  /** Counts and counters of the queue. */
  stats: run(Scripts.stats, undefined).pipe(Effect.map((s) => ({ queue: keys.queue, ...s }))),

  /** A page of dead jobs from `offset` (0 = the oldest death), and how many are dead. Read-only: never refused. */
  deadList: (offset: number, count: number) =>
    sendScript(client, keys, Scripts.deadList, { offset, count }).pipe(Effect.map(Scripts.deadList.decode)),

  /** Dead jobs back to wait: these ids, or the oldest `all`. */
  deadRetry: (target: DeadTarget) => run(Scripts.deadRetry, target),

  /** Dead jobs deleted: these ids, or the oldest `all`. */
  deadPurge: (target: DeadTarget) => run(Scripts.deadPurge, target),

  /** One bounded step of moving the queue to this key layout (see lua/upgrade.lua). */
  upgradeStep: (count: number, force: boolean) => run(Scripts.upgrade, { count, force }),

  /** Check the queue's invariants page by page (see Verify.ts). Defaults: 100 lines, pages of 100. */
  verify: (maxLines: number = DEFAULT_VERIFY_LINES, pageSize: number = DEFAULT_VERIFY_PAGE) =>
    verifyQueue(run, { maxLines, pageSize }),
})

/** The scripts of one queue, as Effects. */
export const makeCommands = (client: RedisClient, keys: QueueKeys) => {
  const run = runner(client, keys)
  const outbox = outboxSignal()
  const peer = fanInPeer(client, keys)
  return {
    keys,
    client,
    /** Poked when a completion left notes in the outbox (see {@link OutboxSignal}). */
    outbox,
    /** The queue whose parents this queue's completes release in their script, once learnt (FanIn.ts). */
    peer,
    /** Check once that the queue's keys are leaseq's and the layout is known. */
    open: run(Scripts.open, undefined),

    /**
     * Add jobs in one call. `requestId` (default: a fresh random id) marks the call: a
     * second run of the same call (a re-send by the client after a lost reply) writes
     * nothing and answers the same ids. The id is drawn when this Effect is built, so
     * running the same Effect again repeats the same call. Pass an id only to repeat a call.
     */
    add: (jobs: ReadonlyArray<NewJob>, requestId: string = newRequestId()) => run(Scripts.add, { requestId, jobs }),
    /**
     * Block on `blocking` for the queue's marker, with a reserve call sent right behind the
     * wait on the same connection, so Redis runs it the moment the wait ends (see Marker.ts).
     */
    markerThenReserve: (blocking: RedisClient, wait: MarkerWait, input: ReserveInput) =>
      markerThenReserve(blocking, keys, wait, input),
    ...leaseCommands(run, outbox, client, keys, peer),
    ...adminCommands(run, client, keys),
  }
}

/** The commands of one queue. */
export type Commands = ReturnType<typeof makeCommands>
