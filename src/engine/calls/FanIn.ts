/**
 * The peer of a command set's completes (flows' fan-in, docs/architecture.md): the queue
 * whose parents this queue's children release. Learnt from the first note for a parent of
 * another queue (a complete's answer, a drain of the outbox); from then on each complete
 * carries that queue's keys, so its script releases such a parent at once instead of leaving
 * a note. Only a queue in the same hash slot (standalone Redis: any): a Lua script touches
 * one slot. Parents of other queues keep the outbox. Nothing is learnt without flows.
 */
import type { RedisClient } from "../../redis/Client.ts"
import { keySlot } from "../../redis/Slot.ts"
import { type QueueKeys, queueKeys } from "../model/Keys.ts"
import type { FanIn } from "../scripts/AckScripts.ts"
import { parseNote } from "../scripts/DepsScripts.ts"
import { peerKeys } from "../scripts/Script.ts"
import { Scripts } from "./Scripts.ts"

/** A command set's fan-in peer: `learn` from notes, `current` the peer and complete's KEYS with it. */
export interface FanInPeer {
  /** Learn from outbox notes (`parseNote`) the first same-slot parent queue. */
  readonly learn: (notes: ReadonlyArray<string> | undefined) => void
  /** The peer (undefined until learnt) and complete's KEYS with its keys. */
  readonly current: () => { readonly fanin: FanIn; readonly keys: ReadonlyArray<string> } | undefined
}

/** A fresh {@link FanInPeer} for the queue of `keys` on `client`. */
export const fanInPeer = (client: RedisClient, keys: QueueKeys): FanInPeer => {
  let peer: { readonly fanin: FanIn; readonly keys: ReadonlyArray<string> } | undefined
  const consider = (queue: string) => {
    if (queue === "" || queue === keys.queue) return
    let theirs: QueueKeys
    try {
      theirs = queueKeys(queue, keys.prefix)
    } catch {
      return
    }
    if (client.isCluster && keySlot(theirs.meta) !== keySlot(keys.meta)) return
    peer = { fanin: { peer: queue, queue: keys.queue }, keys: peerKeys(Scripts.complete, keys, theirs) }
  }
  return {
    learn: (notes) => {
      if (peer !== undefined || notes === undefined) return
      for (const raw of notes) {
        const note = parseNote(raw)
        if (note.outcome === "completed") consider(note.parentQueue)
        if (peer !== undefined) return
      }
    },
    current: () => peer,
  }
}
