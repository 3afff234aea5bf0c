/**
 * The job options that decide where a ready job waits and when it runs among the others:
 * `priority`, `lifo` (docs/flow-control.md, "Priorities") and `group` ("Groups").
 */
import * as Result from "effect/Result"
import { InvalidOptions } from "../model/Errors.ts"
import { checkJobGroup } from "../model/GroupName.ts"
import { type Checked, checkIntegerOr, Limits } from "../model/Validate.ts"

/** The ordering options of a job's options or of the queue's defaults, as given. */
export interface OrderOptions {
  readonly priority?: unknown
  readonly lifo?: unknown
  readonly group?: unknown
}

/** A job's `priority` (0 .. 1 000 000, default 0), `lifo` (a boolean, default false) and `group` ("" for none); else the {@link InvalidOptions}. */
export const checkOrder = (
  field: string,
  given: OrderOptions,
  defaults: OrderOptions,
): Checked<{ readonly priority: number; readonly lifo: boolean; readonly group: string }> => {
  const group = checkJobGroup(`${field}.group`, given.group ?? defaults.group)
  if (Result.isFailure(group)) return Result.fail(group.failure)
  const priority = checkIntegerOr(`${field}.priority`, given.priority ?? defaults.priority, 0, Limits.priority)
  if (Result.isFailure(priority)) return Result.fail(priority.failure)
  const lifo = given.lifo ?? defaults.lifo ?? false
  if (typeof lifo !== "boolean") {
    return Result.fail(new InvalidOptions({ field: `${field}.lifo`, value: lifo, reason: "must be true or false" }))
  }
  return Result.succeed({ priority: priority.success, lifo, group: group.success })
}
