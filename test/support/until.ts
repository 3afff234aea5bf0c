/**
 * Waiting on state, never on time: `until` polls a check (Redis, child output, a
 * counter) until it gives a value; `untilRedisClock` waits until the Redis clock — the
 * clock every lease deadline and schedule is scored on — passes a given ms.
 */
import type { Redis } from "ioredis"

/**
 * Poll `check` until it returns a value that is not undefined/false, and return it. This
 * waits on state, never for a fixed time; `timeoutMs` (default 60,000) only turns a hang
 * into a readable failure naming `what`. `everyMs` (default 25) is the poll interval.
 */
export const until = async <A>(
  what: string,
  check: () => Promise<A | undefined | false> | A | undefined | false,
  { timeoutMs = 60_000, everyMs = 25 }: { readonly timeoutMs?: number; readonly everyMs?: number } = {},
): Promise<A> => {
  const start = Date.now()
  const wait = { what, start, abandoned: false }
  waits.add(wait)
  try {
    while (true) {
      const v = await check()
      if (v !== undefined && v !== false) return v
      if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
      if (wait.abandoned) throw new Error(`abandoned (its test ended) while waiting for ${what}`)
      await new Promise((r) => setTimeout(r, everyMs))
    }
  } finally {
    waits.delete(wait)
  }
}

/** The waits of {@link until} still polling. */
const waits = new Set<{ readonly what: string; readonly start: number; abandoned: boolean }>()

/**
 * The waits still polling when a test ended (it failed or timed out meanwhile, or did not
 * await one), each as "<what> (for <n> ms)", and stop them at their next poll: the
 * per-test hook (setup-each.ts) names them in the failure, so a test that timed out says
 * what it was waiting for.
 */
export const abandonWaits = (): string[] => {
  const now = Date.now()
  return [...waits].map((w) => {
    w.abandoned = true
    waits.delete(w)
    return `${w.what} (for ${now - w.start} ms)`
  })
}

/** The part of a Redis client the clock needs (an ioredis `Redis`, or a cluster node's). */
export type HasTime = Pick<Redis, "time">

/** Redis's clock in ms (the clock every lease deadline is scored on). */
export const redisNow = async (raw: HasTime): Promise<number> => {
  const [s, us] = await raw.time()
  return Number(s) * 1000 + Math.floor(Number(us) / 1000)
}

/**
 * Wait until the Redis clock of `raw` is past `ms` (strictly after it, as a deadline
 * scored `ms` has then run out), polling every 5 ms; fails after 60 s like {@link until}.
 */
export const untilRedisClock = async (raw: HasTime, ms: number): Promise<void> => {
  await until(`the Redis clock to pass ${ms}`, async () => (await redisNow(raw)) > ms, { everyMs: 5 })
}
