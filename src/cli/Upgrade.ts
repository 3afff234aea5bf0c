/**
 * `leaseq upgrade --queue <name>`: move one queue (every partition of a partitioned one) to
 * this leaseq's key layout while producers and workers of the old and the new version run
 * (src/engine/admin/LayoutUpgrade.ts). Resumable: run it again after a crash. Exit 1 when workers
 * of the old layout were still live at `--wait-ms` (the move stays where it was).
 */
import * as Effect from "effect/Effect"
import type { UpgradeResult } from "../engine/queue/OpsApi.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { JobFlags } from "./Jobs.ts"
import { ExitCode, type Io, toFailure, writeJson, writeText } from "./Output.ts"

/** Flags of `leaseq upgrade`. */
export interface UpgradeFlags extends JobFlags {
  readonly force?: boolean
  readonly pageSize?: number
  readonly waitMs?: number
}

/** The text report of an upgrade. */
const say = (r: UpgradeResult): string =>
  r.done
    ? `queue ${r.queue}: key layout ${r.layout} (${r.steps} calls, ${r.moved} entries moved, longest call ${r.longestCallMs} ms)\n`
    : `queue ${r.queue}: still key layout ${r.layout}: workers of that layout are live (${r.waitingFor.join(", ")}); stop them, or add --force, then run upgrade again\n`

/** Run `leaseq upgrade`. */
export const runUpgrade = (io: Io, url: string, o: UpgradeFlags) =>
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
