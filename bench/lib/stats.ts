/** Small statistics helpers for the benchmark harness. */

export const sorted = (xs: ReadonlyArray<number>): number[] => [...xs].sort((a, b) => a - b)

/** The q-quantile (0..1) of a sample, nearest-rank. NaN for an empty sample. */
export const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  if (xs.length === 0) return Number.NaN
  const s = sorted(xs)
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))
  return s[rank] as number
}

export const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return Number.NaN
  const s = sorted(xs)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

export const min = (xs: ReadonlyArray<number>): number => (xs.length === 0 ? Number.NaN : Math.min(...xs))
export const max = (xs: ReadonlyArray<number>): number => (xs.length === 0 ? Number.NaN : Math.max(...xs))

/** Format a number for a table: 3 significant digits, thousands separators. */
export const fmt = (x: number | undefined): string => {
  if (x === undefined || Number.isNaN(x)) return "n/a"
  const abs = Math.abs(x)
  if (abs >= 1000) return Math.round(x).toLocaleString("en-US")
  if (abs >= 100) return x.toFixed(0)
  if (abs >= 10) return x.toFixed(1)
  if (abs >= 1) return x.toFixed(2)
  return x.toPrecision(2)
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Poll `check` every `everyMs` until it returns true; throws after `timeoutMs`. */
export const waitFor = async (
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  everyMs = 20,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}
