/**
 * What the dashboard checks before it reads anything, for any client: the request-target
 * parses (a malformed one is a 400, never a throw), the `Host` header names the dashboard
 * itself (DNS rebinding: a page whose name now points at the dashboard sends its own name
 * there, and is refused), and, when reads need it, the token.
 */
import { timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { isIP } from "node:net"

/** The request's URL, or undefined when its request-target does not parse (`GET //[`, `http://[/`, `//%zz/`). */
export const targetOf = (req: IncomingMessage): URL | undefined => {
  const raw = req.url ?? "/"
  // only the path and query matter: an absolute-form target is cut to them first
  const path = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i, "") : raw
  try {
    // a target starting with `//` would read as a host: pin it under the dashboard's own base
    return new URL(
      path.startsWith("/") ? `http://dashboard.invalid${path.replace(/^\/+/, "/")}` : "http://dashboard.invalid/",
    )
  } catch {
    return undefined
  }
}

/** The host name of a `Host` header value (`[::1]:7300` → `::1`, `Example.org.:80` → `example.org`), or undefined. */
export const hostNameOf = (host: string | undefined): string | undefined => {
  if (host === undefined || host.length === 0 || host.length > 255) return undefined
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/@]+)(?::\d{1,5})?$/.exec(host)
  if (m === null) return undefined
  return (m[1] as string)
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.$/, "")
}

/**
 * True when `host` (a `Host` header) may reach the dashboard: an IP address (a page can only
 * have an IP literal as its origin when it was served from that address, so no rebinding),
 * `localhost` or a name under `.localhost`, or one of `allowed` (compared without case; `"*"`
 * allows any, for a proxy that checks Host itself).
 */
export const hostAllowed = (host: string | undefined, allowed: ReadonlyArray<string>): boolean => {
  const name = hostNameOf(host)
  if (name === undefined) return false
  if (isIP(name) !== 0 || name === "localhost" || name.endsWith(".localhost")) return true
  return allowed.some((a) => a === "*" || a.toLowerCase().replace(/\.$/, "") === name)
}

/** True when `host` (an address to listen on) is loopback only: `127.0.0.0/8`, `::1`, `localhost`. */
export const isLoopback = (host: string): boolean => {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "")
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1"
}

/** Constant-time comparison of a given token with the dashboard's. */
export const sameToken = (token: string | undefined, given: string | undefined): boolean => {
  if (token === undefined || given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The token a request carries (`x-leaseq-token` header), or undefined. */
export const tokenOf = (req: IncomingMessage): string | undefined => {
  const given = req.headers["x-leaseq-token"]
  return typeof given === "string" ? given : undefined
}

/** The host of an `Origin` header, or undefined when it does not parse (`null`, garbage). */
export const originHost = (origin: string): string | undefined => {
  try {
    return new URL(origin).host
  } catch {
    return undefined
  }
}
