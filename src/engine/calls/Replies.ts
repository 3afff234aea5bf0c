/**
 * The one place where what Redis answers becomes a typed outcome: transport and
 * server errors become {@link RedisUnavailable} / {@link RedisCommandError}, and the
 * scripts' refusal codes become the queue's tagged errors.
 */

import * as Effect from "effect/Effect"
import { NoAnswer, redactText } from "../../redis/Client.ts"
import {
  GroupFull,
  InvalidOptions,
  JobNotWaiting,
  LayoutMismatch,
  OutcomeUnknown,
  QueueHasActiveJobs,
  RedisCommandError,
  RedisUnavailable,
  WrongJobState,
  WrongKeyType,
} from "../model/Errors.ts"
import { LAYOUT_VERSION, type QueueKeys } from "../model/Keys.ts"
import type { PriorityChange } from "../scripts/JobScripts.ts"

/** Refusal codes: a script that refuses returns `{code, …}` with one of these strings first, having written nothing. */
export const Refusal = {
  LayoutMismatch: "LAYOUT_MISMATCH",
  WrongKeyType: "WRONG_TYPE",
  /** `{'OUT_OF_RANGE', script, argument, value, max}`: a size argument outside the script's own 0..max. */
  OutOfRange: "OUT_OF_RANGE",
  /** `{'TOO_MANY_SCHEDULES', name, max}`: a new schedule on a queue that holds the most it may. */
  TooManySchedules: "TOO_MANY_SCHEDULES",
  /** `{'WRONG_STATE', operation, id, state, allowed}`: a call on one job found it in another state (lua/include/job-op.lua). */
  WrongState: "WRONG_STATE",
  /** `{'ACTIVE_JOBS', n}`: obliterate found n jobs active and was not forced. */
  ActiveJobs: "ACTIVE_JOBS",
  /** `{'GROUP_FULL', group, maxSize, waiting}`: an add would pass a group's maxSize (lua/add.lua). */
  GroupFull: "GROUP_FULL",
} as const

/** The typed errors of a script's refusal. */
export type Refused = LayoutMismatch | WrongKeyType | InvalidOptions | GroupFull

const UNAVAILABLE = [
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "Connection is closed",
  "Stream isn't writeable",
  "Reached the max retries per request limit",
  "connect ETIMEDOUT",
  "Command timed out",
  "LOADING",
  "CLUSTERDOWN",
  "TRYAGAIN",
  "MASTERDOWN",
  "READONLY",
  "UNBLOCKED",
  "Failed to refresh slots cache",
  "None of startup nodes is available",
]

/**
 * The error as a cause fit to keep: ioredis attaches `command: { name, args }` to its
 * errors, and the args can hold an `AUTH`/`HELLO` password (a handshake error — LOADING
 * after a restart, say — is handed to every command waiting) or job payloads. Keep the
 * command's name, drop its args; mask any URL credentials in the message and stack.
 */
export const scrubCause = (error: unknown): unknown => {
  if (!(error instanceof Error)) return error
  const command = (error as { command?: { name?: unknown } }).command
  if (command === undefined) return error
  const copy = new Error(redactText(error.message))
  copy.name = error.name
  if (error.stack !== undefined) copy.stack = redactText(error.stack)
  else delete copy.stack
  const code = (error as { code?: unknown }).code
  Object.assign(copy, code === undefined ? {} : { code }, { command: { name: command.name } })
  return copy
}

/**
 * Classify an error thrown by a Redis call. `server` (a redacted URL or `host:port`)
 * is named in a {@link RedisUnavailable}'s message, so "Reached the max retries…"
 * says which Redis could not be reached; `connectionError` (the client's last one)
 * says why, when the call's own error does not ("Connection is closed").
 * A bounded call that got no answer ({@link NoAnswer}) is a {@link RedisUnavailable}
 * when it was never sent, an {@link OutcomeUnknown} when it was.
 */
