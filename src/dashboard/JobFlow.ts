/**
 * The job page's flow section (flows, docs/flows.md): a job's parents and the first page of
 * its children, each with its state, so the page links up and down the tree. Bounded as
 * `leaseq flow --max` bounds its tree: {@link FLOW_LIMITS}.
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
 * children (the rest counted as more, as `leaseq flow --max` bounds its tree; each child's
 * page lists its own). Each listed node's state is one `job-peek` that loads no value.
 */
export const FLOW_LIMITS = { parents: 20, children: 50 } as const

/** The flow of job `id` as the job page shows it: its parents and a page of its children, each with its state. */
export const flowOf = (client: RedisClient, keys: QueueKeys, id: string) =>
  Effect.gen(function* () {
    const zero = { cut: 0, loadMax: 0, budget: 0, hide: true }
    const stateIn = (queue: string, jobId: string) =>
      runScript(client, queueKeys(queue, keys.prefix), Scripts.jobPeek, { id: jobId, limits: zero }).pipe(
        Effect.map((r) => (r[0] === 1 ? String(r[1]) : undefined)),
      )
    const raw = yield* Effect.tryPromise({
      try: () => client.command("HGET", [keys.depParents, id]),
      catch: (e) => redisError("HGET", e, client.describe),
    })
    const refs = (typeof raw === "string" ? raw.split(",") : []).flatMap((entry) => {
      const bar = entry.indexOf("|")
      return bar < 0 ? [] : [{ queue: entry.slice(0, bar) || keys.queue, id: entry.slice(bar + 1) }]
    })
    const page = yield* readDependencies(client, keys, id, { count: FLOW_LIMITS.children })
    const [parents, children] = yield* Effect.all(
      [
        Effect.forEach(
          refs.slice(0, FLOW_LIMITS.parents),
          (p) => Effect.map(stateIn(p.queue, p.id), (state) => ({ ...p, state: state ?? "not found" })),
          { concurrency: "unbounded" },
        ),
        Effect.forEach(
          page.children,
          (c) =>
            Effect.map(stateIn(c.queue, c.id), (state) => ({
              queue: c.queue,
              id: c.id,
              counted: c.state,
              state: state ?? `${c.state} (not retained)`,
            })),
          { concurrency: "unbounded" },
        ),
      ],
      { concurrency: "unbounded" },
    )
    return {
      parents,
      parentsMore: Math.max(0, refs.length - FLOW_LIMITS.parents),
      children,
      moreChildren: page.cursor !== undefined,
      pending: page.pending,
      open: page.open,
      waiting: page.waiting,
    }
  })
