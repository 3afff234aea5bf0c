/** Passwords out of what leaseq prints: Redis URLs and messages that may hold one. */

/** Strip the password from a Redis URL: `redis://user:***@host:port/db`. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password) u.password = "***"
    return u.toString()
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@")
  }
}

/** Mask any `user:password@` in a message. */
export const redactText = (text: string): string =>
  text.replace(/(rediss?:\/\/)([^@\s/]*)@/g, (_m, s: string, cred: string) => {
    const user = cred.includes(":") ? cred.slice(0, cred.indexOf(":")) : ""
    return `${s}${user ? `${user}:` : ""}***@`
  })