export const redisError = (
  command: string,
  error: unknown,
  server?: string,
  connectionError?: string,
): RedisUnavailable | RedisCommandError | OutcomeUnknown => {
  if (error instanceof NoAnswer && error.sent) {
    return new OutcomeUnknown({ operation: command, reason: error.message, server, cause: scrubCause(error.cause) })
  }
  const text = redactText(error instanceof Error ? error.message : String(error))
  const code = (error as { code?: string } | null)?.code ?? ""
  const unavailable = () =>
    new RedisUnavailable({
      reason:
        connectionError && !text.includes(connectionError)
          ? `${text} (last connection error: ${connectionError})`
          : text,
      server,
      cause: scrubCause(error),
    })
  if (UNAVAILABLE.some((m) => text.includes(m) || code === m)) return unavailable()
  if (error instanceof Error && error.name === "ReplyError") {
    return new RedisCommandError({ command, reason: text })
  }
  return unavailable()
}

/** The typed error for a script's refusal, or undefined when the reply is not one. */
export const scriptError = (keys: QueueKeys, reply: unknown): Refused | undefined => {
  if (!Array.isArray(reply) || typeof reply[0] !== "string") return undefined
  switch (reply[0]) {
    case Refusal.LayoutMismatch:
      return new LayoutMismatch({ queue: keys.queue, found: String(reply[1]), expected: LAYOUT_VERSION })
    case Refusal.WrongKeyType:
      return new WrongKeyType({ key: String(reply[1]), found: String(reply[2]), expected: String(reply[3]) })
    case Refusal.OutOfRange:
      return new InvalidOptions({
        field: `${String(reply[1])} ${String(reply[2])}`,
        value: Number.isNaN(Number(reply[3])) ? reply[3] : Number(reply[3]),
        reason: `one ${String(reply[1])} call takes a whole number from 0 to ${String(reply[4])}; split the call (nothing was written)`,
      })
    case Refusal.GroupFull:
      return new GroupFull({ group: String(reply[1]), maxSize: Number(reply[2]), size: Number(reply[3]) })
    case Refusal.TooManySchedules:
      return new InvalidOptions({
        field: "name",
        value: String(reply[1]),
        reason: `is a new schedule, and queue ${keys.queue} holds ${String(reply[2])} schedules, the most it may; unschedule one first (nothing was written)`,
      })
    default:
      return undefined
  }
}

/** The refusals only the operator's calls answer (lua/include/job-op.lua, lua/obliterate.lua). */
export type OperationRefused = WrongJobState | QueueHasActiveJobs

/** The typed error for an operator's call's own refusal (a job in another state, active jobs), or undefined. */
export const operationError = (keys: QueueKeys, reply: unknown): OperationRefused | undefined => {
  if (!Array.isArray(reply)) return undefined
  switch (reply[0]) {
    case Refusal.WrongState:
      return new WrongJobState({
        queue: keys.queue,
        operation: String(reply[1]),
        jobId: String(reply[2]),
        state: String(reply[3]),
        allowed: String(reply[4]).split(","),
      })
    case Refusal.ActiveJobs:
      return new QueueHasActiveJobs({ queue: keys.queue, active: Number(reply[1]) })
    default:
      return undefined
  }
}

/** A script's raw reply as an outcome: its refusal (layout, key type) as a typed failure, any other reply decoded by `decode`. */
export const decodeReply =
  <Out>(keys: QueueKeys, decode: (reply: unknown) => Out) =>
  (reply: unknown): Effect.Effect<Out, Refused> => {
    const failure = scriptError(keys, reply)
    return failure ? Effect.fail(failure) : Effect.succeed(decode(reply))
  }

/** A `change-priority` answer as an outcome: the state the job was in, or {@link JobNotWaiting}. */
export const priorityChanged = (
  jobId: string,
  r: PriorityChange,
): Effect.Effect<"waiting" | "delayed", JobNotWaiting> =>
  r.changed ? Effect.succeed(r.was) : Effect.fail(new JobNotWaiting({ jobId, state: r.state }))
