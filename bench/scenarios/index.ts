/**
 * The scenario registry: every section the bench runs, in this order. To add
 * a scenario, write bench/scenarios/<name>.ts exporting a `Section` and list it
 * here (bench/README.md says how).
 */
import type { Section } from "../harness.ts"
import { addSection } from "./add.ts"
import { batchSection } from "./batch.ts"
import { completeSection } from "./complete.ts"
import { floorSection } from "./floor.ts"
import { flowSection } from "./flow.ts"
import { groupsSection } from "./groups.ts"
import { memorySection } from "./memory.ts"
import { pickupSection } from "./pickup.ts"
import { prioritySection } from "./priority.ts"
import { processSection } from "./process.ts"
import { reclaimSection } from "./reclaim.ts"
import { tracingSection } from "./tracing.ts"

export const SECTIONS: ReadonlyArray<Section> = [
  addSection,
  processSection,
  pickupSection,
  memorySection,
  completeSection,
  reclaimSection,
  floorSection,
  tracingSection,
  batchSection,
  groupsSection,
  prioritySection,
  flowSection,
]
