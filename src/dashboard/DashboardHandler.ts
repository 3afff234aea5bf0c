/**
 * `dashboardHandler`: the dashboard as a plain `node:http` request handler (mount it in
 * an existing server, or run `leaseq dashboard`). Read-only unless `allowActions`; then
 * every action must carry the token and come from the page's own origin.
 *
 * Routes (relative to where it is mounted): `GET /` the page; `GET /api/overview`,
 * `GET /api/queue?name=<q>`, `GET /api/job?queue=<q>&id=<id>`,
 * `GET /api/jobs?queue=<q>&state=<s>&order=asc|desc&cursor=<c>`, `GET /api/children?queue=<q>&id=<id>&cursor=<c>`
 * one reading as JSON; `GET /api/stream?view=` any of them (Views.ts) as server-sent events, one reading
 * per interval from a poller shared by every viewer; `GET /api/full?queue=&id=&field=payload|result`
 * a cut value in full; `GET /api/find?id=<id>[&queue=<q>]` where a job is;
 * `POST /api/action` (JSON `{ queue, action, ids?, all?, state?, olderThanMs? }`; `clean` takes `state`, `olderThanMs`).
 */
import { randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import { InvalidOptions } from "../engine/model/Errors.ts"
import { DEFAULT_PREFIX } from "../engine/model/Keys.ts"
import { integerOr, Limits } from "../engine/model/Validate.ts"
import { checkFleetOptions, makeFleetReader } from "../metrics/Fleet.ts"
import { type ConnectionOption, connect, withDeadline } from "../redis/Client.ts"
import { runAction } from "./Actions.ts"
import { hostAllowed, sameToken, targetOf, tokenOf } from "./Guard.ts"
import { DEFAULT_MAX_VIEWS, isErrorReading, makeHub } from "./Hub.ts"
import { makeJobRoutes } from "./JobRoutes.ts"
import { PAGE, SCRIPTS } from "./Page.ts"
import { makeReaders, type Readers } from "./Read.ts"
import { openStream } from "./Stream.ts"
import { DEFAULT_MAX_STREAMS, DEFAULT_MAX_STREAMS_PER_CLIENT, makeStreamCaps, refuseStream } from "./StreamCaps.ts"
import { childrenViewIn, jobsViewIn, parseView, viewIn } from "./Views.ts"

/** Options of {@link dashboardHandler}. */
export interface DashboardOptions {
  /** As for Queue. Default: `REDIS_URL`, else `redis://127.0.0.1:6379`. */
  readonly connection?: ConnectionOption | undefined
  /** Key prefix of the queues shown. Default `"leaseq"`. */
  readonly prefix?: string | undefined
  /** Allow the actions: retry a finished job, promote a delayed one, cancel one, purge dead jobs, pause and resume the queue. Default false (read-only). */
  readonly allowActions?: boolean | undefined
  /** The token actions (and, with `readsNeedToken`, reads) must carry. Default: a random one (read it from `handler.token`). */
  readonly token?: string | undefined
  /**
   * Every reading (`/api/…`) needs the token too, in the `x-leaseq-token` header (the page
   * sends it). Turn it on whenever the dashboard is reachable beyond loopback without an
   * authenticating proxy in front: `leaseq dashboard` does when it listens beyond loopback.
   * Default false.
   */
  readonly readsNeedToken?: boolean | undefined
  /**
   * Host names (the `Host` header, port aside) the dashboard answers to besides IP
   * addresses, `localhost` and `*.localhost`; any other gets 421 before anything is read,
   * so a web page cannot reach the dashboard by pointing its own name at it (DNS
   * rebinding). Give the names it is reached by (`["dash.example.com"]`), or `["*"]` when a
   * proxy in front checks Host. Default: none.
   */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /**
   * The most views of jobs, job-list pages and unknown queues polled at once; a stream of
   * one more is refused 503. The overview, workers and each queue under the prefix are not
   * counted (made-up ids cannot lock them out). Default 100.
   */
  readonly maxViews?: number | undefined
  /** The most event streams open at once; one more is refused 503 with `Retry-After`. Default 200. */
  readonly maxStreams?: number | undefined
  /**
   * The most event streams open at once from one client address; one more is refused 503
   * with `Retry-After`. Behind a proxy every client has its address: set it to `maxStreams`
   * there. Default 20.
   */
  readonly maxStreamsPerClient?: number | undefined
  /** Show payloads and results as "(hidden)". Default false. */
  readonly hidePayloads?: boolean | undefined
  /** How often a watched view is read from Redis. Default 1000 ms. */
  readonly intervalMs?: number | undefined
  /** How long the list of queues under the prefix (one SCAN) is reused. Default 30 000 ms: a new queue shows up within it. */
  readonly discoverEveryMs?: number | undefined
  /**
   * Longest wait for one Redis call (a reading or an action). Past it the page shows the
   * error (`RedisUnavailable`, naming the server) and a reading over HTTP answers 503,
   * instead of waiting for Redis to come back. Default 5 000 ms; 10 ms to 1 h.
   */
  readonly callTimeoutMs?: number | undefined
}

/** The handler, with its token and a `close()`. */
export interface DashboardHandler {
  (req: IncomingMessage, res: ServerResponse): void
  /** The token actions and protected reads need (undefined when neither is on). */
  readonly token: string | undefined
  /** Stop polling, end open streams, close the Redis connection. Idempotent. */
  readonly close: () => Promise<void>
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" })
  res.end(typeof body === "string" ? body : JSON.stringify(body))
}

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
}

