/**
 * An incremental `verify` of one queue: many short read-only script calls instead of
 * one long one, so Redis is never held for long and no payload accumulates in its
 * Lua heap. Each call checks one page — `pageSize` entries of wait (LRANGE), or about
 * `pageSize` members of a sorted set or fields of a hash (ZSCAN / HSCAN) — with
 * per-item lookups (ZSCORE, HEXISTS) instead of a table of every job.
 *
 * The only state kept across calls is here, in the caller: the ids seen in wait (a
 * list has no membership test), to find a job waiting twice and to tell a payload
 * of a waiting job from an orphan one. A payload that looks orphaned is rechecked
 * at the end (wait read again, then data and the sorted sets), so a job that moved
 * into wait meanwhile is not reported.
 *
 * Under concurrent change the result is still approximate: a job that moves between
 * two pages (reserved, released, promoted) may be missed, counted twice, or, rarely,
 * reported as a duplicate or orphan. On a queue nobody changes meanwhile it is exact.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { DEFAULT_VERIFY_LINES, DEFAULT_VERIFY_PAGE, VERIFY_PAGE_LIMITS } from "../model/CallDefaults.ts"
import { type Checked, checkIntegerOr, checkObject } from "../model/Validate.ts"
import type { ScriptDef } from "../scripts/Script.ts"
import { VERIFY_HASHES, VERIFY_SETS } from "../scripts/VerifyScripts.ts"
import { Scripts } from "./Scripts.ts"

export { DEFAULT_VERIFY_LINES, DEFAULT_VERIFY_PAGE, VERIFY_PAGE_LIMITS } from "../model/CallDefaults.ts"

/** The options of a verify, as both faces take them. */
export interface VerifyOptions {
  /** Violations listed at most (the count is always complete). Default {@link DEFAULT_VERIFY_LINES}; 1 .. 100 000. */
  readonly maxLines?: number | undefined
  /** Entries checked per script call. Default {@link DEFAULT_VERIFY_PAGE}; {@link VERIFY_PAGE_LIMITS}. */
  readonly pageSize?: number | undefined
}

/** {@link VerifyOptions} checked, defaults applied; `InvalidOptions` naming the field otherwise. */
export const checkVerifyOptions = (
  options: VerifyOptions | undefined,
): Checked<{ readonly maxLines: number; readonly pageSize: number }> => {
  const o = checkObject("options", options)
  if (Result.isFailure(o)) return Result.fail(o.failure)
  const maxLines = checkIntegerOr("maxLines", o.success.maxLines, DEFAULT_VERIFY_LINES, { min: 1, max: 100_000 })
  if (Result.isFailure(maxLines)) return Result.fail(maxLines.failure)
  const pageSize = checkIntegerOr("pageSize", o.success.pageSize, DEFAULT_VERIFY_PAGE, VERIFY_PAGE_LIMITS)
  if (Result.isFailure(pageSize)) return Result.fail(pageSize.failure)
  return Result.succeed({ maxLines: maxLines.success, pageSize: pageSize.success })
}

/** What verify found. */
export interface VerifyResult {
  /** Violations found (all counted, even past `maxLines`). */
  readonly violations: number
  /** Distinct jobs seen in wait, active, delayed, dead and done. */
  readonly jobs: number
  /** `<kind> <id> <detail>`, at most `maxLines` of them. */
  readonly lines: string[]
}

/** A script call of the queue, as `makeCommands` runs them (KEYS from the descriptor, refusals mapped). */
export type ScriptCall<E> = <In, Out>(script: ScriptDef<In, Out>, input: In) => Effect.Effect<Out, E>

/** Violation lines and counts, kept as the pages come in. */
const makeTally = (maxLines: number) => {
  const lines: string[] = []
  let violations = 0
  return {
    lines,
    violations: () => violations,
    report: (line: string) => {
      violations++
      if (lines.length < maxLines) lines.push(line)
    },
  }
}
type Tally = ReturnType<typeof makeTally>

/** Flags of a waiting id: some entry of it carries the payload inline; data holds a payload for it. */
const INLINE = 1
const STORED = 2

