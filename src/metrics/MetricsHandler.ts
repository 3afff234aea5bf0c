/**
 * `metricsHandler`: the Prometheus exposition of every queue under a prefix as a plain
 * `node:http` request handler, to mount in an existing server (Express and Fastify take
 * it too) or serve with `leaseq metrics`. Scrapes share one reading: a reading is reused
 * for `cacheMs`, and scrapes that arrive while one is under way wait for it, so Redis sees
 * one round of `stats` calls per `cacheMs` whatever the number of scrapers.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import { InvalidOptions } from "../engine/model/Errors.ts"
import { DEFAULT_PREFIX } from "../engine/model/Keys.ts"
import { integerOr } from "../engine/model/Validate.ts"
import { type ConnectionOption, connect, redactText } from "../redis/Client.ts"
import { EXPOSITION_CONTENT_TYPE, renderExposition } from "./Exposition.ts"
import { checkFleetOptions, makeFleetReader } from "./Fleet.ts"
import { DEFAULT_MAX_QUEUES, READ_TIMEOUT_MS } from "./HandlerDefaults.ts"

/** Options of {@link metricsHandler}. */
export interface MetricsHandlerOptions {
  /** As for Queue. Default: `REDIS_URL`, else `redis://127.0.0.1:6379`. A client passed in is borrowed, never closed. */
  readonly connection?: ConnectionOption | undefined
  /** Key prefix of the queues to export. Default `"leaseq"`. */
  readonly prefix?: string | undefined
  /** Only these queues. Default: every queue under the prefix, found by SCAN (redone every 30 s). */
  readonly queues?: ReadonlyArray<string> | undefined
  /** How long one reading of Redis serves every scrape. Default 1000 ms. */
  readonly cacheMs?: number | undefined
  /**
   * The most queues exported (the first by name): each queue is 20 series, so the default
   * 500 is at most 10,000 series. Queues beyond it are not read, and counted in
   * `leaseq_queues_not_exported`; name the ones you need with `queues`. Default 500.
   */
  readonly maxQueues?: number | undefined
  /**
   * Longest a reading of Redis may take before the scrape is answered 503 with the reason.
   * Keep it under Prometheus' `scrape_timeout` (default 10 s), or the reason is lost to
   * "context deadline exceeded". Default 2000 ms; 10 ms to 1 h.
   */
  readonly readTimeoutMs?: number | undefined
}

/** A request handler with a `close()` that closes the connection it opened. */
export interface MetricsHandler {
  (req: IncomingMessage, res: ServerResponse): void
  /** Render the exposition now (the same text a GET returns). */
  readonly render: () => Promise<string>
  /** Close the Redis connection (when the handler made it). Idempotent. */
  readonly close: () => Promise<void>
}

export { DEFAULT_MAX_QUEUES, READ_TIMEOUT_MS } from "./HandlerDefaults.ts"

/** Default of {@link MetricsHandlerOptions.cacheMs}. */
export const DEFAULT_METRICS_CACHE_MS = 1000

/**
 * Make the handler. It answers GET and HEAD with the exposition (any path: mount it at
 * `/metrics`), 405 to other methods, and 503 with a one-line reason (never a password)
 * when Redis cannot be read, so Prometheus records the target as down.
 * Throws InvalidOptions for a bad connection, prefix or queue name.
 */
export const metricsHandler = (options: MetricsHandlerOptions = {}): MetricsHandler => {
  const cacheMs = options.cacheMs ?? DEFAULT_METRICS_CACHE_MS
  if (!Number.isFinite(cacheMs) || cacheMs < 0) {
    throw new InvalidOptions({ field: "cacheMs", value: cacheMs, reason: "give a number of milliseconds ≥ 0" })
  }
  const readTimeoutMs = integerOr("readTimeoutMs", options.readTimeoutMs, READ_TIMEOUT_MS, { min: 10, max: 3_600_000 })
  const maxQueues = integerOr("maxQueues", options.maxQueues, DEFAULT_MAX_QUEUES, { min: 1, max: 1_000_000 })
  const fleet = { prefix: options.prefix ?? DEFAULT_PREFIX, queues: options.queues, maxQueues }
  checkFleetOptions(fleet) // before connecting: a refused call opens nothing
  const client = connect(options.connection, {})
  const reader = makeFleetReader(client, fleet)
  let cached: { readonly at: number; readonly text: Promise<string> } | undefined
  const render = (): Promise<string> => {
    const now = Date.now()
    if (cached !== undefined && now - cached.at < cacheMs) return cached.text
    const reading = reader.read.pipe(
      Effect.timeoutOrElse({
        duration: readTimeoutMs,
        orElse: () => Effect.fail(new Error(`no answer from ${client.describe} within ${readTimeoutMs} ms`)),
      }),
    )
    const text = Effect.runPromise(reading).then(renderExposition)
    cached = { at: now, text }
    // a failed reading is not kept: the next scrape tries again
    text.catch(() => {
      if (cached?.text === text) cached = undefined
    })
    return text
  }
  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res
        .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" })
        .end("method not allowed\n")
      return
    }
    render().then(
      (text) => {
        res.writeHead(200, { "content-type": EXPOSITION_CONTENT_TYPE })
        res.end(req.method === "HEAD" ? undefined : text)
      },
      (e: unknown) => {
        const reason = redactText(e instanceof Error ? e.message : String(e))
        res
          .writeHead(503, { "content-type": "text/plain; charset=utf-8" })
          .end(`leaseq: cannot read Redis: ${reason}\n`)
      },
    )
  }) as MetricsHandler
  let closing: Promise<void> | undefined
  Object.assign(handler, {
    render,
    close: () => {
      closing ??= client.close()
      return closing
    },
  })
  return handler
}
