--[[
  set-retention — store the queue's retention policy (queue.setRetention): how many finished
  jobs of each kind are kept, and for how long. The scripts that finish a job read it from
  meta (complete and reserve's riders: keep; cancel: keepCancelled; fail to dead: keepDead)
  and the sweep trims by it (every kind by age, dead jobs by count too). Writing the same policy again changes nothing.

  KEYS[1] meta  HASH  layout version, keep, keepMs, keepCancelled, keepCancelledMs, keepDead,
                      keepDeadMs (an unset field: its default, see src/engine/queue/Retention.ts)

  ARGV[1] layout           layout version
  ARGV[2] keep             completed jobs kept (count)
  ARGV[3] keepMs           completed jobs kept for (ms)
  ARGV[4] keepCancelled    cancelled jobs kept (count)
  ARGV[5] keepCancelledMs  cancelled jobs kept for (ms)
  ARGV[6] keepDead         dead jobs kept (count), "" for no bound
  ARGV[7] keepDeadMs       dead jobs kept for (ms), "" for no bound

  Returns
    {1}  stored
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
local names = {'keep', 'keepMs', 'keepCancelled', 'keepCancelledMs', 'keepDead', 'keepDeadMs'}
-- a queue's layout once written changes only through upgrade (lua/upgrade.lua)
local set = {'layout', layout or ARGV[1]}
for i, name in ipairs(names) do
  local v = ARGV[i + 1]
  if v == '' then
    redis.call('HDEL', KEYS[1], name)
  else
    set[#set + 1] = name
    set[#set + 1] = v
  end
end
redis.call('HSET', KEYS[1], unpack(set))
return {1}
