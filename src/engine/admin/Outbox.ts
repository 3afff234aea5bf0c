/**
 * The outbox of a queue's dependencies (flows, docs/flows.md): the notes its finished
 * children left for parents the child's script could not reach (another queue: another
 * hash slot), applied on each parent's queue, then removed. Run by the sweep (every pass,
 * in-process in workers and by `leaseq sweep`) and by a worker right after an ack that left
 * notes.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { runScript, type ScriptFailure } from "../calls/Commands.ts"
import { Scripts } from "../calls/Scripts.ts"
import type { RedisError } from "../model/Errors.ts"
import { type QueueKeys, queueKeys } from "../model/Keys.ts"
import { type Note, parseNote } from "../scripts/DepsScripts.ts"

/** Most notes one drain round reads. */
export const DRAIN_NOTES = 500

/** Notes read from the outbox of `keys`' queue, by the parent queue each goes to. */
const byParentQueue = (keys: QueueKeys, notes: ReadonlyArray<string>) => {
  const byQueue = new Map<string, { readonly raw: string[]; readonly notes: Note[] }>()
  for (const raw of notes) {
    const { parentQueue: pq, parent, child, outcome, result } = parseNote(raw)
    const queue = pq === "" ? keys.queue : pq
    const g = byQueue.get(queue) ?? { raw: [], notes: [] }
    g.raw.push(raw)
    g.notes.push({ parent, queue: pq === "" ? "" : keys.queue, child, outcome, result })
    byQueue.set(queue, g)
  }
  return byQueue
}

/** Apply `notes` (read from the outbox of `keys`' queue) on each parent's queue: the notes applied, as read. */
const applyNotes = (client: RedisClient, keys: QueueKeys, notes: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const applied: string[] = []
    for (const [queue, g] of byParentQueue(keys, notes)) {
      yield* runScript(client, queue === keys.queue ? keys : queueKeys(queue, keys.prefix), Scripts.depsApply, g.notes)
      applied.push(...g.raw)
    }
    return applied
  })

/**
 * Apply the notes of the outbox of the queue of `keys` to their parents (each parent's
 * queue applies a note once however often it is sent), then remove them: a crash in between
 * applies them again, a no-op. At most `rounds` rounds of {@link DRAIN_NOTES}: how many
 * notes were applied. `given`: before each round but the last, the notes known to be in the
 * outbox since the last (complete's answers carry them), applied without a read first (the
 * fan-in's round trip); the last round reads, so a note no answer carried (a fail's, a
 * reserve's riders', another worker's) is applied by this drain too. `seen` is shown every
 * note read or given (a worker learns its fan-in peer from them: calls/FanIn.ts).
 */
export const drainOutbox = (
  client: RedisClient,
  keys: QueueKeys,
  rounds = 4,
  given: () => ReadonlyArray<string> = () => [],
  seen?: (notes: ReadonlyArray<string>) => void,
): Effect.Effect<number, ScriptFailure | RedisError> =>
  Effect.gen(function* () {
    let applied: string[] = []
    let total = 0
    for (let round = 0; round < rounds; round++) {
      const known = round < rounds - 1 ? given() : []
      if (known.length > 0) {
        seen?.(known)
        // applied without a read; removed by the next read (or at the end), as these are
        applied.push(...(yield* applyNotes(client, keys, known)))
        total += known.length
        continue
      }
      const { notes, more } = yield* runScript(client, keys, Scripts.depsOutbox, { limit: DRAIN_NOTES, applied })
      seen?.(notes)
      applied = yield* applyNotes(client, keys, notes)
      total += notes.length
      if (notes.length < DRAIN_NOTES && !more) break
    }
    if (applied.length > 0) yield* runScript(client, keys, Scripts.depsOutbox, { limit: 0, applied })
    return total
  })

/** Most parents records one `deps-parents` call reads before an obliterate. */
const FAREWELL_PAGE = 500

/** Tell the parents `links` names (in other queues) that their child in the queue of `keys` is removed. */
const tellRemoved = (
  client: RedisClient,
  keys: QueueKeys,
  links: ReadonlyArray<{ readonly queue: string; readonly parent: string; readonly child: string }>,
) =>
  Effect.gen(function* () {
    const byQueue = new Map<string, Note[]>()
    for (const l of links) {
      const notes = byQueue.get(l.queue) ?? []
      notes.push({ parent: l.parent, queue: keys.queue, child: l.child, outcome: "removed" })
      byQueue.set(l.queue, notes)
    }
    for (const [queue, notes] of byQueue) {
      for (let i = 0; i < notes.length; i += DRAIN_NOTES) {
        yield* runScript(client, queueKeys(queue, keys.prefix), Scripts.depsApply, notes.slice(i, i + DRAIN_NOTES))
      }
    }
    return links.length
  })

/**
 * Before the queue of `keys` is obliterated (docs/flows.md): its outbox is applied, then every
 * parent in another queue of one of its jobs is told the child is `removed` (each parent's
 * policy decides: "wait" and "fail" fail it, "ignore" and "remove" count it), a page of
 * parents records a call, so no parent waits for ever on a queue that is gone. Nothing is
 * told when jobs are active and `force` is false (obliterate refuses then). Answers how many
 * parents' edges were told.
 */
export const farewellParents = (
  client: RedisClient,
  keys: QueueKeys,
  force: boolean,
): Effect.Effect<number, ScriptFailure | RedisError> =>
  Effect.gen(function* () {
    const first = yield* runScript(client, keys, Scripts.depsParents, { cursor: "0", count: FAREWELL_PAGE })
    if (first.active > 0 && !force) return 0
    // a child's end still in the outbox goes first: a parent that counted it is not failed
    while ((yield* drainOutbox(client, keys)) > 0) {}
    let told = yield* tellRemoved(client, keys, first.links)
    let cursor = first.cursor
    while (cursor !== "0") {
      const page = yield* runScript(client, keys, Scripts.depsParents, { cursor, count: FAREWELL_PAGE })
      told += yield* tellRemoved(client, keys, page.links)
      cursor = page.cursor
    }
    return told
  })
