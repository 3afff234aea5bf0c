/**
 * Flag parsing for the CLI: each parser names the flag and the value it refuses,
 * before anything reaches Redis. Commander calls the `argParser`s; a thrown
 * `InvalidArgumentError` becomes a one-line usage error (exit 2).
 */
import { type Command, InvalidArgumentError, Option } from "commander"
import * as Result from "effect/Result"
import { DEFAULT_PREFIX, queueKeys } from "../engine/model/Keys.ts"
import { checkPrefix } from "../engine/model/QueueName.ts"
import { redactUrl } from "../redis/Redact.ts"
import { DEFAULT_REDIS_URL, redisUrlProblem } from "../redis/Url.ts"
import { usage } from "./Output.ts"

/** The flags every command that talks to Redis takes. */
export interface CommonFlags {
  /** `--url`; when absent, `REDIS_URL`, then `redis://127.0.0.1:6379`. */
  readonly url?: string
  readonly prefix: string
  /** `--json`: one JSON object on stdout instead of text. */
  readonly json?: boolean
}

/** The URL used when neither `--url` nor `REDIS_URL` is given (the library's default). */
export const DEFAULT_URL = DEFAULT_REDIS_URL

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** An argParser for a whole number in [min, max]: digits only (no signs, exponents or fractions). */
export const wholeNumber =
  (flag: string, min: number, max: number) =>
  (value: string): number => {
    const n = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}`)
    if (n < min || n > max) throw new InvalidArgumentError(`${flag} must be from ${min} to ${max}`)
    return n
  }

/**
 * An argParser for a queue name, validated exactly as the library's key builder
 * validates it (so any name a queue can have, and nothing that would break the layout).
 */
export const queueName = (value: string): string => {
  try {
    return queueKeys(value).queue
  } catch (e) {
    throw new InvalidArgumentError(messageOf(e))
  }
}

/** An argParser for a repeatable `--queue`: validates and collects, without duplicates. */
export const queueList = (value: string, previous: ReadonlyArray<string> | undefined): ReadonlyArray<string> => {
  const name = queueName(value)
  const list = previous ?? []
  return list.includes(name) ? list : [...list, name]
}

/** An argParser for `--prefix`. */
export const prefix = (value: string): string => {
  const checked = checkPrefix(value)
  if (Result.isFailure(checked)) throw new InvalidArgumentError(checked.failure.message)
  return checked.success
}

/** Commands that serve until stopped and print no report: `--json` is refused there rather than ignored. */
const SERVERS = new Set(["metrics", "dashboard"])

/**
 * Add `--url`, `--prefix` and `--json` to a command. The URL is validated later by
 * {@link resolveUrl}, never by commander, whose messages would echo a password. On a
 * server (`metrics`, `dashboard`) `--json` is left out of the help and refused (exit 2).
 */
export const withCommonFlags = (command: Command): Command => {
  command
    .option(
      "--url <url>",
      `Redis URL: redis:// or rediss://, with user:password@ for ACLs (default: $REDIS_URL, else ${DEFAULT_URL})`,
    )
    .option("--prefix <prefix>", "key prefix of the queues", prefix, DEFAULT_PREFIX)
  if (!SERVERS.has(command.name()))
    return command.option("--json", "print exactly one JSON object on stdout instead of text")
  return command.addOption(new Option("--json").hideHelp()).hook("preAction", (c) => {
    if (c.opts().json === true) {
      c.error(`${c.name()} prints no JSON (it serves until stopped): leave out --json`, {
        code: "leaseq.json",
        exitCode: 2,
      })
    }
  })
}

/**
 * The Redis URL to use: `--url`, else `REDIS_URL`, else {@link DEFAULT_URL}. Throws a
 * usage failure (exit 2) naming the source and the redacted value when it is not a
 * redis:// or rediss:// URL with a host, or when its password would be split (an
 * unencoded `/`, `?`, `#` or stray `%`: see `redisUrlProblem`).
 */
export const resolveUrl = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = env.REDIS_URL !== undefined && env.REDIS_URL !== ""
  const [source, url] =
    flag !== undefined ? ["--url", flag] : fromEnv ? ["REDIS_URL", env.REDIS_URL as string] : ["default", DEFAULT_URL]
  const refuse = (why: string) => usage(`invalid ${source} ${JSON.stringify(redactUrl(url))}: ${why}`)
  const problem = redisUrlProblem(url)
  if (problem !== undefined && !/^rediss?:\/\//.test(url)) {
    throw refuse(
      "give a redis:// or rediss:// URL with a host (ACL credentials go before the host as user:password and an @)",
    )
  }
  if (problem !== undefined) throw refuse(problem)
  const parsed = new URL(url)
  if (!parsed.hostname) throw refuse("give a redis:// or rediss:// URL with a host")
  if (parsed.port !== "" && !(Number(parsed.port) > 0)) throw refuse("the port must be from 1 to 65535")
  return url
}

/** The default window of the rates `leaseq stats` shows (ms between its two readings). */
export const DEFAULT_RATE_MS = 1_000

/** `--rate-ms` of `leaseq stats`: the ms between the two readings its rates come from. */
export const rateMsOption = (): Option =>
  new Option("--rate-ms <ms>", "read the counters twice this many ms apart for the per-second rates (0: no rates)")
    .argParser(wholeNumber("--rate-ms", 0, 60_000))
    .default(DEFAULT_RATE_MS)

/** The flags of `leaseq stats` besides the common ones: `--queue` (repeatable) and `--rate-ms`. */
export const statsFlags = (command: Command): Command =>
  command
    .option("--queue <name>", "only this queue (repeat for more; default: every queue under the prefix)", queueList)
    .addOption(rateMsOption())
