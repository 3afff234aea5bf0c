/** What a group of commands is built with, shared by the modules that register commands. */
import type { Command } from "commander"
import type * as Effect from "effect/Effect"
import type { CommonFlags } from "./Flags.ts"
import type { CliFailure, ExitCodeValue, Io } from "./Output.ts"

/** What a group of commands is built with (the CLI program, its output, the URL resolver, the job setter). */
export interface CommandGroup {
  readonly program: Command
  readonly io: Io
  readonly url: (
    flags: CommonFlags,
    run: (url: string) => Effect.Effect<ExitCodeValue, CliFailure>,
  ) => Effect.Effect<ExitCodeValue, CliFailure>
  readonly setJob: (job: Effect.Effect<ExitCodeValue, CliFailure>) => void
}
