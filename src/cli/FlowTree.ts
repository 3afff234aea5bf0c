import * as Effect from "effect/Effect"
import { validateJobId } from "../engine/queue/JobControl.ts"
import type { QueueApi } from "../engine/queue/QueueApi.ts"
import type { RedisClient } from "../redis/Client.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import { DEFAULT_FLOW_DEPTH, DEFAULT_FLOW_MAX } from "./JobsFlags.ts"
import {
  type CliFailure,
  ExitCode,
  type ExitCodeValue,
  escapeControl,
  type Io,
  toFailure,
  writeJson,
  writeText,
} from "./Output.ts"

/** Flags of `leaseq flow`. */
export interface FlowFlags extends CommonFlags {
  /** The queue of the job. */
  readonly queue: string
  /** Levels of children shown (default 3). */
  readonly depth?: number | undefined
  /** Nodes printed at most (default 200). */
  readonly max?: number | undefined
}

/** One node of the tree: `more` counts children left out (by `--max` or `--depth`), `open` a parent still open. */
export interface FlowNode {
  readonly queue: string
  readonly id: string
  readonly name?: string | undefined
  /** The job's state, or the child's outcome as its parent counted it when the job is no longer retained. */
  readonly state: string
  readonly children: ReadonlyArray<FlowNode>
  readonly more: number
  /** True when `more` is only a lower bound (further pages not read). */
  readonly moreIsAtLeast: boolean
}

const PAGE = 100

/** Walk the tree from `root` (depth first), reading at most `max` nodes. */
const walk = (client: RedisClient, flags: FlowFlags, rootId: string): Effect.Effect<FlowNode, unknown> =>
  Effect.gen(function* () {
    const apis = new Map<string, QueueApi>()
    const api = (queue: string) =>
      Effect.gen(function* () {
        const known = apis.get(queue)
        if (known) return known
        const { api } = yield* openQueueApi(client, flags.prefix, queue)
        apis.set(queue, api)
        return api
      })
    const depth = flags.depth ?? DEFAULT_FLOW_DEPTH
    let budget = flags.max ?? DEFAULT_FLOW_MAX
    const wanted = (level: number) => level < depth && budget > 0
    /** The children of `id` (in `q`) from `cursor` on, each visited while the bounds allow, the rest counted. */
    const childrenOf = (
      q: QueueApi,
      id: string,
      level: number,
      cursor: string | undefined,
      seen: ReadonlyArray<FlowNode>,
    ): Effect.Effect<Pick<FlowNode, "children" | "more" | "moreIsAtLeast">, unknown> =>
      Effect.gen(function* () {
        const count = wanted(level) ? Math.min(PAGE, budget) : PAGE
        const page = yield* q.dependencies.getDependencies(id, { count, cursor })
        // one child at a time: the budget each visit spends decides whether the next is shown
        const shown = yield* Effect.forEach(page.children, (c) =>
          Effect.suspend(() =>
            wanted(level) ? Effect.map(visit(c.queue, c.id, c.state, level + 1), (n) => [n]) : Effect.succeed([]),
          ),
        )
        const children = [...seen, ...shown.flat()]
        const more = page.children.length - (children.length - seen.length)
        if (page.cursor === undefined || more > 0)
          return { children, more, moreIsAtLeast: more > 0 && page.cursor !== undefined }
        return yield* childrenOf(q, id, level, page.cursor, children)
      })
    const visit = (
      queue: string,
      id: string,
      counted: string | undefined,
      level: number,
    ): Effect.Effect<FlowNode, unknown> =>
      Effect.gen(function* () {
        budget -= 1
        const q = yield* api(queue)
        const info = yield* q.control.getJob(id)
        const state = info ? info.state : counted === undefined ? "not found" : `${counted} (not retained)`
        const below = yield* childrenOf(q, id, level, undefined, [])
        return { queue, id, ...(info?.name === undefined ? {} : { name: info.name }), state, ...below }
      })
    return yield* visit(flags.queue, rootId, undefined, 0)
  })

/** The text form: one line a node, indented by level. */
export const formatFlow = (root: FlowNode): string => {
  const lines: Array<string> = []
  const line = (n: FlowNode, indent: string) => {
    const name = n.name === undefined ? "" : ` ${n.name}`
    lines.push(escapeControl(`${indent}${n.queue} ${n.id}${name} ${n.state}`))
    for (const c of n.children) line(c, `${indent}  `)
    if (n.more > 0) lines.push(`${indent}  … ${n.more}${n.moreIsAtLeast ? "+" : ""} more`)
  }
  line(root, "")
  if (root.children.length === 0 && root.more === 0) lines[0] = `${lines[0]} (no children)`
  return `${lines.join("\n")}\n`
}

/** Run `leaseq flow <id>`. */
export const runFlow = (io: Io, url: string, id: string, flags: FlowFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  Effect.try({ try: () => validateJobId(id), catch: (e) => toFailure(e) }).pipe(
    Effect.flatMap((jobId) =>
      withRedis(url, (client) =>
        walk(client, flags, jobId).pipe(
          Effect.mapError((e) => toFailure(e, `reading flow ${jobId} in queue ${flags.queue}`)),
        ),
      ),
    ),
    Effect.map((root) => {
      if (flags.json) writeJson(io, root)
      else writeText(io, formatFlow(root))
      return ExitCode.ok
    }),
  )
