/**
 * The dashboard's actions (retry and purge dead jobs), each checked before anything
 * reaches Redis: actions allowed, a JSON body (a cross-site form cannot send one without
 * a CORS preflight, which is never answered), the page's own origin, and the token.
 * A refused action writes nothing.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import { queueKeys } from "../engine/Keys.ts"
import type { Hub } from "./Hub.ts"
import type { Readers } from "./Read.ts"

/** The most dead jobs one action touches (in calls of 500). */
export const ACTION_MAX_JOBS = 100_000

const BODY_LIMIT = 64 * 1024
const BATCH = 500

interface Context {
  readonly tokenOk: (given: string | undefined) => boolean
  readonly token: string | undefined
  readonly readers: Readers
  readonly hub: Hub
  readonly prefix: string
}

interface Action {
  readonly queue: string
  readonly action: "retry" | "purge"
  readonly ids?: ReadonlyArray<string>
  /** Act on the oldest `all` dead jobs (the count the page showed and the user confirmed). */
  readonly all?: number
}

const reply = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" })
  res.end(JSON.stringify(body))
}

/** Why a request may not act, or undefined when it may. */
const refusal = (req: IncomingMessage, ctx: Context): string | undefined => {
  if (ctx.token === undefined) return "actions are off: start the dashboard with --allow-actions"
  if (!(req.headers["content-type"] ?? "").startsWith("application/json")) return "send a JSON body"
  const site = req.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return "cross-site request refused"
  const origin = req.headers.origin
  if (origin !== undefined && new URL(origin).host !== req.headers.host) return "cross-site request refused"
  const given = req.headers["x-leaseq-token"]
  if (!ctx.tokenOk(typeof given === "string" ? given : undefined)) return "missing or wrong token"
  return undefined
}

const parse = (text: string, prefix: string): Action | string => {
  let a: Partial<Action>
  try {
    a = JSON.parse(text) as Partial<Action>
  } catch {
    return "the body is not JSON"
  }
  if (a.action !== "retry" && a.action !== "purge")
    return `action must be "retry" or "purge", got ${JSON.stringify(a.action)}`
  try {
    queueKeys(String(a.queue), prefix)
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
  const byIds =
    Array.isArray(a.ids) && a.ids.length > 0 && a.ids.length <= BATCH && a.ids.every((i) => typeof i === "string")
  const byCount = Number.isSafeInteger(a.all) && (a.all as number) > 0 && (a.all as number) <= ACTION_MAX_JOBS
  if (byIds === byCount) return `give either ids (1 to ${BATCH} of them) or all (1 to ${ACTION_MAX_JOBS})`
  return a as Action
}

const perform = (ctx: Context, a: Action) =>
  Effect.gen(function* () {
    const c = yield* ctx.readers.commandsOf(a.queue)
    const call = a.action === "retry" ? c.deadRetry : c.deadPurge
    if (a.ids !== undefined && a.ids.length > 0) return yield* call({ ids: a.ids })
    let count = 0
    let remaining = 0
    for (let done = 0; done < (a.all ?? 0); done += BATCH) {
      const r = yield* call({ all: Math.min(BATCH, (a.all ?? 0) - done) })
      count += r.count
      remaining = r.remaining
      if (r.count === 0) break
    }
    return { count, remaining, missing: [] as ReadonlyArray<string> }
  })

/** Run one POSTed action and answer it. */
export const runAction = (req: IncomingMessage, res: ServerResponse, ctx: Context): void => {
  const refused = refusal(req, ctx)
  if (refused !== undefined) {
    req.resume()
    reply(res, 403, { error: refused })
    return
  }
  let body = ""
  req.setEncoding("utf8")
  req.on("data", (chunk: string) => {
    body += chunk
    if (body.length > BODY_LIMIT) req.destroy()
  })
  req.on("end", () => {
    const a = parse(body, ctx.prefix)
    if (typeof a === "string") {
      reply(res, 400, { error: a })
      return
    }
    Effect.runPromise(perform(ctx, a)).then(
      (r) => {
        reply(res, 200, r)
        void ctx.hub.refresh(`queue:${a.queue}`)
      },
      (e: unknown) => reply(res, 503, { error: e instanceof Error ? e.message : String(e) }),
    )
  })
}
