/**
 * The worker's outbox loop (flows, docs/flows.md): a completion that left notes for
 * parents in other queues pokes the command set's outbox signal (`Commands.outbox`) with the
 * notes its answer carried, and this loop applies them and drains the outbox at once
 * (admin/Outbox.ts), so a parent becomes ready one round trip after its last child's ack. It waits on the signal without a Redis call: a
 * queue without flows never pokes it. A drain that fails is left to the next poke and to
 * the sweep (the backstop: `leaseq sweep`, the worker's sweep loop).
 */
import * as Effect from "effect/Effect"
import { drainOutbox } from "../admin/Outbox.ts"
import type { Commands } from "../calls/Commands.ts"
import type { WorkerHooks } from "./WorkerHooks.ts"

/** The outbox loop, to be supervised: wait for a poke, drain, again. */
export const outboxLoop = (ctx: {
  readonly commands: Commands
  readonly hooks: Pick<Required<WorkerHooks<unknown>>, "error">
}) =>
  Effect.forever(
    Effect.andThen(
      ctx.commands.outbox.wait,
      // the notes the acks answered are applied first, without reading the outbox for them
      // (and the fan-in peer is learnt from them: calls/FanIn.ts)
      drainOutbox(ctx.commands.client, ctx.commands.keys, 4, ctx.commands.outbox.take, ctx.commands.peer.learn).pipe(
        Effect.catch((e) => Effect.sync(() => ctx.hooks.error?.(e))),
      ),
    ),
  )
