/**
 * The one place where what Redis answers becomes a typed outcome: transport and
 * server errors become {@link RedisUnavailable} / {@link RedisCommandError}, and the
 * scripts' refusal codes become the queue's tagged errors.
 */
import { LayoutMismatch, RedisCommandError, RedisUnavailable, WrongKeyType } from "./Errors.ts"
import { LAYOUT_VERSION, type QueueKeys } from "./Keys.ts"
import { redactText } from "./redis/Client.ts"

/** Refusal codes: a script that refuses returns `{code, …}` with one of these strings first, having written nothing. */
export const Refusal = {
  LayoutMismatch: "LAYOUT_MISMATCH",
  WrongKeyType: "WRONG_TYPE",
} as const

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
  "Failed to refresh slots cache",
  "None of startup nodes is available",
]

/**
 * Classify an error thrown by a Redis call. `server` (a redacted URL or `host:port`)
 * is named in a {@link RedisUnavailable}'s message, so "Reached the max retries…"
 * says which Redis could not be reached.
 */
export const redisError = (command: string, error: unknown, server?: string): RedisUnavailable | RedisCommandError => {
  const text = redactText(error instanceof Error ? error.message : String(error))
  const code = (error as { code?: string } | null)?.code ?? ""
  if (UNAVAILABLE.some((m) => text.includes(m) || code === m)) {
    return new RedisUnavailable({ reason: text, server, cause: error })
  }
  if (error instanceof Error && error.name === "ReplyError") {
    return new RedisCommandError({ command, reason: text })
  }
  return new RedisUnavailable({ reason: text, server, cause: error })
}

/** The typed error for a script's refusal, or undefined when the reply is not one. */
export const scriptError = (keys: QueueKeys, reply: unknown): LayoutMismatch | WrongKeyType | undefined => {
  if (!Array.isArray(reply) || typeof reply[0] !== "string") return undefined
  switch (reply[0]) {
    case Refusal.LayoutMismatch:
      return new LayoutMismatch({ queue: keys.queue, found: String(reply[1]), expected: LAYOUT_VERSION })
    case Refusal.WrongKeyType:
      return new WrongKeyType({ key: String(reply[1]), found: String(reply[2]), expected: String(reply[3]) })
    default:
      return undefined
  }
}
