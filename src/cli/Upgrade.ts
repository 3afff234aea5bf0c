/**
 * `leaseq upgrade --queue <name>`: move one queue (every partition of a partitioned one) to
 * this leaseq's key layout while producers and workers of the old and the new version run
 * (src/engine/admin/LayoutUpgrade.ts). Resumable: run it again after a crash. Exit 1 when workers
 * of the old layout were still live at `--wait-ms` (the move stays where it was).
 */
import * as Effect from "effect/Effect"
import type { UpgradeResult } from "../engine/queue/OpsApi.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommandGroup } from "./CommandGroup.ts"
import { queueName, wholeNumber, withCommonFlags } from "./Flags.ts"
import type { JobFlags } from "./Jobs.ts"
import { ExitCode, type Io, toFailure, writeJson, writeText } from "./Output.ts"

/** Flags of `leaseq upgrade`. */
interface UpgradeFlags extends JobFlags {
  readonly force?: boolean
  readonly pageSize?: number
  readonly waitMs?: number
}

/** The text report of an upgrade. */
const say = (r: UpgradeResult): string =>
  r.done
    ? `queue ${r.queue}: key layout ${r.layout} (${r.steps} calls, ${r.moved} entries moved, longest call ${r.longestCallMs} ms)\n`
    : `queue ${r.queue}: still key layout ${r.layout}: workers of that layout are live (${r.waitingFor.join(", ")}); stop them, or add --force, then run upgrade again\n`

const runUpgrade = (io: Io, url: string, o: UpgradeFlags) =>
  withRedis(url, (client) =>
    openQueueApi(client, o.prefix, o.queue).pipe(
      Effect.flatMap(({ api }) => api.ops.upgrade({ force: o.force === true, pageSize: o.pageSize, waitMs: o.waitMs })),
      Effect.mapError((e) => toFailure(e, `upgrading queue ${o.queue}`)),
    ),
  ).pipe(
    Effect.map((r) => {
      if (o.json) writeJson(io, r)
      else writeText(io, say(r))
      return r.done ? ExitCode.ok : ExitCode.redis
    }),
  )

/** `upgrade` of one queue. */
export const upgradeCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const upgrade = withCommonFlags(
    program
      .command("upgrade")
      .description("move a queue to this leaseq's key layout while old and new clients run (resumable)"),
  )
    .requiredOption("--queue <name>", "the queue (a partitioned queue's name covers all its partitions)", queueName)
    .option("--force", "do not wait for workers of the old layout (their held jobs are retried)")
    .option("--page-size <n>", "entries per call (default 500)", wholeNumber("--page-size", 1, 1000))
    .option(
      "--wait-ms <ms>",
      "how long to wait for workers of the old layout to stop (default 60000)",
      wholeNumber("--wait-ms", 0, 3_600_000),
    )
    .addHelpText("after", "\nExamples:\n  leaseq upgrade --queue emails\n  leaseq upgrade --queue emails --json")
  upgrade.action(() => {
    const o = upgrade.opts<UpgradeFlags>()
    setJob(url(o, (u) => runUpgrade(io, u, o)))
  })
}
