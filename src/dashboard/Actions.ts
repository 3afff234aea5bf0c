/**
 * The dashboard's actions (retry a finished job, purge dead jobs, promote a delayed job,
 * cancel a job, clean finished jobs, pause and resume the queue), each checked before anything
 * reaches Redis: actions allowed, a JSON body (a cross-site form cannot send one without
 * a CORS preflight, which is never answered), the page's own origin, and the token.
 * A refused action writes nothing.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import { runScript } from "../engine/calls/Commands.ts"
import { operationError } from "../engine/calls/Replies.ts"
import { Scripts } from "../engine/calls/Scripts.ts"
import { queueKeys } from "../engine/model/Keys.ts"
import { newRequestId } from "../engine/model/RequestId.ts"
import { validateJobId } from "../engine/queue/JobControl.ts"
import { CLEAN_STATES, type CleanState } from "../engine/scripts/OpsScripts.ts"
import { originHost, tokenOf } from "./Guard.ts"
import type { Hub } from "./Hub.ts"
import type { Readers } from "./Read.ts"

/** The most dead jobs one action touches (in calls of 500). */
export const ACTION_MAX_JOBS = 100_000

const BODY_LIMIT = 64 * 1024
const BATCH = 500

interface Context {
  readonly tokenOk: (given: string | undefined) => boolean
  readonly allowActions: boolean
  readonly readers: Readers
  readonly hub: Hub
  readonly prefix: string
}

interface Action {
  readonly queue: string
  readonly action: ActionName
  /** The jobs (retry, purge, promote, cancel); none for pause and resume. */
  readonly ids?: ReadonlyArray<string>
  /** Act on the oldest `all` dead jobs (the count the page showed and the user confirmed). */
  readonly all?: number
  /** clean: the finished state to delete from (completed, cancelled, dead). */
  readonly state?: CleanState
  /** clean: only jobs finished at least this many ms ago (default 0). */
  readonly olderThanMs?: number
}

const ACTIONS = ["retry", "purge", "promote", "cancel", "clean", "pause", "resume"] as const
type ActionName = (typeof ACTIONS)[number]

const reply = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" })
  res.end(JSON.stringify(body))
}

/** Why a request may not act, or undefined when it may. */
const refusal = (req: IncomingMessage, ctx: Context): string | undefined => {
  if (!ctx.allowActions) return "actions are off: start the dashboard with --allow-actions"
  if (!(req.headers["content-type"] ?? "").startsWith("application/json")) return "send a JSON body"
  const site = req.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return "cross-site request refused"
  const origin = req.headers.origin
  // an Origin that does not parse (`null`: a sandboxed or opaque origin) is not this page's
  if (origin !== undefined && originHost(origin) !== req.headers.host) return "cross-site request refused"
  if (!ctx.tokenOk(tokenOf(req))) return "missing or wrong token"
  return undefined
}

/** Why the targets (ids, all) do not fit the action, or undefined when they do. */
const badTargets = (a: Partial<Action>): string | undefined => {
  const byIds = Array.isArray(a.ids) && a.ids.length > 0 && a.ids.length <= BATCH
  if (a.action === "pause" || a.action === "resume")
    return a.ids === undefined && a.all === undefined ? undefined : `${a.action} takes neither ids nor all`
  if (a.action === "cancel" || a.action === "promote")
    return byIds && a.all === undefined ? undefined : `${a.action} takes ids (1 to ${BATCH})`
  const byCount = Number.isSafeInteger(a.all) && (a.all as number) > 0 && (a.all as number) <= ACTION_MAX_JOBS
  return byIds === byCount ? `give either ids (1 to ${BATCH} of them) or all (1 to ${ACTION_MAX_JOBS})` : undefined
}

/** Why the fields do not fit the action: clean's own, or the targets of the others (which take no state or age). */
const badFields = (a: Partial<Action>): string | undefined => {
  if (a.action === "clean") return badClean(a)
  if (a.state !== undefined || a.olderThanMs !== undefined) return `${a.action} takes neither state nor olderThanMs`
  return badTargets(a)
}

/** Why a clean's fields do not fit, or undefined: a finished state, an age in ms, at most `all` jobs, no ids. */
const badClean = (a: Partial<Action>): string | undefined => {
  if (!CLEAN_STATES.includes(a.state as CleanState))
    return `clean's state must be one of ${CLEAN_STATES.join(", ")}; got ${JSON.stringify(a.state)}`
  const age = a.olderThanMs ?? 0
  if (!Number.isSafeInteger(age) || age < 0 || age > MAX_AGE_MS)
    return `clean's olderThanMs must be a whole number of ms from 0 to ${MAX_AGE_MS}; got ${JSON.stringify(a.olderThanMs)}`
  if (a.ids !== undefined) return "clean takes no ids: it deletes by state and age"
  const all = a.all ?? ACTION_MAX_JOBS
  return Number.isSafeInteger(all) && all > 0 && all <= ACTION_MAX_JOBS
    ? undefined
    : `clean's all (the most jobs deleted) must be 1 to ${ACTION_MAX_JOBS}; got ${JSON.stringify(a.all)}`
}

