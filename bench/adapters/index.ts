import { createBeequeue } from "./beequeue.ts"
import { createBullmq } from "./bullmq.ts"
import { createLeaseq } from "./leaseq.ts"
import type { Adapter, LibName } from "./types.ts"

export type DisposableAdapter = Adapter & { dispose(): Promise<void> }

export const createAdapter = async (name: LibName, url: string): Promise<DisposableAdapter> => {
  switch (name) {
    case "leaseq":
      return createLeaseq(url)
    case "bullmq":
      return createBullmq(url)
    case "beequeue":
      return createBeequeue(url)
  }
}
