--[[
  obliterate — delete the whole queue: every key, jobs in every state with all their
  fields, counters, events, schedules, the worker registry. Refused while jobs are active unless
  forced; forced, their leases go with the queue, so their holders' late complete, fail
  or extend find no lease and are refused (as after a cancel).

  One UNLINK of the queue's fixed set of keys: Redis frees large values in a background
  thread, so the call holds Redis for O(keys), not O(jobs), and frees memory with
  maxmemory reached. A re-sent call finds nothing and answers {1, 0}.

  KEYS[1] active  ZSET  id -> lease deadline
  KEYS[2] meta    HASH  layout version
  KEYS[3..] all   every key of the queue, in the order of KEY_NAMES (src/engine/model/Keys.ts)

  ARGV[1] layout  layout version
  ARGV[2] force   "1": delete even with jobs active, "0": refuse then

  Returns
    {1, active}                 deleted; active: the jobs that were active (their leases revoked)
    {'ACTIVE_JOBS', active}     refused: jobs are active and force is "0"; nothing written
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[2]
--!include layout-guard
--!include active

local active = active_count({active = KEYS[1]})
if active > 0 and ARGV[2] ~= '1' then return {'ACTIVE_JOBS', active} end
redis.call('UNLINK', unpack(KEYS, 3))
return {1, active}
