/**
 * The rate limit and concurrency cap of a partitioned queue, held for the queue as a whole
 * (docs/scaling.md, "Limits of a partitioned queue"): each partition enforces a share in its
 * own reserve (unchanged: meta.rateMax, meta.concurrency), and the shares never sum past the
 * limit. A rebalance moves share to the partitions with jobs ready, in three steps:
 *
 * 1. `look` at every partition under a fresh epoch (from the coordinator, partition 0):
 *    its share, what it uses now (rate window count, leases held) and its ready jobs;
 * 2. `lower` the shares above their target (a share may go below what is in use: that
 *    part stays counted, as `max(share, used)`, until it drains);
 * 3. `raise` shares below their target out of what the limit leaves, refused by a partition
 *    a newer epoch has looked at.
 *
 * A rebalancer that dies between steps loses nothing: the next one recomputes from its
 * looks. The sweep of a partitioned queue runs one; so do partitioned workers, one per
 * {@link REBALANCE_EVERY_MS} for the queue however many there are. A queue without limits pays one small call (the epoch, which
 * answers "none") per worker every {@link REBALANCE_IDLE_MS}, nothing per job.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { runScript, type ScriptFailure } from "../calls/Commands.ts"
import { Scripts } from "../calls/Scripts.ts"
import type { QueueKeys } from "../model/Keys.ts"

/** A partition's split limits as `flow-share`'s look saw them (-1: not set). */
type ShareLook = Extract<ReturnType<typeof Scripts.flowShare.decode>, { readonly kind: "look" }>["look"]

/** How often a partitioned worker rebalances its queue's split limits: 200 ms. */
export const REBALANCE_EVERY_MS = 200

/** How often it looks again when the queue has no split limit: 5 s (a limit set meanwhile starts split evenly). */
export const REBALANCE_IDLE_MS = 5000

/**
 * How a rebalance ended: `none` (no split limit set), `skipped` (another ran less than the
 * gap ago), `done`, or `overtaken` (a newer rebalance or set looked first).
 */
export type Rebalanced = "none" | "skipped" | "done" | "overtaken"

/** `total` split over `n` partitions as evenly as whole numbers allow, the remainder one each from `start` on. */
export const splitEvenly = (total: number, n: number, start = 0): ReadonlyArray<number> =>
  Array.from({ length: n }, (_, i) => Math.floor(total / n) + ((((i - start) % n) + n) % n < total % n ? 1 : 0))

/** One partition as the plan sees it: its share, what it uses, whether jobs wait there. */
export interface PartShare {
  readonly share: number
  readonly used: number
  readonly ready: number
}

/**
 * The target share of each partition: the limit split evenly over the partitions with
 * jobs ready (all of them when none has), the remainder rotated by `start`.
 */
export const planShares = (total: number, parts: ReadonlyArray<PartShare>, start: number): ReadonlyArray<number> => {
  const wanting = parts.flatMap((p, i) => (p.ready > 0 ? [i] : []))
  const among = wanting.length > 0 ? wanting : parts.map((_, i) => i)
  const split = splitEvenly(total, among.length, start % among.length)
  const targets = parts.map(() => 0)
  among.forEach((i, k) => {
    targets[i] = split[k]!
  })
  return targets
}

/** What a partition holds of the limit: its share, or more while more is in use. */
const held = (p: { readonly share: number; readonly used: number }) => Math.max(p.share, p.used)

/** The raises that take the partitions from their held amounts toward `targets` within `total`. */
export const raisesFor = (
  total: number,
  parts: ReadonlyArray<{ readonly share: number; readonly used: number }>,
  targets: ReadonlyArray<number>,
): ReadonlyArray<number> => {
  let room = total - parts.reduce((n, p) => n + held(p), 0)
  return parts.map((p, i) => {
    const want = targets[i]! - held(p)
    if (want <= 0 || room <= 0) return 0
    const give = Math.min(want, room)
    room -= give
    return held(p) + give - p.share
  })
}

type Limit = "rate" | "concurrency"

/** The partitions' view of one split limit, when all of them agree on it (else undefined: a set is under way, or one was set by hand). */
const viewOf = (looks: ReadonlyArray<ShareLook>, limit: Limit) => {
  const total = limit === "rate" ? looks[0]!.rateTotal : looks[0]!.concTotal
  if (total < 0) return undefined
  const parts: PartShare[] = []
  for (const l of looks) {
    const [t, share, used] =
      limit === "rate" ? [l.rateTotal, l.rateShare, l.rateUsed] : [l.concTotal, l.concShare, l.concUsed]
    if (t !== total || share < 0 || (limit === "rate" && l.ratePer !== looks[0]!.ratePer)) return undefined
    parts.push({ share, used: Math.max(used, 0), ready: l.ready })
  }
  return { total, parts }
}

