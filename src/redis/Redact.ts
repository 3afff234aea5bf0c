/**
 * Passwords out of what leaseq prints: Redis URLs and messages that may hold one.
 * The credentials of a URL are everything between `scheme://` and the *last* `@`,
 * whatever they hold (an unencoded `/`, `?`, `#`, `@`, `%` or space included), so a
 * password a URL parser would split is still masked whole.
 */

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i

/** `user:***` for `user:password`, `***` for credentials without a colon (they may be a password). */
const maskCredentials = (credentials: string): string => {
  const colon = credentials.indexOf(":")
  return colon >= 0 ? `${credentials.slice(0, colon)}:***` : "***"
}

/** Mask a `password=` query parameter (ioredis reads options from the query). */
const maskQuery = (text: string): string => text.replace(/([?&]password=)[^&#\s"]*/gi, "$1***")

/**
 * Strip the password from a Redis URL: `redis://user:***@host:port/db`. Anything
 * before the last `@` (after the scheme) counts as credentials; a URL without any
 * is returned normalised when it parses, else as given.
 */
export const redactUrl = (url: string): string => {
  const at = url.lastIndexOf("@")
  const scheme = SCHEME.exec(url)?.[0] ?? ""
  if (at >= scheme.length) {
    return maskQuery(`${scheme}${maskCredentials(url.slice(scheme.length, at))}${url.slice(at)}`)
  }
  try {
    return maskQuery(new URL(url).toString())
  } catch {
    return maskQuery(url)
  }
}

/**
 * Mask the credentials in a message: of every `redis://…@` / `rediss://…@`, and of
 * every other `scheme://user:…@`, up to the last `@` before the next whitespace (so a
 * password holding `/`, `?`, `#`, `@` or `%` is masked whole); and any `password=`
 * query parameter.
 */
export const redactText = (text: string): string =>
  maskQuery(
    text.replace(
      /(rediss?:\/\/)(\S*)@|([a-z][a-z0-9+.-]*:\/\/)([^\s/@:]*:\S*)@/gi,
      (_m, redis: string | undefined, a: string | undefined, other: string | undefined, b: string | undefined) =>
        `${redis ?? other}${maskCredentials(a ?? b ?? "")}@`,
    ),
  )
