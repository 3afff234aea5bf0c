/**
 * What the CLI writes and how it ends: exit codes, the one failure type every
 * command ends with, one-line redacted messages, text tables, JSON, and a progress
 * line on stderr (only when stderr is a terminal).
 */
import * as Data from "effect/Data"
import { redactText } from "../redis/Client.ts"

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
}

/** The process's own streams. */
export const processIo = (): Io => ({
  out: (text) => {
    process.stdout.write(text)
  },
  err: (text) => {
    process.stderr.write(text)
  },
  errIsTTY: process.stderr.isTTY === true,
})

/** Collapse a message to one line and mask any password in it (redis:// URLs, and any other `scheme://user:password@`). */
export const oneLine = (text: string): string =>
  redactText(text)
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/@:]*):[^\s/@]+@/gi, "$1:***@")
    .replace(/\s*\n\s*/g, " ")
    .trim()

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

/** Write exactly one JSON document, on one line, to stdout (one line per run in a log). */
export const writeJson = (io: Io, value: unknown): void => {
  io.out(`${JSON.stringify(value)}\n`)
}

/** Format rows as left-aligned columns (numbers right-aligned), with a header row. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number>>): string => {
  const cells = [header, ...rows.map((r) => r.map(String))]
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)))
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"))
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()
  return `${cells.map(line).join("\n")}\n`
}

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
