/**
 * What a group of commands is built with, shared by the modules that register commands.
 * Types only: registering a command loads nothing of what runs it (each action imports
 * its module when it is chosen).
 */
import type { Command } from "commander"
import type * as Effect from "effect/Effect"
import type { CommonFlags } from "./Flags.ts"
import type { CliFailure, ExitCodeValue, Io } from "./Output.ts"

/** What a command runs. */
export type Run = Effect.Effect<ExitCodeValue, CliFailure>

/** A chosen command, not loaded yet: resolves to what it runs once its module is imported. */
export type Job = () => Promise<Run>

/** What a group of commands is built with (the CLI program, its output, the URL resolver, the job setter). */
export interface CommandGroup {
  readonly program: Command
  readonly io: Io
  /** The job that resolves the URL (a usage failure when bad), then runs `run` against it. */
  readonly url: (flags: CommonFlags, run: (url: string) => Promise<Run>) => Job
  /** A job that only fails with `failure` (a refusal found by the action itself). */
  readonly refuse: (failure: CliFailure) => Job
  readonly setJob: (job: Job) => void
}