/** Page through wait from its right end (the pop end), calling `onEntry` for each entry. */
const readWait = <E>(
  call: ScriptCall<E>,
  pageSize: number,
  onEntry: (id: string, flags: number, alsoIn: string) => void,
) =>
  Effect.gen(function* () {
    let more = true
    for (let from = 0; more; from += pageSize) {
      const page = yield* call(Scripts.verifyWait, { from, size: pageSize })
      more = page.more
      for (const e of page.entries) onEntry(e.id, (e.inline ? INLINE : 0) | (e.stored ? STORED : 0), e.alsoIn)
    }
  })

/** Check wait; returns the ids seen (with {@link INLINE} / {@link STORED}) and counts. */
const checkWait = <E>(call: ScriptCall<E>, pageSize: number, tally: Tally) =>
  Effect.gen(function* () {
    const waiting = new Map<string, number>()
    let entries = 0
    let duplicates = 0
    yield* readWait(call, pageSize, (id, flags, alsoIn) => {
      entries++
      const before = waiting.get(id)
      if (before !== undefined) {
        if (before & flags & INLINE) tally.report(`duplicate ${id} waits twice`)
        tally.report(`duplicate ${id} in wait and wait`)
        duplicates++
        waiting.set(id, before | flags)
        return
      }
      waiting.set(id, flags)
      if (alsoIn !== "") {
        tally.report(`duplicate ${id} in wait and ${alsoIn}`)
        duplicates++
      }
    })
    for (const [id, flags] of waiting) {
      if (flags === (INLINE | STORED))
        tally.report(`double-data ${id} waits with its payload inline and also has one stored`)
      else if (flags === 0) tally.report(`no-data ${id} is in wait without a payload`)
    }
    return { waiting, entries, duplicates }
  })

/** ZSCAN each sorted set in turn; returns the members seen and how many were duplicates. */
const checkSets = <E>(call: ScriptCall<E>, pageSize: number, tally: Tally) =>
  Effect.gen(function* () {
    let entries = 0
    let duplicates = 0
    // the active jobs of each group, counted in active
    const groupActive = new Map<string, number>()
    for (const set of VERIFY_SETS) {
      let cursor = "0"
      do {
        const page = yield* call(Scripts.verifySet, { set, cursor, count: pageSize })
        cursor = page.cursor
        entries += page.members
        duplicates += page.duplicates
        for (const g of page.groups) groupActive.set(g, (groupActive.get(g) ?? 0) + 1)
        for (const line of page.lines) tally.report(line)
      } while (cursor !== "0")
    }
    return { entries, duplicates, groupActive }
  })

/**
 * HSCAN each per-job hash in turn. Returns the payloads whose job was in no sorted set
 * and not seen in wait: orphans, or jobs that moved into wait after it was read.
 */
const checkHashes = <E>(call: ScriptCall<E>, pageSize: number, waiting: ReadonlyMap<string, number>, tally: Tally) =>
  Effect.gen(function* () {
    const candidates = new Set<string>()
    const onId = (id: string) => {
      if (!waiting.has(id)) candidates.add(id)
    }
    for (const hash of VERIFY_HASHES) yield* scanHash(call, hash, pageSize, onId, tally)
    return candidates
  })

/** HSCAN one per-job hash page by page: its violations go to `tally`, each job id it names to `onId`. */
const scanHash = <E>(
  call: ScriptCall<E>,
  hash: (typeof VERIFY_HASHES)[number],
  pageSize: number,
  onId: (id: string) => void,
  tally: Tally,
) =>
  Effect.gen(function* () {
    let cursor = "0"
    do {
      const page = yield* call(Scripts.verifyHash, { hash, cursor, count: pageSize })
      cursor = page.cursor
      for (const id of page.candidates) onId(id)
      for (const line of page.lines) tally.report(line)
    } while (cursor !== "0")
  })

/** Each group's active count (kept by the scripts) against its jobs counted in active, and the totals. */
const checkGroups = <E>(call: ScriptCall<E>, pageSize: number, counted: ReadonlyMap<string, number>, tally: Tally) =>
  Effect.gen(function* () {
    const stored = new Map<string, number>()
    let cursor = "0"
    do {
      const page = yield* call(Scripts.verifyGroups, { cursor, count: pageSize })
      cursor = page.cursor
      for (const [g, n] of page.counts) stored.set(g, n)
    } while (cursor !== "0")
    let total = 0
    let totalStored = 0
    for (const g of new Set([...counted.keys(), ...stored.keys()])) {
      const has = counted.get(g) ?? 0
      const says = stored.get(g) ?? 0
      total += has
      totalStored += says
      if (has !== says) tally.report(`group-active ${g} counts ${says} active but ${has} of its jobs are`)
    }
    if (total !== totalStored) tally.report(`group-active * the groups count ${totalStored} active, ${total} are`)
  })

