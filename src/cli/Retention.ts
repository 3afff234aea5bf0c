/**
 * `leaseq retention --queue <name>`: show the queue's retention policy (how many finished
 * jobs of each kind are kept, and for how long); with `--set <json>`, store a new one first
 * (`{"completed":{"count":100,"ageMs":600000}}`, as `queue.setRetention` takes it: what is not
 * given takes its default). The policy is checked before connecting: a bad one exits 2 with
 * nothing written. A partitioned queue's every partition gets it.
 */
import * as Effect from "effect/Effect"
import { type Retention, resolveRetention } from "../engine/queue/Retention.ts"
import { queueName, withCommonFlags } from "./Flags.ts"
import { type CommandGroup, type JobFlags, onQueue } from "./Jobs.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, type Io, usage, writeJson, writeText } from "./Output.ts"

/** Flags of `leaseq retention`. */
export interface RetentionFlags extends JobFlags {
  /** The policy to store, as JSON. */
  readonly set?: string | undefined
}

const bound = (b: Partial<{ count: number; ageMs: number }>): string =>
  b.count === undefined && b.ageMs === undefined
    ? "no bound (kept until retried or purged)"
    : [b.count !== undefined ? `at most ${b.count}` : "", b.ageMs !== undefined ? `for ${b.ageMs} ms` : ""]
        .filter((s) => s !== "")
        .join(", ")

/** The text form of a policy. */
export const retentionText = (queue: string, r: Retention): string =>
  `queue ${queue} keeps finished jobs:\n  completed  ${bound(r.completed)}\n  cancelled  ${bound(r.cancelled)}\n  dead       ${bound(r.dead)}\n`

/** The policy of `--set`, checked (JSON, then as setRetention checks it) before anything is sent. */
const parsedPolicy = (text: string): Effect.Effect<Retention, CliFailure> =>
  Effect.try({
    try: () => resolveRetention(JSON.parse(text)),
    catch: (e) => usage(`--set ${text}: ${e instanceof Error ? e.message : String(e)}`),
  })

/** Run `leaseq retention`. */
export const runRetention = (io: Io, url: string, flags: RetentionFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  Effect.gen(function* () {
    const policy = flags.set === undefined ? undefined : yield* parsedPolicy(flags.set)
    const r = yield* onQueue(url, flags, `retention of queue ${flags.queue}`, (control) =>
      policy === undefined ? control.retention : control.setRetention(policy).pipe(Effect.andThen(control.retention)),
    )
    if (flags.json) writeJson(io, { queue: flags.queue, ...(policy ? { set: true } : {}), retention: r })
    else writeText(io, retentionText(flags.queue, r))
    return ExitCode.ok
  })

/** `retention` of one queue. */
export const retentionCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const cmd = withCommonFlags(
    program.command("retention").description("show (or --set) how many finished jobs the queue keeps, and how long"),
  )
    .requiredOption(
      "--queue <name>",
      "the queue (required; a partitioned queue's name covers all its partitions)",
      queueName,
    )
    .option("--set <json>", 'store this policy first, e.g. \'{"completed":{"count":100,"ageMs":600000}}\'')
    .addHelpText(
      "after",
      '\nExamples:\n  leaseq retention --queue emails\n  leaseq retention --queue emails --set \'{"completed":{"count":5000},"dead":{"ageMs":604800000}}\'',
    )
  cmd.action(() => setJob(url(cmd.opts(), (u) => runRetention(io, u, cmd.opts<RetentionFlags>()))))
}