/** The oldest finished age `clean` takes: one year. */
const MAX_AGE_MS = 31_536_000_000

/** The queue name and job ids checked: the first one's error message, or undefined. */
const badNames = (a: Partial<Action>, prefix: string): string | undefined => {
  try {
    queueKeys(String(a.queue), prefix)
    for (const id of Array.isArray(a.ids) ? a.ids : []) validateJobId(id)
    return undefined
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

const parse = (text: string, prefix: string): Action | string => {
  let a: Partial<Action>
  try {
    a = JSON.parse(text) as Partial<Action>
  } catch {
    return "the body is not JSON"
  }
  if (typeof a !== "object" || a === null || Array.isArray(a)) return "the body is not a JSON object"
  if (!ACTIONS.includes(a.action as ActionName))
    return `action must be one of ${ACTIONS.join(", ")}; got ${JSON.stringify(a.action)}`
  return badNames(a, prefix) ?? badFields(a) ?? (a as Action)
}

/** Cancel each of `ids`: how many were cancelled, and those unknown or already finished. */
const cancelAll = (ctx: Context, queue: string, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const c = yield* ctx.readers.controlOf(queue)
    const missing: string[] = []
    for (const id of ids) if ((yield* c.cancel(id)) === undefined) missing.push(id)
    return { count: ids.length - missing.length, remaining: 0, missing: missing as ReadonlyArray<string> }
  })

/** Pause or resume: count 1 when the queue's pause state changed, else 0. */
const pauseOrResume = (ctx: Context, queue: string, pause: boolean) =>
  Effect.flatMap(ctx.readers.controlOf(queue), (c) => (pause ? c.pause : c.resume)).pipe(
    Effect.map((changed) => ({ count: changed ? 1 : 0, remaining: 0, missing: [] as ReadonlyArray<string> })),
  )

/**
 * Promote or retry each of `ids` (the engine's promote and retry, one call per job, each
 * with its own request id so a re-sent call acts once): how many were done, and why each
 * other was refused (its state, as the engine's WrongJobState says it).
 */
const eachJob = (ctx: Context, queue: string, ids: ReadonlyArray<string>, action: "promote" | "retry") =>
  Effect.gen(function* () {
    const { client, keys } = yield* ctx.readers.scriptsOf(queue)
    const script = action === "promote" ? Scripts.promote : Scripts.jobRetry
    const refused: string[] = []
    for (const id of ids) {
      const wrong = operationError(keys, yield* runScript(client, keys, script, { requestId: newRequestId(), id }))
      if (wrong !== undefined) refused.push(wrong.message)
    }
    const none: ReadonlyArray<string> = []
    return {
      count: ids.length - refused.length,
      remaining: 0,
      missing: none,
      refused: refused as ReadonlyArray<string>,
    }
  })

const perform = (ctx: Context, a: Action) => {
  if (a.action === "cancel") return cancelAll(ctx, a.queue, a.ids ?? [])
  if (a.action === "promote" || (a.action === "retry" && a.ids !== undefined))
    return eachJob(ctx, a.queue, a.ids ?? [], a.action)
  if (a.action === "pause" || a.action === "resume") return pauseOrResume(ctx, a.queue, a.action === "pause")
  if (a.action === "clean") return cleanAction(ctx, a)
  return deadAction(ctx, a)
}

/**
 * Delete the jobs of a finished state that finished at least `olderThanMs` ago, at most
 * `all` (default {@link ACTION_MAX_JOBS}), in calls of {@link BATCH}: the engine's clean script.
 */
const cleanAction = (ctx: Context, a: Action) =>
  Effect.gen(function* () {
    const { client, keys } = yield* ctx.readers.scriptsOf(a.queue)
    const most = a.all ?? ACTION_MAX_JOBS
    let count = 0
    let remaining = 0
    while (count < most) {
      const limit = Math.min(BATCH, most - count)
      const r = yield* runScript(client, keys, Scripts.clean, {
        state: a.state as CleanState,
        olderThanMs: a.olderThanMs ?? 0,
        limit,
      })
      count += r.deleted
      remaining = r.left
      if (r.deleted < limit) break
    }
    return { count, remaining, missing: [] as ReadonlyArray<string> }
  })

/** Purge dead jobs by ids, or retry or purge the oldest `all` in calls of {@link BATCH}. */
const deadAction = (ctx: Context, a: Action) =>
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
    let a: Action | string
    try {
      a = parse(body, ctx.prefix)
    } catch (e) {
      a = e instanceof Error ? e.message : String(e)
    }
    if (typeof a === "string") {
      reply(res, 400, { error: a })
      return
    }
    Effect.runPromise(perform(ctx, a)).then(
      (r) => {
        reply(res, 200, r)
        void ctx.hub.refresh(`queue:${a.queue}`)
        void ctx.hub.refresh("overview")
        for (const id of a.ids ?? []) void ctx.hub.refresh(`job:${a.queue}:${id}`)
      },
      (e: unknown) => reply(res, 503, { error: e instanceof Error ? e.message : String(e) }),
    )
  })
}
