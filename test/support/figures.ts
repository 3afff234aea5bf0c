/**
 * Run sizes and figures for the chaos-style tests (test/reliability/, the model test,
 * flow workers): `CHAOS=full` (what `npm run chaos` sets) runs the full size; anything
 * else runs the CI size. Figures are printed as one `CHAOS-FIGURES {json}` line per
 * scenario and appended to `$CHAOS_FIGURES` (a JSONL file) when that is set — in a full
 * run, by default to `<tmpdir>/leaseq-chaos-figures.jsonl`.
 */
import { appendFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** True when the full-size run was asked for (`CHAOS=full`). */
export const FULL = process.env.CHAOS === "full"

/** `ci` in CI size, `full` with `CHAOS=full`. */
export const size = <A>(ci: A, full: A): A => (FULL ? full : ci)

/** Where figures are appended: `$CHAOS_FIGURES`, else (full runs only) a JSONL file in the temp dir. */
export const FIGURES_FILE =
  process.env.CHAOS_FIGURES ?? (FULL ? join(tmpdir(), "leaseq-chaos-figures.jsonl") : undefined)

/** Report a scenario's figures: one `CHAOS-FIGURES {json}` line on stdout, and a JSONL record in {@link FIGURES_FILE}. */
export const report = (scenario: string, figures: Record<string, unknown>): void => {
  const record = { scenario, size: FULL ? "full" : "ci", at: new Date().toISOString(), ...figures }
  const line = JSON.stringify(record)
  process.stdout.write(`CHAOS-FIGURES ${line}\n`)
  if (FIGURES_FILE) appendFileSync(FIGURES_FILE, `${line}\n`)
}

/** Median and max of a list of numbers (0 when empty). */
export const summary = (xs: ReadonlyArray<number>): { readonly median: number; readonly max: number } => {
  if (xs.length === 0) return { median: 0, max: 0 }
  const s = [...xs].sort((a, b) => a - b)
  return { median: s[Math.floor(s.length / 2)]!, max: s[s.length - 1]! }
}
