/**
 * A handler per job name: `byName({ email: (job) => …, resize: (job) => … })` is one handler
 * that runs the one its job's `name` picks, with the job typed by that name's payload (the
 * names → payload types map `M`). A job whose name has no handler fails with
 * {@link UnknownJobName} (retried, then dead, as any failure).
 */
import * as Data from "effect/Data"

/** A job with no handler for its name (or no name) in a `byName` handler. */
export class UnknownJobName extends Data.TaggedError("UnknownJobName")<{
  readonly jobId: string
  readonly jobName: string | undefined
  readonly known: ReadonlyArray<string>
}> {
  override get message(): string {
    const what = this.jobName === undefined ? "has no name" : `is named ${JSON.stringify(this.jobName)}`
    return `job ${this.jobId} ${what}, and byName has a handler only for ${this.known.map((k) => JSON.stringify(k)).join(", ")}: add one, or add the job with one of these names`
  }
}

/** What dispatching needs of a job: its id and name. */
interface Named {
  readonly id: string
  readonly name?: string | undefined
}

/** The handler `handlers` has for `job`'s name, or the {@link UnknownJobName} to fail with. */
export const handlerFor = <H>(handlers: Readonly<Record<string, H>>, job: Named): H | UnknownJobName => {
  const name = job.name
  if (name !== undefined && Object.hasOwn(handlers, name)) return handlers[name]!
  return new UnknownJobName({ jobId: job.id, jobName: name, known: Object.keys(handlers) })
}
