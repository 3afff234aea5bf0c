/**
 * What rides with a reserve call: the completes of finished jobs, carried by the next
 * reserve (one script call completes them and leases their successors; Riders.ts), as
 * the scheduling state (Scheduling.ts) holds them.
 */

/** A finished job to acknowledge. */
export interface Finished {
  readonly id: string
  readonly token: number
  readonly result?: string
}

/**
 * What a rider (a complete carried by a reserve call) learns: the script's answer, or
 * that it must be sent on its own (the reserve failed — `uncertain` when it may have
 * run — or never carried it).
 */
export type RideAnswer = boolean | { readonly resend: true; readonly uncertain: boolean }

/** A complete riding with a reserve call: answered once, listened to by its job's fiber. */
export interface Rider {
  readonly item: Finished
  readonly answer: (a: RideAnswer) => void
  /** Call `f` with the answer (at once if it came already); returns how to stop listening. */
  readonly listen: (f: (a: RideAnswer) => void) => () => void
}
