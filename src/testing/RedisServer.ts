/**
 * Start a throw-away `redis-server` from PATH on a free loopback port, in a
 * temporary directory. Used by the demo, the test harness and the benchmarks;
 * exported to users as `leaseq/testing`.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A running local redis-server. */
export interface LocalRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  /** The server's working directory (AOF/RDB files live here). */
  readonly dir: string
  readonly process: ChildProcess
  /** Stop the server (SIGTERM, then SIGKILL after 2 s) and remove its directory unless `keepDir`. */
  readonly stop: (options?: { readonly keepDir?: boolean }) => Promise<void>
}

/** Options for {@link startRedisServer}. */
export interface StartRedisOptions {
  /** Port to listen on. Default: a free port chosen by the OS. */
  readonly port?: number | undefined
  /** Working directory. Default: a new temp dir. */
  readonly dir?: string | undefined
  /** Extra `redis-server` arguments, e.g. `["--appendonly", "yes"]`. Default: none. */
  readonly args?: ReadonlyArray<string> | undefined
  /** The binary to run. Default: `redis-server` from PATH. */
  readonly binary?: string | undefined
  /** How long to wait for "Ready to accept connections". Default: 10 000 ms. */
  readonly readyTimeoutMs?: number | undefined
}

/** Error thrown when no `redis-server` binary can be found. */
export class RedisServerNotFound extends Error {
  override readonly name = "RedisServerNotFound"
}

/** Ask the OS for a free TCP port on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** True when `binary` can be run (`redis-server --version` answers). */
export const hasRedisServer = (binary = "redis-server"): boolean => {
  const r = spawnSync(binary, ["--version"], { stdio: "ignore" })
  return r.status === 0
}

/**
 * Start a redis-server. Resolves once it accepts connections.
 * Rejects with {@link RedisServerNotFound} when the binary is missing, with a
 * message saying what to install.
 */
export const startRedisServer = async (options: StartRedisOptions = {}): Promise<LocalRedis> => {
  const binary = options.binary ?? "redis-server"
  if (!hasRedisServer(binary)) {
    throw new RedisServerNotFound(
      `${binary} not found on PATH: install Redis (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis) or set REDIS_URL`,
    )
  }
  const ownDir = options.dir === undefined
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "leaseq-redis-"))
  const port = options.port ?? (await freePort())
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--logfile",
    "",
    "--daemonize",
    "no",
    ...(options.args ?? []),
  ]
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`redis-server on port ${port} did not become ready in time:\n${output.slice(-2000)}`))
    }, options.readyTimeoutMs ?? 10_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with code ${code} before it was ready:\n${output.slice(-2000)}`))
    })
  })
  // Keep draining output so the pipe never fills up, but do not keep Node alive for it.
  child.stdout?.removeAllListeners("data")
  child.stderr?.removeAllListeners("data")
  child.stdout?.resume()
  child.stderr?.resume()
  child.removeAllListeners("exit")
  child.unref()
  ;(child.stdout as unknown as { unref?: () => void } | null)?.unref?.()
  ;(child.stderr as unknown as { unref?: () => void } | null)?.unref?.()

  const stop = async (stopOptions: { readonly keepDir?: boolean } = {}) => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => child.kill("SIGKILL"), 2_000)
        child.once("exit", () => {
          clearTimeout(timer)
          resolve()
        })
        child.kill("SIGTERM")
      })
    }
    if (ownDir && !stopOptions.keepDir) rmSync(dir, { recursive: true, force: true })
  }
  return { url: `redis://127.0.0.1:${port}`, port, dir, process: child, stop }
}
