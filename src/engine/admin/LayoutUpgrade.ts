/**
 * `upgrade`: move a live queue to this client's key layout (lua/upgrade.lua) in bounded
 * steps, each one script call, its state kept in the queue's meta: a caller that crashed
 * resumes where the last step left off by running it again. Used by the Promise and
 * Effect faces (`queue.upgrade()`) and the `leaseq upgrade` CLI.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Commands } from "../calls/Commands.ts"
import type { UpgradeStep } from "../scripts/UpgradeScripts.ts"

/** Options of {@link upgradeQueue}. */
export interface UpgradeOptions {
  /** Entries per script call (1 to 1000). Default 500. */
  readonly pageSize?: number | undefined
  /** Write the new layout even while workers of the old one are live (their held jobs are then retried as a crashed worker's). Default false. */
  readonly force?: boolean | undefined
  /** While workers of the old layout are live: ms between looks. Default 1000. */
  readonly pollMs?: number | undefined
  /** Give up waiting for workers of the old layout after this many ms (the move stays resumable). Default 60000. */
  readonly waitMs?: number | undefined
  /** Called after every step (progress). */
  readonly onStep?: ((step: UpgradeStep) => void) | undefined
}

/** What an upgrade did. */
export interface UpgradeResult {
  readonly queue: string
  /** True when the queue is now of this client's layout; false when workers of the old layout were still live at `waitMs`. */
  readonly done: boolean
  /** The queue's layout now (the old one while not done). */
  readonly layout: string
  /** Script calls made. */
  readonly steps: number
  /** Entries rewritten or deleted. */
  readonly moved: number
  /** The longest single call, ms as the client saw it (round trip included). */
  readonly longestCallMs: number
  /** When not done: the live workers of the old layout (at most 100). */
  readonly waitingFor: ReadonlyArray<string>
}

/** Default entries per upgrade call. */
export const DEFAULT_UPGRADE_PAGE = 500

/** Run upgrade steps on one queue until it is of this layout, or old-layout workers outlast `waitMs`. */
export const upgradeQueue = Effect.fnUntraced(function* (commands: Commands, options: UpgradeOptions = {}) {
  const page = options.pageSize ?? DEFAULT_UPGRADE_PAGE
  const pollMs = options.pollMs ?? 1000
  const waitMs = options.waitMs ?? 60_000
  let steps = 0
  let moved = 0
  let longest = 0
  let waitingSince: number | undefined
  while (true) {
    const t0 = yield* Clock.currentTimeMillis
    const step = yield* commands.upgradeStep(page, options.force ?? false)
    const t1 = yield* Clock.currentTimeMillis
    steps += 1
    longest = Math.max(longest, t1 - t0)
    options.onStep?.(step)
    const result = (done: boolean, layout: string, waitingFor: ReadonlyArray<string>): UpgradeResult => ({
      queue: commands.keys.queue,
      done,
      layout,
      steps,
      moved,
      longestCallMs: longest,
      waitingFor,
    })
    if (step.kind === "done") return result(true, step.layout, [])
    if (step.kind === "step") {
      moved += step.moved
      waitingSince = undefined
      continue
    }
    waitingSince ??= t1
    if (t1 - waitingSince >= waitMs) return result(false, "1", step.workers)
    yield* Effect.sleep(Duration.millis(pollMs))
  }
})
