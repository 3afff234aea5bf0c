/**
 * Ack lanes: how a re-sent acknowledgement answers what its first run did. The Redis
 * client re-sends a call whose reply it lost (after a reconnect) with the same arguments;
 * complete, fail and release calls sent on a lane record their answer in the queue's
 * `reqs` hash under the lane, with a request id drawn per call, and a re-send answers from
 * that record (lua/include/ack-record.lua). A lane carries one call at a time: it is taken
 * for a call and given back once the call is answered, so its record is replaced only by a
 * call sent after the re-sends of the last one. A caller has as many lanes as it has acks
 * in flight at once.
 */
import { newRequestId } from "./RequestId.ts"

/** An ack call's lane (a script input): a re-send of the call answers what it did. Default: none. */
export interface OnLane {
  readonly lane?: string | undefined
}

/** An ack call's input: its list (`items` or `leases`) and its lane. */
export type AckInput<K extends string, T> = { readonly [k in K]: ReadonlyArray<T> } & OnLane

/** ARGV `lane, requestId`: the id is drawn when the call's ARGV is built, so a re-send carries the same. */
export const laneArgs = (lane = ""): [string, string] => [lane, lane && newRequestId()]

/** A caller's lanes: "<callerId>:a<n>", n from 0 up. */
export interface AckLanes {
  /** A lane no call in flight uses. */
  readonly take: () => string
  /** Give `lane` back once its call was answered (a call that may still be sent is never given back: its lane is left unused). */
  readonly give: (lane: string) => void
}

/** The lanes of the caller `callerId` (a worker's or a manual consumer's id; no "|"). */
export const makeAckLanes = (callerId: string): AckLanes => {
  const free: string[] = []
  let next = 0
  return {
    take: () => free.pop() ?? `${callerId}:a${next++}`,
    give: (lane) => {
      free.push(lane)
    },
  }
}
