/**
 * HTTP over a raw socket, for requests no client library would send (a malformed
 * request-target, an `Origin: null`, a forged `Host`): the bytes exactly as given, the
 * reply as it came.
 */
import { connect } from "node:net"

/** Send `request` (the whole request, as bytes) to 127.0.0.1:`port`; resolves with everything the server sent until it closed. */
export const rawExchange = (port: number, request: string | Buffer): Promise<string> =>
  new Promise((resolve) => {
    const s = connect(port, "127.0.0.1", () => s.write(request))
    let out = ""
    s.on("data", (d: Buffer) => {
      out += d.toString("latin1")
    })
    s.on("error", () => {})
    s.on("close", () => resolve(out))
  })

/** One GET (or another method) with the given headers (Host defaults to 127.0.0.1:port), `Connection: close`. */
export const rawRequest = (
  port: number,
  target: string,
  headers: Record<string, string> = {},
  { method = "GET", body = "" }: { readonly method?: string; readonly body?: string } = {},
): Promise<string> => {
  const all: Record<string, string> = { host: `127.0.0.1:${port}`, ...headers, connection: "close" }
  if (body !== "") all["content-length"] = String(Buffer.byteLength(body))
  const head = Object.entries(all)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")
  return rawExchange(port, `${method} ${target} HTTP/1.1\r\n${head}\r\n${body}`)
}

/** The status code of a raw reply, or 0 when the connection closed with none. */
export const statusOf = (reply: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0)

/** The body of a raw reply (after the blank line; chunked framing left in). */
export const bodyOf = (reply: string): string => reply.slice(reply.indexOf("\r\n\r\n") + 4)
