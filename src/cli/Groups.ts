import * as Effect from "effect/Effect"
import type { GroupLimits, GroupPage } from "../engine/queue/Groups.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import { cliCursor } from "./JobsFlags.ts"
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

/** Flags of `leaseq groups`. */
export interface GroupsFlags extends CommonFlags {
  readonly queue: string
  readonly cursor?: string
  readonly count?: number
}

/** Limits in one word: `concurrency=2,max=10/1000ms`, or `-` for none. */
const limitsText = (l: GroupLimits | undefined): string => {
  if (!l) return "-"
  const parts = []
  if (l.concurrency !== undefined) parts.push(`concurrency=${l.concurrency}`)
  if (l.max !== undefined) parts.push(`max=${l.max}/${l.perMs}ms`)
  return parts.join(",")
}

/** The text form of a page. */
const pageText = (queue: string, page: GroupPage): string => {
  const rows = page.groups.map(
    (g) =>
      `${escapeControl(g.group)}  waiting ${g.waiting}  active ${g.active}${g.paused ? "  paused" : ""}  limits ${limitsText(g.limits)}`,
  )
  const head = `queue ${queue}: ${page.groups.length} group(s); default limits ${limitsText(page.defaults)}`
  const next = page.cursor === undefined ? "" : `\nmore: --cursor ${cliCursor(page.cursor)}`
  return `${[head, ...rows].join("\n")}${next}\n`
}

/** Run `leaseq groups`. */
export const runGroups = (io: Io, url: string, flags: GroupsFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  withRedis(url, (client) =>
    openQueueApi(client, flags.prefix, flags.queue).pipe(
      Effect.flatMap(({ api }) =>
        api.groupControl.groups({
          ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }),
          ...(flags.count === undefined ? {} : { count: flags.count }),
        }),
      ),
      Effect.mapError((e) => toFailure(e, `groups of queue ${flags.queue}`)),
    ),
  ).pipe(
    Effect.map((page) => {
      if (flags.json)
        writeJson(io, {
          queue: flags.queue,
          ...page,
          ...(page.cursor === undefined ? {} : { cursor: cliCursor(page.cursor) }),
        })
      else writeText(io, pageText(flags.queue, page))
      return ExitCode.ok
    }),
  )
