/**
 * The names that go into a queue's keys: a queue name, a key prefix, and a partition's
 * sub-queue name `<queue>~<index>`; each checked before any key is built from it
 * (Keys.ts builds the keys).
 */
import * as Result from "effect/Result"
import { InvalidOptions, InvalidQueueName } from "./Errors.ts"
import { orThrow } from "./Validate.ts"

const QUEUE_NAME = /^[A-Za-z0-9._-]{1,100}$/

/** Whether `name` is a queue name (1–100 chars of `[A-Za-z0-9._-]`), without building an error. */
export const isQueueName = (name: string): boolean => QUEUE_NAME.test(name)
const PREFIX = /^[A-Za-z0-9._:-]{1,100}$/

/** `name` when it is 1–100 chars of `[A-Za-z0-9._-]`, else {@link InvalidQueueName}. */
export const checkQueueName = (name: unknown): Result.Result<string, InvalidQueueName> => {
  if (typeof name !== "string") {
    return Result.fail(new InvalidQueueName({ name: String(name), reason: `must be a string, got ${typeof name}` }))
  }
  if (!QUEUE_NAME.test(name)) {
    const reason =
      name.length === 0
        ? "must not be empty"
        : name.length > 100
          ? `is ${name.length} characters long; the limit is 100`
          : "may only contain letters, digits, '.', '_' and '-' ('{', '}' and ':' would break the key layout)"
    return Result.fail(new InvalidQueueName({ name, reason }))
  }
  return Result.succeed(name)
}

/** {@link checkQueueName}, throwing its error (synchronous option parsing). */
export const validateQueueName = (name: unknown): string => orThrow(checkQueueName(name))

/** `prefix` when it is 1–100 chars of `[A-Za-z0-9._:-]`, else {@link InvalidOptions}. */
export const checkPrefix = (prefix: unknown): Result.Result<string, InvalidOptions> =>
  typeof prefix === "string" && PREFIX.test(prefix)
    ? Result.succeed(prefix)
    : Result.fail(
        new InvalidOptions({
          field: "prefix",
          value: prefix,
          reason: "must be 1-100 characters of letters, digits, '.', '_', ':' and '-' (no '{' or '}')",
        }),
      )

/** {@link checkPrefix}, throwing its error (synchronous option parsing). */
export const validatePrefix = (prefix: unknown): string => orThrow(checkPrefix(prefix))

/** Most partitions one partitioned queue may have. */
export const MAX_PARTITIONS = 1024

/** Separates a queue name from a partition index: `~` is not allowed in queue names, so no collision. */
export const PARTITION_SEPARATOR = "~"

const PARTITION_NAME = /^([A-Za-z0-9._-]{1,100})~(0|[1-9][0-9]{0,3})$/

/** The sub-queue name of partition `index` of `queue`: `<queue>~<index>`. */
export const partitionName = (queue: string, index: number): string => {
  validateQueueName(queue)
  if (!Number.isInteger(index) || index < 0 || index >= MAX_PARTITIONS) {
    throw new InvalidOptions({
      field: "partition",
      value: index,
      reason: `must be a whole number from 0 to ${MAX_PARTITIONS - 1}`,
    })
  }
  return `${queue}${PARTITION_SEPARATOR}${index}`
}

/** `{ queue, index }` for a sub-queue name `<queue>~<index>`, or undefined for any other name. */
export const parsePartitionName = (name: string): { readonly queue: string; readonly index: number } | undefined => {
  const m = PARTITION_NAME.exec(name)
  if (!m) return undefined
  const index = Number(m[2])
  return index < MAX_PARTITIONS ? { queue: m[1]!, index } : undefined
}