/** The rate window's count (meta.rateCount) against the sum of its entries: one exact read (skipped past 10,000 entries). */
const checkRate = <E>(call: ScriptCall<E>, tally: Tally) =>
  Effect.map(call(Scripts.verifyRate, undefined), ({ stored, counted, entries }) => {
    const says = Math.max(stored, 0)
    if (counted >= 0 && says !== counted)
      tally.report(`rate-count * meta.rateCount is ${says} but the rate window's ${entries} entries lease ${counted}`)
  })

/** Each parent waiting for children: its pending count against its children; then each edge's parent exists (flows, lua/include/deps.lua). */
const checkDependencies = <E>(call: ScriptCall<E>, pageSize: number, tally: Tally) =>
  Effect.gen(function* () {
    let cursor = "0"
    do {
      const page = yield* call(Scripts.depsVerify, { cursor, count: pageSize })
      cursor = page.cursor
      for (const line of page.lines) tally.report(line)
    } while (cursor !== "0")
    // every edge's parent exists, waits, or is in depGone (the sweep deletes its edges)
    const orphans = new Set<string>()
    do {
      const page = yield* call(Scripts.depsVerify, { cursor, count: pageSize, mode: "edges" })
      cursor = page.cursor
      for (const line of page.lines) {
        if (orphans.has(line)) continue
        orphans.add(line)
        tally.report(line)
      }
    } while (cursor !== "0")
  })

/**
 * Report the candidates that are orphans for sure: a job promoted, retried or released
 * into wait after wait was read is not one. Reads wait again (only when there are
 * candidates), then rechecks the rest in pages: still in data, in no sorted set.
 */
const confirmOrphans = <E>(call: ScriptCall<E>, pageSize: number, candidates: ReadonlySet<string>, tally: Tally) =>
  Effect.gen(function* () {
    if (candidates.size === 0) return
    const moved = new Set<string>()
    yield* readWait(call, pageSize, (id) => {
      if (candidates.has(id)) moved.add(id)
    })
    const left = [...candidates].filter((id) => !moved.has(id))
    for (let i = 0; i < left.length; i += pageSize) {
      const orphans = yield* call(Scripts.verifyOrphans, left.slice(i, i + pageSize))
      for (const id of orphans) tally.report(`orphan-data ${id} has a payload but is in no state`)
    }
  })

/**
 * Check one queue's invariants, page by page: every job id in exactly one of wait,
 * active, delayed, dead, done; every job has a payload (inline in its wait entry, or
 * in data) and every payload a job; a lease token exactly for the active jobs;
 * per-job fields (max, fails, lost, err, result) only for jobs that exist; each group's
 * active count (and their total) equal to its jobs in active; the rate window's count
 * equal to the sum of its entries; each parent's pending count equal to its children pending.
 *
 * Cost: O(jobs) in total, in calls of O(pageSize) each; the caller holds the ids of
 * the waiting jobs. Approximate under concurrent change (see the module comment).
 */
export const verifyQueue = <E>(
  call: ScriptCall<E>,
  options: { readonly maxLines: number; readonly pageSize: number },
): Effect.Effect<VerifyResult, E> =>
  Effect.gen(function* () {
    const tally = makeTally(options.maxLines)
    const wait = yield* checkWait(call, options.pageSize, tally)
    const sets = yield* checkSets(call, options.pageSize, tally)
    yield* checkGroups(call, options.pageSize, sets.groupActive, tally)
    yield* checkRate(call, tally)
    yield* checkDependencies(call, options.pageSize, tally)
    const candidates = yield* checkHashes(call, options.pageSize, wait.waiting, tally)
    yield* confirmOrphans(call, options.pageSize, candidates, tally)
    return {
      violations: tally.violations(),
      jobs: wait.entries + sets.entries - wait.duplicates - sets.duplicates,
      lines: tally.lines,
    }
  })