const check = (options: DashboardOptions) => {
  const intervalMs = options.intervalMs ?? 1000
  if (!Number.isFinite(intervalMs) || intervalMs < 100) {
    throw new InvalidOptions({ field: "intervalMs", value: intervalMs, reason: "give at least 100 ms" })
  }
  if (options.token !== undefined && options.token.length < 16) {
    throw new InvalidOptions({ field: "token", value: "(hidden)", reason: "give at least 16 characters" })
  }
  const { min, max } = Limits.callTimeoutMs
  const callTimeoutMs = integerOr("callTimeoutMs", options.callTimeoutMs, DASHBOARD_CALL_TIMEOUT_MS, { min, max })
  const prefix = options.prefix ?? DEFAULT_PREFIX
  checkFleetOptions({ prefix })
  const maxViews = integerOr("maxViews", options.maxViews, DEFAULT_MAX_VIEWS, { min: 1, max: 100_000 })
  const maxStreams = integerOr("maxStreams", options.maxStreams, DEFAULT_MAX_STREAMS, { min: 1, max: 100_000 })
  const perClient = integerOr("maxStreamsPerClient", options.maxStreamsPerClient, DEFAULT_MAX_STREAMS_PER_CLIENT, {
    min: 1,
    max: 100_000,
  })
  for (const h of options.allowedHosts ?? []) {
    if (typeof h !== "string" || !/^(\*|[A-Za-z0-9.-]{1,253})$/.test(h))
      throw new InvalidOptions({
        field: "allowedHosts",
        value: h,
        reason: 'give host names such as "dash.example.com", or "*"',
      })
  }
  return { intervalMs, prefix, callTimeoutMs, maxViews, maxStreams, perClient }
}

/** The default `callTimeoutMs` of the dashboard: 5 s. */
export const DASHBOARD_CALL_TIMEOUT_MS = 5_000

const HOST_HELP =
  "this Host is not the dashboard's: reach it by its IP address or localhost, or add the name to allowedHosts (leaseq dashboard --allowed-host)"
const TOKEN_HELP = "this dashboard needs its token for reads: open the link it printed at start (…/#token=…)"

