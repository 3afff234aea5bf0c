--[[
  deps-link — make jobs that already exist children of a parent in another call
  (`dependsOn`): each job records the parent, atomically with reading its state.

  Run on the children's queue after the parent registered them (deps-children), so a note
  cannot come before its count. A finished job records it too (a retried job tells the
  parent when it ends again); its state is answered and the caller tells the parent
  (deps-apply). A missing job records nothing.

  KEYS[1] meta     HASH  layout version; deps (set once a job has a parent)
  KEYS[2] data     HASH  id -> payload (a job with none is missing)
  KEYS[3] active   ZSET  jobs leased
  KEYS[4] dead     ZSET  dead jobs
  KEYS[5] done     ZSET  retained completed jobs
  KEYS[6] cancelled ZSET cancelled jobs
  KEYS[7] lease    HASH  (for the job-state lookup)
  KEYS[8] holder   HASH  (for the job-state lookup)
  KEYS[9] result   HASH  id -> result of a retained completed job
  KEYS[10..] ready READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (only
                   lua/include/deps.lua), the jobs ready and delayed (only lua/include/ready.lua)

  ARGV[1] layout   layout version
  ARGV[2] parent   "<queue>|<id>" of the parent (queue "" = this one)
  ARGV[3..] id     the jobs, at most 1000

  Returns
    {state_1, result_1, …}  per job, in order: 'linked' (waiting, delayed, active or
                   waiting-children: it tells the parent when it ends), else its state:
                   'completed', 'dead', 'cancelled' (linked too), 'missing' (no such job; a
                   completed job not retained is missing too); result: a completed job's
                   (JSON text, "#<bytes>" past 64 KiB, "" none), for the parent's edge. Once
                   the results answered pass 1 MiB the rest are not linked: fewer pairs than
                   ids, the caller sends the rest again
    {'LAYOUT_MISMATCH', found} layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include job-state
--!include ready
--!include deps
local k = {active = KEYS[3], dead = KEYS[4], done = KEYS[5], cancelled = KEYS[6], lease = KEYS[7], holder = KEYS[8]}
local out, ids, parents, bytes = {}, {}, {}, 0
for i = 3, #ARGV do
  if bytes > 1048576 then break end
  local id = ARGV[i]
  local state, result = 'missing', ''
  if redis.call('HEXISTS', KEYS[2], id) == 1 then
    state = job_state(k, id)
    if state == 'waiting' or state == 'delayed' or state == 'active' or state == 'waiting-children' then
      state = 'linked'
    elseif state == 'completed' then
      local size = redis.call('HSTRLEN', KEYS[9], id)
      if size > 65536 then result = '#' .. size elseif size > 0 then result = redis.call('HGET', KEYS[9], id) end
      bytes = bytes + #result
    end
    ids[#ids + 1], parents[#ids + 1] = id, ARGV[2]
  end
  out[#out + 1], out[#out + 2] = state, result
end
deps_link(META, ids, parents)
return out
