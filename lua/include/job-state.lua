--!include ready
--!include deps
--!include active
--!include dead
-- job-state: where one job is, the lookup get-job and job-peek share (a delayed job is
-- found through ready.lua).
--
-- job_state(k, id): the state of the job `id`, which has data (waiting when it is in no
--   set), its score there (false when waiting), and for an active job its lease's token
--   and holder entry (else false, false). At most six O(log N) ZSCOREs (waiting-children:
--   lua/include/deps.lua).
--   k  table of key names: active, dead, done, cancelled, lease, holder
local function job_state(k, id)
  local score = active_deadline(k, id)
  if score then
    local tokens, holders = active_read(k, {id})
    return 'active', score, tokens[1], holders[1]
  end
  score = delayed_due_at(id)
  if score then return 'delayed', score, false, false end
  score = dead_at(k, id)
  if score then return 'dead', score, false, false end
  for _, s in ipairs({{k.done, 'completed'}, {k.cancelled, 'cancelled'}}) do
    score = redis.call('ZSCORE', s[1], id)
    if score then return s[2], score, false, false end
  end
  score = deps_waiting_since(id)
  if score then return 'waiting-children', score, false, false end
  return 'waiting', false, false, false
end
