/**
 * What makes a string unusable as a Redis URL, said without the password: checked
 * before ioredis sees it, whose own `TypeError` would carry the whole URL (its
 * `input`), and whose parser would split a password holding an unencoded `/`, `?` or
 * `#` and send the rest as a host, port or database.
 */

/** The Redis used when no connection is given and `REDIS_URL` is not set. */
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379"

/** The fix for credentials a URL parser would split, shown in every such refusal. */
const ENCODE = "percent-encode it (/ as %2F, ? as %3F, # as %23, @ as %40, % as %25, space as %20)"

/**
 * Why `url` cannot be used as a Redis URL, or `undefined` when it can. The reason
 * never holds the URL or any part of its credentials (the caller shows the URL
 * through `redactUrl`). Refused: anything but `redis://` or `rediss://`;
 * credentials (everything before the last `@`) holding `/`, `?` or `#`, or a `%` that
 * is not a percent-encoding; and whatever `new URL` refuses.
 */
export const redisUrlProblem = (url: string): string | undefined => {
  const scheme = /^rediss?:\/\//.exec(url)?.[0]
  if (scheme === undefined) return "a URL must start with redis:// or rediss://"
  const at = url.lastIndexOf("@")
  if (at >= scheme.length) {
    const credentials = url.slice(scheme.length, at)
    if (/[/?#]/.test(credentials)) {
      return `the user:password before the @ holds a '/', '?' or '#', which would end it early: ${ENCODE}`
    }
    try {
      decodeURIComponent(credentials)
    } catch {
      return `the user:password before the @ holds a '%' that is not a percent-encoding: ${ENCODE}`
    }
  }
  try {
    new URL(url)
  } catch {
    return "it is not a valid URL (a bad port or host?)"
  }
  return undefined
}
