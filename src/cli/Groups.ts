/**
 * `leaseq groups --queue <name>`: one page of the queue's groups (add's `group` option),
 * in name order, with their waiting and active jobs, paused or not, and limits; `--cursor`
 * goes on from the page before. A partitioned queue is listed partition by partition.
 */
import { type Command, InvalidArgumentError, Option } from "commander"
import * as Effect from "effect/Effect"
import { type GroupLimits, type GroupPage, MAX_GROUP_PAGE } from "../engine/queue/Groups.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommandGroup } from "./CommandGroup.ts"
import { type CommonFlags, queueName, wholeNumber, withCommonFlags } from "./Flags.ts"
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

/**
 * The CLI's cursor: base64url of the engine's (a group name, which may hold any character
 * but NUL). Opaque on purpose: it is one shell word in every shell, pastes back exactly
 * (quoting could not carry a control character without printing it raw), and shows nothing
 * a tenant chose. `--json` gives the same cursor, so either output's cursor goes back in.
 */
export const cliCursor = (cursor: string): string => Buffer.from(cursor, "utf8").toString("base64url")

/** An argParser for `--cursor`: a cursor {@link cliCursor} printed, back to the engine's. */
export const groupCursor = (value: string): string => {
  const cursor = Buffer.from(value, "base64url").toString("utf8")
  if (!/^[A-Za-z0-9_-]+$/.test(value) || cliCursor(cursor) !== value)
    throw new InvalidArgumentError(
      `--cursor ${escapeControl(JSON.stringify(value))} is not a cursor leaseq groups printed: pass the one after "more: --cursor" (or the JSON "cursor"), as it is`,
    )
  return cursor
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

/** `groups` of one queue (registered by Jobs.ts's `jobCommands`). */
export const groupCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const groups = withCommonFlags(
    program
      .command("groups")
      .description("list a queue's groups (add's group option): waiting and active jobs, paused, limits"),
  )
    .requiredOption(
      "--queue <name>",
      "the queue (required; a partitioned queue's name covers all its partitions)",
      queueName,
    )
    .option("--cursor <cursor>", "go on from the page before (the cursor it printed, as it is)", groupCursor)
    .addOption(
      new Option("--count <n>", `groups per page (1 to ${MAX_GROUP_PAGE}, default 100)`).argParser(
        wholeNumber("--count", 1, MAX_GROUP_PAGE),
      ),
    )
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq groups --queue emails\n  leaseq groups --queue emails --count 20 --json",
    )
  groups.action(() => setJob(url(groups.opts(), (u) => runGroups(io, u, groups.opts()))))
}
