/**
 * What the client needs to run a Lua script: its name, its expanded source and that
 * source's SHA1 (EVALSHA, with a reload on NOSCRIPT). The engine's typed descriptors
 * (`engine/scripts/Script.ts`) extend it with the script's keys, ARGV and reply decoder.
 */

/** A script read from `lua/<name>.lua`: what a Redis client needs to run it. */
export interface Script {
  /** The file name without `.lua` (`reserve`, `dead-list`); also names the script in errors. */
  readonly name: string
  /** The expanded source (includes pulled in). */
  readonly source: string
  readonly sha: string
}