/**
 * One rebalance of a partitioned queue's split limits over `parts` (index order), unless
 * another took its epoch less than `gapMs` ago (default 0: always).
 */
export const rebalance = (
  client: RedisClient,
  parts: ReadonlyArray<QueueKeys>,
  gapMs = 0,
): Effect.Effect<Rebalanced, ScriptFailure> =>
  Effect.gen(function* () {
    const epoch = yield* runScript(client, parts[0]!, Scripts.flowEpoch, gapMs)
    if (epoch === 0) return "none" as const
    if (epoch < 0) return "skipped" as const
    const replies = yield* Effect.forEach(
      parts,
      (k) => runScript(client, k, Scripts.flowShare, { op: "look", epoch }),
      {
        concurrency: "unbounded",
      },
    )
    const looks = replies.flatMap((r) => (r.kind === "look" ? [r.look] : []))
    if (looks.length < parts.length) return "overtaken" as const
    const views = { rate: viewOf(looks, "rate"), concurrency: viewOf(looks, "concurrency") }
    const start = epoch % parts.length
    const targets = {
      rate: views.rate && planShares(views.rate.total, views.rate.parts, start),
      concurrency: views.concurrency && planShares(views.concurrency.total, views.concurrency.parts, start),
    }
    const lowerTo = (limit: Limit, i: number): number | "" => {
      const v = views[limit]
      const t = targets[limit]
      return v && t && t[i]! < v.parts[i]!.share ? t[i]! : ""
    }
    const lowered = yield* Effect.forEach(
      parts,
      (k, i) => {
        const rate = lowerTo("rate", i)
        const concurrency = lowerTo("concurrency", i)
        return rate === "" && concurrency === ""
          ? Effect.succeed(undefined)
          : runScript(client, k, Scripts.flowShare, { op: "lower", rate, concurrency })
      },
      { concurrency: "unbounded" },
    )
    const after = (limit: Limit) => {
      const v = views[limit]
      if (!v || !targets[limit]) return parts.map(() => 0)
      const now = v.parts.map((p, i) => {
        const r = lowered[i]
        if (r?.kind !== "lowered") return p
        const [share, used] = limit === "rate" ? [r.rateShare, r.rateHeld] : [r.concShare, r.concHeld]
        return { ...p, share: Math.max(share, 0), used: Math.max(used, 0) }
      })
      return raisesFor(v.total, now, targets[limit])
    }
    const raise = { rate: after("rate"), concurrency: after("concurrency") }
    const done = yield* Effect.forEach(
      parts,
      (k, i) => {
        const rate = raise.rate[i]! > 0 ? raise.rate[i]! : ""
        const concurrency = raise.concurrency[i]! > 0 ? raise.concurrency[i]! : ""
        return rate === "" && concurrency === ""
          ? Effect.succeed(true)
          : runScript(client, k, Scripts.flowShare, { op: "raise", epoch, rate, concurrency }).pipe(
              Effect.map((r) => r.kind === "done"),
            )
      },
      { concurrency: "unbounded" },
    )
    return done.every((d) => d) ? ("done" as const) : ("overtaken" as const)
  })

/**
 * Set (or clear: null) the rate limit or the cap of a partitioned queue as a whole: each
 * partition gets an even share of it (remainder to the first partitions), under a fresh
 * epoch so that no rebalance that looked before raises anything after.
 */
export const setSplitLimit = (
  client: RedisClient,
  parts: ReadonlyArray<QueueKeys>,
  change:
    | { readonly limit: "rate"; readonly max: number | null; readonly perMs: number }
    | {
        readonly limit: "concurrency"
        readonly max: number | null
      },
): Effect.Effect<void, ScriptFailure> =>
  Effect.gen(function* () {
    const epoch = yield* runScript(client, parts[0]!, Scripts.flowEpoch, undefined)
    const shares = change.max === null ? parts.map(() => "" as const) : splitEvenly(change.max, parts.length)
    const total = change.max ?? ""
    yield* Effect.forEach(
      parts,
      (k, i) =>
        runScript(
          client,
          k,
          Scripts.flowShare,
          change.limit === "rate"
            ? {
                op: "set",
                epoch,
                rate: shares[i]!,
                concurrency: "",
                rateTotal: total,
                concTotal: "-",
                perMs: change.perMs,
              }
            : { op: "set", epoch, rate: "", concurrency: shares[i]!, rateTotal: "-", concTotal: total, perMs: "" },
        ),
      { concurrency: "unbounded", discard: true },
    )
  })
