/**
 * A running job's log: `job.log(line)` adds a line to what the queue keeps of the job (the
 * newest 100 lines, each cut to {@link MAX_LOG_LINE_CHARS} characters; lua/log.lua), fenced by
 * its lease token, shown by `getJob` (`logs`) and the dashboard's job page. A line written
 * after the lease ended is dropped (as a late progress value is).
 */
import * as Effect from "effect/Effect"
import type { Commands, ScriptFailure } from "../../calls/Commands.ts"
import { InvalidOptions } from "../../model/Errors.ts"
import type { LeaseRef } from "../../scripts/LeaseScripts.ts"

/** The longest log line kept, in characters: a longer one is cut and ends with "…". */
export const MAX_LOG_LINE_CHARS = 1024

/** How many lines a job's log keeps (the newest); lua/log.lua's LOGS_KEPT. */
export const LOGS_KEPT = 100

/** Add `line` to the log of the job leased as `lease`: InvalidOptions (field "line") for a line that is not a string. */
export const logLine = (
  commands: Pick<Commands, "log">,
  lease: LeaseRef,
  line: unknown,
): Effect.Effect<void, InvalidOptions | ScriptFailure> =>
  Effect.suspend(() => {
    if (typeof line !== "string") {
      return Effect.fail(new InvalidOptions({ field: "line", value: line, reason: "must be a string (one log line)" }))
    }
    const kept = line.length <= MAX_LOG_LINE_CHARS ? line : `${line.slice(0, MAX_LOG_LINE_CHARS - 1)}…`
    return Effect.asVoid(commands.log(lease, [JSON.stringify(kept)]))
  })
