/**
 * A page of a parent's children (flows, docs/flows.md): the one read of a parent's
 * dependencies, made by the queue's `getDependencies`, a running job's `dependencies()` and the
 * dashboard's flow view alike, so it is a script call here, not a call of the producer's queue/.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import type { DependencyPage } from "../model/Dependencies.ts"
import { InvalidOptions } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { runScript, type ScriptFailure } from "./Commands.ts"
import { Scripts } from "./Scripts.ts"

/** Most children one page reads (default 100). */
export const MAX_DEPENDENCY_PAGE = 1000

/** A child's stored result (JSON text) decoded; a text that is not JSON as it is. */
const decodeResult = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * A page of the children of `parentId` in the queue of `keys`: `count` from 1 to 1000 (default
 * 100), `cursor` the one the previous page answered (a cursor of another parent is refused).
 */
export const readDependencies = (
  client: RedisClient,
  keys: QueueKeys,
  parentId: string,
  options: { readonly cursor?: string | undefined; readonly count?: number | undefined } = {},
): Effect.Effect<DependencyPage, ScriptFailure | InvalidOptions> =>
  Effect.gen(function* () {
    const count = options.count ?? 100
    if (!Number.isInteger(count) || count < 1 || count > MAX_DEPENDENCY_PAGE)
      return yield* Effect.fail(
        new InvalidOptions({
          field: "count",
          value: count,
          reason: `must be a whole number from 1 to ${MAX_DEPENDENCY_PAGE}`,
        }),
      )
    const cursor = options.cursor ?? ""
    // the page is a lex range from the cursor to `<parentId>|\xff`: a cursor before
    // `<parentId>|` would read other parents' children, so only this parent's pass
    if (typeof cursor !== "string" || (cursor !== "" && !cursor.startsWith(`${parentId}|`)))
      return yield* Effect.fail(
        new InvalidOptions({
          field: "cursor",
          value: cursor,
          reason: `must be the cursor a previous page of ${parentId}'s children answered (it starts with "${parentId}|"), or left out to start from the first child`,
        }),
      )
    const page = yield* runScript(client, keys, Scripts.depsPage, {
      parent: parentId,
      after: cursor,
      count,
    })
    return {
      children: page.children.map((c) => {
        const result = c.result === "" || c.result.startsWith("#") ? undefined : c.result
        return {
          queue: c.queue === "" ? keys.queue : c.queue,
          id: c.id,
          policy: c.policy,
          state: c.outcome ?? "pending",
          result,
          resultBytes: c.result.startsWith("#") ? Number(c.result.slice(1)) : undefined,
          value: result === undefined ? undefined : decodeResult(result),
        }
      }),
      cursor: page.cursor === "" ? undefined : page.cursor,
      pending: page.pending,
      open: page.open,
      waiting: page.waiting,
    }
  })
