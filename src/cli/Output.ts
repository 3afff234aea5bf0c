/**
 * What the CLI writes and how it ends: exit codes, the one failure type every
 * command ends with, one-line redacted messages, text tables, JSON, and a progress
 * line on stderr (only when stderr is a terminal).
 */
import * as Data from "effect/Data"
import { redactText } from "../redis/Redact.ts"

/** Exit codes of every `leaseq` command. */
export const ExitCode = {
  /** The command ran (a sweep that found nothing is a success). */
  ok: 0,
  /** Redis could not be reached, refused a command, or holds keys leaseq cannot use. */
  redis: 1,
  /** Bad flags or configuration; nothing was written to Redis. */
  usage: 2,
  /** `verify` found a violation of the queue's invariants. */
  violation: 3,
} as const

/** One of {@link ExitCode}'s values. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

/** Where a command writes: stdout, stderr, and whether stderr is a terminal. */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  readonly errIsTTY: boolean
  /**
   * Resolves once stdout has taken what was written (at once when it has room): true, or
   * false when stdout is gone (a closed pipe: `leaseq events | head -1`). Default: always true.
   */
  readonly outReady?: () => Promise<boolean>
}

/** Resolves once `stream` can take more (true), or once it is closed or failed (false). */
const roomIn = (stream: NodeJS.WriteStream): Promise<boolean> => {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve(false)
  if (!stream.writableNeedDrain) return Promise.resolve(true)
  return new Promise((resolve) => {
    const done = (open: boolean) => () => {
      stream.off("drain", onDrain).off("close", onClose).off("error", onClose)
      resolve(open)
    }
    const onDrain = done(true)
    const onClose = done(false)
    stream.once("drain", onDrain).once("close", onClose).once("error", onClose)
  })
}

/** The process's own streams. */
export const processIo = (): Io => ({
  outReady: () => roomIn(process.stdout),
  out: (text) => {
    process.stdout.write(text)
  },
  err: (text) => {
    process.stderr.write(text)
  },
  errIsTTY: process.stderr.isTTY === true,
})

/**
 * What a terminal would act on or show reordered: C0 controls (ESC, BEL, CR, newline,
 * tab…), DEL, C1 controls, the bidi marks, embeddings, overrides and isolates
 * (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), and the line and paragraph
 * separators U+2028 / U+2029.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const hex = (c: string, width: number): string => c.charCodeAt(0).toString(16).padStart(width, "0")

/**
 * The one escaping function of the CLI: every character of {@link UNSAFE} shown as an
 * escape, so text from outside (error messages, dedupe keys, event reasons, payloads,
 * worker ids) can neither drive the terminal nor reorder what it shows. `"text"`
 * (default): `\x1b`, `\x0a`, `\u202e`; `"json"`: `\u001b`, `\u202e` (valid inside a JSON
 * string, where the rest of these characters can only be). A backslash is left as it is.
 */
export const escapeControl = (text: string, form: "text" | "json" = "text"): string =>
  text.replace(UNSAFE, (c) => (form === "text" && c <= "\xff" ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`))

/** Collapse a message to one line, mask any password in it (see `redactText`), and escape what a terminal would act on. */
export const oneLine = (text: string): string =>
  escapeControl(
    redactText(text)
      .replace(/\s*\n\s*/g, " ")
      .trim(),
  )

/** A command ended without doing what it was asked: a one-line reason and an exit code. */
export class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly exitCode: ExitCodeValue
  readonly reason: string
}> {
  override get message() {
    return oneLine(this.reason)
  }
}

/** A usage problem (exit 2): bad flag or configuration, nothing written. */
export const usage = (reason: string): CliFailure => new CliFailure({ exitCode: ExitCode.usage, reason })

const USAGE_TAGS = new Set(["InvalidOptions", "InvalidQueueName"])

/**
 * Map any error a command can end with to a {@link CliFailure}: leaseq's validation
 * errors are usage problems (exit 2); Redis errors, foreign keys and layout
 * mismatches are exit 1. Messages are redacted.
 */
export const toFailure = (error: unknown, context?: string): CliFailure => {
  if (error instanceof CliFailure) return error
  const tag = (error as { _tag?: unknown } | null)?._tag
  const message = error instanceof Error ? error.message : String(error)
  const reason = context ? `${context}: ${message}` : message
  return new CliFailure({ exitCode: USAGE_TAGS.has(String(tag)) ? ExitCode.usage : ExitCode.redis, reason })
}

/** One JSON document on one line, with DEL, C1 and bidi characters escaped too (`\u202e`). */
export const jsonLine = (value: unknown): string => `${escapeControl(JSON.stringify(value), "json")}\n`

/** Write exactly one JSON document, on one line, to stdout (one line per run in a log). */
export const writeJson = (io: Io, value: unknown): void => {
  io.out(jsonLine(value))
}

/** Write text to stdout with every line's content escaped (see {@link escapeControl}); the newlines stay. */
export const writeText = (io: Io, text: string): void => {
  io.out(
    text
      .split("\n")
      .map((line) => escapeControl(line))
      .join("\n"),
  )
}

/** Format rows as left-aligned columns (numbers right-aligned), with a header row; every cell escaped. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number>>): string => {
  const cells = [header, ...rows.map((r) => r.map((c) => escapeControl(String(c))))]
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)))
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"))
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()
  return `${cells.map(line).join("\n")}\n`
}

/** `1 job`, `2 jobs`: a count and its noun, plural unless the count is 1 (`many` for irregular plurals). */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** Shorten `text` to `max` characters with an ellipsis. */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** Human form of a duration in ms: `850ms`, `12.3s`, `4m05s`, `2h07m`, `3d04h`. */
export const duration = (ms: number): string => {
  if (ms < 1_000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`
  const pad = (n: number) => String(n).padStart(2, "0")
  const s = Math.floor(ms / 1_000)
  if (s < 3_600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`
  if (s < 86_400) return `${Math.floor(s / 3_600)}h${pad(Math.floor(s / 60) % 60)}m`
  return `${Math.floor(s / 86_400)}d${pad(Math.floor(s / 3_600) % 24)}h`
}

/** A status line on stderr, redrawn at most every `everyMs`; silent unless enabled. */
export interface Progress {
  readonly update: (text: string) => void
  /** Erase the line (call before writing the result). */
  readonly done: () => void
}

/**
 * A progress line for long passes: only when `enabled` and stderr is a terminal,
 * and only from `everyMs` after the start (short runs print nothing).
 */
export const makeProgress = (io: Io, enabled: boolean, everyMs = 250): Progress => {
  if (!enabled || !io.errIsTTY) return { update: () => {}, done: () => {} }
  let last = Date.now()
  let shown = false
  return {
    update: (text) => {
      const now = Date.now()
      if (now - last < everyMs) return
      last = now
      shown = true
      io.err(`\r\x1b[2K${oneLine(text)}`)
    },
    done: () => {
      if (shown) io.err("\r\x1b[2K")
      shown = false
    },
  }
}
