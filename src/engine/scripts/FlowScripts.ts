/**
 * The descriptors of the scripts that split a partitioned queue's rate limit and
 * concurrency cap over its partitions: `flow-epoch` (the coordinator, partition 0) and
 * `flow-share` (each partition's share). See src/engine/partition/FlowSplit.ts.
 */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/**
 * `flow-epoch`: the next epoch; for a rebalance (`gapMs` given) 0 when partition 0 holds no
 * split limit, -1 when another rebalance took one less than `gapMs` ago.
 */
export const flowEpoch = defineScript({
  name: "flow-epoch",
  keys: ["meta"],
  argv: ["layout", "need", "gapMs"],
  args: (gapMs: number | undefined): Argv =>
    gapMs === undefined ? [LAYOUT_VERSION, "any", ""] : [LAYOUT_VERSION, "split", String(gapMs)],
  decode: (reply): number => Number(list(reply)[0]),
})

/** A partition's split limits as `look` saw them (-1: not set). */
export interface ShareLook {
  readonly rateTotal: number
  readonly rateShare: number
  /** Leases in the rate window now. */
  readonly rateUsed: number
  readonly ratePer: number
  readonly concTotal: number
  readonly concShare: number
  /** Leases held now. */
  readonly concUsed: number
  /** Jobs ready to lease. */
  readonly ready: number
}

/** One `flow-share` call (see lua/flow-share.lua): "" leaves a value, "-" leaves a total. */
export type ShareChange =
  | { readonly op: "look"; readonly epoch: number }
  | { readonly op: "lower"; readonly rate: number | ""; readonly concurrency: number | "" }
  | { readonly op: "raise"; readonly epoch: number; readonly rate: number | ""; readonly concurrency: number | "" }
  | {
      readonly op: "set"
      readonly epoch: number
      readonly rate: number | ""
      readonly concurrency: number | ""
      readonly rateTotal: number | "" | "-"
      readonly concTotal: number | "" | "-"
      readonly perMs: number | ""
    }

/** What `flow-share` answered: a look, the shares after a lower, or whether a raise/set applied (false: a newer epoch looked). */
export type ShareReply =
  | { readonly kind: "look"; readonly look: ShareLook }
  | {
      readonly kind: "lowered"
      readonly rateShare: number
      /** max(share, the rate window's count now) */
      readonly rateHeld: number
      readonly concShare: number
      /** max(share, the leases held now) */
      readonly concHeld: number
    }
  | { readonly kind: "done" }
  | { readonly kind: "stale"; readonly newer: number }

const str = (v: number | string): string => (typeof v === "number" ? String(v) : v)

/** `flow-share`: look at, lower, raise or set one partition's share of the split limits. */
export const flowShare = defineScript({
  name: "flow-share",
  keys: ["meta", "rate", "active", ...READY_KEYS],
  argv: ["layout", "op", "epoch", "rate", "concurrency", "rateTotal", "concTotal", "perMs"],
  args: (c: ShareChange): Argv => {
    const epoch = c.op === "lower" ? "" : String(c.epoch)
    const rate = c.op === "look" ? "" : str(c.rate)
    const conc = c.op === "look" ? "" : str(c.concurrency)
    if (c.op !== "set") return [LAYOUT_VERSION, c.op, epoch, rate, conc, "-", "-", ""]
    return [LAYOUT_VERSION, c.op, epoch, rate, conc, str(c.rateTotal), str(c.concTotal), str(c.perMs)]
  },
  decode: (reply): ShareReply => {
    const r = list<number | string>(reply).map(Number)
    if (r[0] === 0) return { kind: "stale", newer: r[1]! }
    if (r.length === 9) {
      const [, rateTotal, rateShare, rateUsed, ratePer, concTotal, concShare, concUsed, ready] = r as [
        number,
        ...number[],
      ]
      return {
        kind: "look",
        look: {
          rateTotal: rateTotal!,
          rateShare: rateShare!,
          rateUsed: rateUsed!,
          ratePer: ratePer!,
          concTotal: concTotal!,
          concShare: concShare!,
          concUsed: concUsed!,
          ready: ready!,
        },
      }
    }
    if (r.length === 5) return { kind: "lowered", rateShare: r[1]!, rateHeld: r[2]!, concShare: r[3]!, concHeld: r[4]! }
    return { kind: "done" }
  },
})
