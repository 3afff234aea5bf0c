/**
 * The job page's flow section (flows, docs/flows.md): a job's parents and the first page of
 * its children, each with its state, so the page links up and down the tree. Bounded as
 * `leaseq flow --max` bounds its tree: {@link FLOW_LIMITS}. And the children view: the
 * further pages of a parent's children, read through the same paged read as `dependencies()`.
 */
import * as Effect from "effect/Effect"
import { runScript } from "../engine/calls/Commands.ts"
import { readDependencies } from "../engine/calls/DependencyPage.ts"
import { redisError } from "../engine/calls/Replies.ts"
import { Scripts } from "../engine/calls/Scripts.ts"
import { type QueueKeys, queueKeys } from "../engine/model/Keys.ts"
import type { RedisClient } from "../redis/Client.ts"

/**
 * The most nodes the job page's flow section lists: its parents, and the first page of its
 * children (the rest in pages of as many on the children view). Each listed node's state is
 * one `job-peek` that loads no value.
 */
export const FLOW_LIMITS = { parents: 20, children: 50 } as const

/** A page's cursor as the children view names it: the engine's cursor as base64url (no `:` or `/` in a view or an address). */
export const encodeChildrenCursor = (cursor: string | undefined): string | null =>
  cursor === undefined ? null : Buffer.from(cursor, "utf8").toString("base64url")

/** The state of job `jobId` of `queue` under the prefix of `keys` (one `job-peek` that loads no value), or undefined. */
const stateIn = (client: RedisClient, keys: QueueKeys, queue: string, jobId: string) =>
  runScript(client, queueKeys(queue, keys.prefix), Scripts.jobPeek, {
    id: jobId,
    limits: { cut: 0, loadMax: 0, budget: 0, hide: true },
  }).pipe(Effect.map((r) => (r[0] === 1 ? String(r[1]) : undefined)))

/**
 * A page of {@link FLOW_LIMITS}.children children of job `id` after `cursor` (the engine's,
 * "" from the start), each with its state; `cursor` of the reply the next page's (base64url),
 * null at the end.
 */
export const childrenOf = (client: RedisClient, keys: QueueKeys, id: string, cursor: string) =>
  Effect.gen(function* () {
    const page = yield* readDependencies(client, keys, id, { count: FLOW_LIMITS.children, cursor })
    const children = yield* Effect.forEach(
      page.children,
      (c) =>
        Effect.map(stateIn(client, keys, c.queue, c.id), (state) => ({
          queue: c.queue,
          id: c.id,
          counted: c.state,
          state: state ?? `${c.state} (not retained)`,
        })),
      { concurrency: "unbounded" },
    )
    const { pending, open, waiting } = page
    return { children, next: encodeChildrenCursor(page.cursor), pending, open, waiting }
  })

/** The flow of job `id` as the job page shows it: its parents and a page of its children, each with its state. */
export const flowOf = (client: RedisClient, keys: QueueKeys, id: string) =>
  Effect.gen(function* () {
    const raw = yield* Effect.tryPromise({
      try: () => client.command("HGET", [keys.depParents, id]),
      catch: (e) => redisError("HGET", e, client.describe),
    })
    const refs = (typeof raw === "string" ? raw.split(",") : []).flatMap((entry) => {
      const bar = entry.indexOf("|")
      return bar < 0 ? [] : [{ queue: entry.slice(0, bar) || keys.queue, id: entry.slice(bar + 1) }]
    })
    const [parents, page] = yield* Effect.all(
      [
        Effect.forEach(
          refs.slice(0, FLOW_LIMITS.parents),
          (p) => Effect.map(stateIn(client, keys, p.queue, p.id), (state) => ({ ...p, state: state ?? "not found" })),
          { concurrency: "unbounded" },
        ),
        childrenOf(client, keys, id, ""),
      ],
      { concurrency: "unbounded" },
    )
    return {
      parents,
      parentsMore: Math.max(0, refs.length - FLOW_LIMITS.parents),
      children: page.children,
      moreChildren: page.next !== null,
      next: page.next,
      pending: page.pending,
      open: page.open,
      waiting: page.waiting,
    }
  })
