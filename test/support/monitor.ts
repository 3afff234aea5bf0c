/**
 * Redis's MONITOR, read over a plain socket: every command the server runs, with its time,
 * the connection that sent it (or `lua` for a command a script ran) and its arguments.
 *
 * Not ioredis's `monitor()`: an ioredis client in monitor mode can take a MONITOR line that
 * arrives in the same read as its `+OK` for a command reply ("Command queue state error",
 * which failed a fresh-clone CI run). Here the socket only ever reads MONITOR's own stream.
 */
import { connect, type Socket } from "node:net"
import { onCleanup } from "./cleanup.ts"

/** One command as MONITOR showed it. */
export interface Monitored {
  /** When the server ran it: seconds on the Redis clock, with µs. */
  readonly at: number
  /** The address (`host:port`) of the connection that sent it, `lua` for a command a script ran. */
  readonly source: string
  /** The command and its arguments, unescaped. */
  readonly args: readonly string[]
}

/** A MONITOR reader (closed by the test's cleanup). */
export interface Monitor {
  /** Every command seen so far, in the order the server ran them. */
  readonly seen: readonly Monitored[]
  /** Calls `listener` with each command seen from now on. */
  readonly on: (listener: (command: Monitored) => void) => void
  /**
   * Resolves once every command the server ran before this call has been seen: it sends an
   * ECHO of a token of its own on a second connection and waits for MONITOR to show it.
   */
  readonly caughtUp: () => Promise<void>
}

const ESCAPES: Readonly<Record<string, string>> = { n: "\n", r: "\r", t: "\t", a: "\x07", b: "\b" }

/** One argument as MONITOR quotes it (Redis's `sdscatrepr`: `\\`, `\"`, `\n`… and `\xhh`). */
const unquote = (quoted: string): string =>
  quoted.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, e: string) =>
    e.length === 3 ? String.fromCharCode(Number.parseInt(e.slice(1), 16)) : (ESCAPES[e] ?? e),
  )

/** `+<s.µs> [<db> <source>] "<arg>" "<arg>" …` → a {@link Monitored}, or undefined for another line (`+OK`). */
export const parseMonitorLine = (line: string): Monitored | undefined => {
  const m = /^\+(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$/.exec(line)
  if (!m) return undefined
  const args = [...(m[3] as string).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((a) => unquote(a[1] as string))
  return { at: Number(m[1]), source: m[2] as string, args }
}

const socketTo = (url: string): Socket => {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port || 6379), hostname)
  onCleanup(() => socket.destroy())
  socket.setEncoding("utf8")
  return socket
}

let tokens = 0

/**
 * Start a MONITOR on the server at `url` and resolve once it is on (the server answered
 * `+OK`): every command the server runs from then on is in `seen`.
 */
export const monitorOf = async (url: string): Promise<Monitor> => {
  const socket = socketTo(url)
  const seen: Monitored[] = []
  const listeners: Array<(command: Monitored) => void> = []
  let started: { resolve: () => void; reject: (e: Error) => void } | undefined
  const take = (line: string) => {
    if (line === "+OK") started?.resolve()
    else if (line.startsWith("-")) started?.reject(new Error(`MONITOR refused: ${line}`))
    const command = parseMonitorLine(line)
    if (command === undefined) return
    seen.push(command)
    for (const listener of listeners) listener(command)
  }
  let rest = ""
  socket.on("data", (chunk: string) => {
    rest += chunk
    for (let end = rest.indexOf("\r\n"); end >= 0; end = rest.indexOf("\r\n")) {
      take(rest.slice(0, end))
      rest = rest.slice(end + 2)
    }
  })
  await new Promise<void>((resolve, reject) => {
    started = { resolve, reject }
    // after start, a lost socket shows as commands not seen: the test's wait names what it waited for
    socket.on("error", reject)
    socket.write("MONITOR\r\n")
  })
  const caughtUp = async () => {
    const token = `leaseq-monitor-caught-up-${process.pid}-${++tokens}`
    const shown = new Promise<void>((resolve) =>
      listeners.push((c) => {
        if (c.args[0]?.toLowerCase() === "echo" && c.args[1] === token) resolve()
      }),
    )
    const echo = socketTo(url)
    const failed = new Promise<never>((_, reject) => echo.on("error", reject))
    echo.write(`ECHO ${token}\r\n`)
    await Promise.race([shown, failed])
    echo.destroy()
  }
  return { seen, on: (listener) => void listeners.push(listener), caughtUp }
}
