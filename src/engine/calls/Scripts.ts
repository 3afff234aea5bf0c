/**
 * Every Lua script of `lua/`, by operation: each is a typed descriptor (see
 * scripts/Script.ts) that names its KEYS and ARGV and decodes its reply.
 *
 * To add a script: write `lua/<name>.lua` with the header every script has, define its
 * descriptor beside the others of its concept in `scripts/` with {@link defineScript},
 * list it here, and call it through the command layer (Commands.ts).
 * test/scripts/script-descriptors.test.ts fails until the header and the descriptor agree.
 */

import { complete, fail, release } from "../scripts/AckScripts.ts"
import { add } from "../scripts/AddScripts.ts"
import { deadList, deadPurge, deadRetry, open, stats } from "../scripts/AdminScripts.ts"
import {
  depsApply,
  depsChildren,
  depsLink,
  depsOutbox,
  depsPage,
  depsParents,
  depsSeal,
  depsVerify,
} from "../scripts/DepsScripts.ts"
import { flowEpoch, flowShare } from "../scripts/FlowScripts.ts"
import { groupLimits, groupList, groupPause } from "../scripts/GroupScripts.ts"
import {
  cancel,
  changePriority,
  clearDedupe,
  getJob,
  log,
  pause,
  resume,
  setLimits,
  setRetention,
} from "../scripts/JobScripts.ts"
import { extend, reserve } from "../scripts/LeaseScripts.ts"
import {
  clean,
  drain,
  jobList,
  jobRetry,
  obliterate,
  promote,
  reschedule,
  updatePayload,
} from "../scripts/OpsScripts.ts"
import { deadPeek, jobPeek, jobsPeek, schedulesPeek } from "../scripts/PeekScripts.ts"
import { workerLeave, workers } from "../scripts/RegistryScripts.ts"
import { schedule, schedules, tick, unschedule } from "../scripts/ScheduleScripts.ts"
import { sweep } from "../scripts/SweepScripts.ts"
import { upgrade } from "../scripts/UpgradeScripts.ts"
import { verifyGroups, verifyHash, verifyOrphans, verifyRate, verifySet, verifyWait } from "../scripts/VerifyScripts.ts"
import { delayedList, leases } from "../scripts/ViewScripts.ts"

export { defineScript, type Script, type ScriptDef } from "../scripts/Script.ts"

/** Every script, by operation. */
export const Scripts = {
  add,
  depsChildren,
  depsSeal,
  depsLink,
  depsApply,
  depsOutbox,
  depsParents,
  depsPage,
  depsVerify,
  reserve,
  extend,
  complete,
  fail,
  release,
  sweep,
  stats,
  deadList,
  deadRetry,
  deadPurge,
  verifyWait,
  verifySet,
  verifyHash,
  verifyOrphans,
  open,
  getJob,
  cancel,
  changePriority,
  pause,
  resume,
  clearDedupe,
  setLimits,
  setRetention,
  flowEpoch,
  flowShare,
  workers,
  workerLeave,
  leases,
  delayedList,
  deadPeek,
  jobPeek,
  schedulesPeek,
  jobsPeek,
  schedule,
  unschedule,
  schedules,
  tick,
  jobList,
  drain,
  clean,
  obliterate,
  promote,
  reschedule,
  jobRetry,
  updatePayload,
  groupLimits,
  groupPause,
  groupList,
  verifyGroups,
  verifyRate,
  log,
  upgrade,
} as const

/** The name of a script. */
export type ScriptName = keyof typeof Scripts