/** `u` with its `view` set to `view` (the per-kind routes read through the view parser). */
const viewUrl = (u: URL, view: string): URL => new URL(`?view=${encodeURIComponent(view)}`, u)

/** A GET route answering one fixed asset. */
const asset = (type: string, body: string) => (_u: URL, res: ServerResponse) => {
  res.writeHead(200, { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store", ...SECURITY_HEADERS })
  res.end(body)
}

/** One poller per view over `readers`, each reading as JSON (saying whether actions are on). */
const hubOf = (readers: Readers, prefix: string, actions: boolean, intervalMs: number, maxViews: number) =>
  makeHub(
    (view) => {
      const withActions = <A extends object>(r: A) => JSON.stringify({ ...r, actions })
      const v = parseView(view, prefix)
      if ("error" in v) return Promise.reject(new Error(v.error))
      if (v.kind === "overview") return Effect.runPromise(readers.overview).then(withActions)
      if (v.kind === "workers") return Effect.runPromise(readers.workers).then(withActions)
      if (v.kind === "job") return Effect.runPromise(readers.job(v.queue, v.id)).then(withActions)
      if (v.kind === "jobs") return Effect.runPromise(readers.jobs(v.queue, v)).then(withActions)
      if (v.kind === "children") return Effect.runPromise(readers.children(v.queue, v.id, v.cursor)).then(withActions)
      return Effect.runPromise(readers.queue(v.queue)).then(withActions)
    },
    intervalMs,
    maxViews,
  )

/** GET routes by the last part of the path (so the handler works wherever it is mounted). */
const getRoutes = (ctx: {
  readonly readers: Readers
  readonly hub: ReturnType<typeof hubOf>
  readonly prefix: string
  readonly maxViews: number
  readonly streams: Set<ServerResponse>
  readonly caps: ReturnType<typeof makeStreamCaps>
  /** Whether a view costs no slot of `maxViews`: the overview, workers, a queue under the prefix. */
  readonly isFree: (view: string) => Promise<boolean>
}): Record<string, (u: URL, res: ServerResponse) => void> => {
  const { readers, hub, prefix, maxViews, streams, caps, isFree } = ctx
  const viewOf = (u: URL) => viewIn(u, prefix)
  const reading = (v: ReturnType<typeof viewOf>, res: ServerResponse) => {
    if ("error" in v) return json(res, 400, v)
    hub.latest(v.view).then(
      (body) => json(res, isErrorReading(body) ? 503 : 200, body),
      (e: unknown) => json(res, 503, { error: String(e) }),
    )
  }
  const { full, find } = makeJobRoutes({ readers, hub, prefix, json })
  return {
    "": asset("text/html", PAGE),
    "index.html": asset("text/html", PAGE),
    ...Object.fromEntries([...SCRIPTS].map(([file, body]) => [file, asset("text/javascript", body)])),
    stream: (u, res) => {
      const v = viewOf(u)
      if ("error" in v) return json(res, 400, v)
      const view = v.view
      void isFree(view).then((free) => {
        if (res.destroyed) return
        if (!hub.canWatch(view, free))
          return json(res, 503, {
            error: `${maxViews} views are watched already (maxViews): close a page and try again`,
          })
        const full = caps.take(res.req.socket.remoteAddress ?? "", res)
        if (full !== undefined) return refuseStream(res, full)
        openStream(res, view, hub, streams, free)
      })
    },
    overview: (_u, res) => reading({ view: "overview" }, res),
    queue: (u, res) => reading(viewOf(viewUrl(u, `queue:${u.searchParams.get("name") ?? ""}`)), res),
    job: (u, res) => reading(viewOf(viewUrl(u, `job:${u.searchParams.get("queue")}:${u.searchParams.get("id")}`)), res),
    jobs: (u, res) => reading(jobsViewIn(u, prefix), res),
    children: (u, res) => reading(childrenViewIn(u, prefix), res),
    full: (u, res) => full(u, res),
    find: (u, res) => find(u, res),
  }
}

/** Whether a view is free (Hub.ts `FREE_VIEWS`): the queues under the prefix as the overview finds them (one SCAN per discoverEveryMs, shared). */
const freeViews = (fleet: ReturnType<typeof makeFleetReader>) => {
  let names: Promise<ReadonlyArray<string>> | undefined
  return (view: string): Promise<boolean> => {
    if (view === "overview" || view === "workers") return Promise.resolve(true)
    if (!view.startsWith("queue:")) return Promise.resolve(false)
    names ??= Effect.runPromise(fleet.names).finally(() => {
      names = undefined
    })
    return names.then(
      (all) => all.includes(view.slice("queue:".length)),
      () => false,
    )
  }
}

/** Make the handler. Throws InvalidOptions for a bad option (before connecting). */
export const dashboardHandler = (options: DashboardOptions = {}): DashboardHandler => {
  const { intervalMs, prefix, callTimeoutMs, maxViews, maxStreams, perClient } = check(options)
  const allowActions = options.allowActions === true
  const readsNeedToken = options.readsNeedToken === true
  const token = allowActions || readsNeedToken ? (options.token ?? randomBytes(24).toString("base64url")) : undefined
  const allowedHosts = options.allowedHosts ?? []
  const client = connect(options.connection, {})
  // every call bounded: with Redis gone a reading fails after callTimeoutMs, naming the server
  const bounded = withDeadline(client, { timeoutMs: callTimeoutMs })
  const fleet = makeFleetReader(bounded, { prefix, discoverEveryMs: options.discoverEveryMs })
  const readers = makeReaders(bounded, fleet, prefix, {
    hidePayloads: options.hidePayloads === true,
  })
  const hub = hubOf(readers, prefix, allowActions, intervalMs, maxViews)
  const streams = new Set<ServerResponse>()

  const tokenOk = (given: string | undefined) => sameToken(token, given)
  const caps = makeStreamCaps(maxStreams, perClient)
  const gets = getRoutes({ readers, hub, prefix, maxViews, streams, caps, isFree: freeViews(fleet) })

  /** Why a request is refused before anything is read: `[status, reason]`, or undefined. */
  const refused = (req: IncomingMessage, last: string): readonly [number, string] | undefined => {
    if (!hostAllowed(req.headers.host, allowedHosts)) return [421, HOST_HELP]
    const isPage = last === "" || last === "index.html" || SCRIPTS.has(last)
    if (readsNeedToken && !isPage && !tokenOk(tokenOf(req))) return [401, TOKEN_HELP]
    return undefined
  }

  const route = (req: IncomingMessage, res: ServerResponse) => {
    const u = targetOf(req)
    if (u === undefined) return json(res, 400, { error: "the request-target does not parse" })
    const last = u.pathname.replace(/\/+$/, "").split("/").pop() ?? ""
    const refusal = refused(req, last)
    if (refusal !== undefined) return json(res, refusal[0], { error: refusal[1] })
    const get = req.method === "GET" || req.method === "HEAD" ? gets[last] : undefined
    if (get !== undefined) return get(u, res)
    if (req.method === "POST" && last === "action")
      return runAction(req, res, { tokenOk, allowActions, readers, hub, prefix })
    json(res, req.method === "GET" ? 404 : 405, { error: "not found" })
  }

  // no request, however malformed, may throw out of the handler (that would end the host process)
  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    try {
      route(req, res)
    } catch (e) {
      if (res.headersSent) res.destroy()
      else json(res, 500, { error: e instanceof Error ? e.message : String(e) })
    }
  }) as DashboardHandler

  let closing: Promise<void> | undefined
  Object.assign(handler, {
    token,
    close: () => {
      closing ??= (async () => {
        hub.close()
        for (const s of streams) s.end()
        await client.close()
      })()
      return closing
    },
  })
  return handler
}
