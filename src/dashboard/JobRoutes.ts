/**
 * The job page's two GET routes besides its view: `full` (a cut payload or result in full,
 * not with hidePayloads) and `find` (where a job id is: the queue in view first, then each
 * queue under the prefix, one getJob per queue).
 */
import type { ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import { queueKeys } from "../engine/model/Keys.ts"
import { validateJobId } from "../engine/queue/JobControl.ts"
import type { Hub } from "./Hub.ts"
import type { Readers } from "./Read.ts"
import { valid } from "./Views.ts"

interface Context {
  readonly readers: Readers
  readonly hub: Hub
  readonly prefix: string
  readonly json: (res: ServerResponse, status: number, body: unknown) => void
}

/** The `full` and `find` routes. */
export const makeJobRoutes = ({ readers, hub, prefix, json }: Context) => {
  const answer = <A>(res: ServerResponse, effect: Effect.Effect<A, unknown>, ok: (a: A) => void) =>
    Effect.runPromise(effect).then(ok, (e: unknown) =>
      json(res, 503, { error: e instanceof Error ? e.message : String(e) }),
    )

  /** The queue names of the latest overview reading (the poller's, or one read now). */
  const known = () =>
    Effect.promise(() => hub.latest("overview")).pipe(
      Effect.map((text) =>
        ((JSON.parse(text) as { queues?: ReadonlyArray<{ queue: string }> }).queues ?? []).map((q) => q.queue),
      ),
    )

  return {
    /** A cut payload or result in full (404 with hidePayloads, or when the job is gone). */
    full: (u: URL, res: ServerResponse) => {
      const [q, id, field] = ["queue", "id", "field"].map((p) => u.searchParams.get(p) ?? "") as [
        string,
        string,
        string,
      ]
      if (
        !valid(() => queueKeys(q, prefix)) ||
        !valid(() => validateJobId(id)) ||
        !["payload", "result"].includes(field)
      )
        return json(res, 400, { error: "give queue=<a queue name>, id=<a job id> and field=payload or field=result" })
      answer(res, readers.fullValue(q, id, field as "payload" | "result"), (text) => {
        if (text === undefined) return json(res, 404, { error: "no such value" })
        if (typeof text === "object")
          return json(res, 413, {
            error: `the ${field} is ${text.tooLong} bytes, too long to show here: leaseq job --queue ${q} ${id} --json prints it`,
          })
        json(res, 200, { text })
      })
    },
    /** Where job `id` is: `{ queue, id, state }`, or 404. */
    find: (u: URL, res: ServerResponse) => {
      const id = u.searchParams.get("id") ?? ""
      const first = u.searchParams.get("queue") ?? ""
      if (!valid(() => validateJobId(id))) return json(res, 400, { error: "give id=<a job id> (1 to 128 characters)" })
      const inView = valid(() => queueKeys(first, prefix)) ? [first] : []
      const queues = known().pipe(Effect.map((names) => [...inView, ...names.filter((n) => n !== first)]))
      answer(
        res,
        Effect.flatMap(queues, (qs) => readers.find(qs, id)),
        (hit) => (hit === undefined ? json(res, 404, { error: `no job ${id} under ${prefix}` }) : json(res, 200, hit)),
      )
    },
  }
}
