--[[
  verify — check the queue's invariants (read-only). O(N) in the number of jobs:
  an operator's tool, not for hot paths (it holds Redis for about 1 s per ~500k jobs).

  Invariants: every job id is in exactly one of wait, active, delayed, dead, done;
  every such job has a payload; every payload belongs to a job in some state; a lease
  token exists exactly for the active jobs; per-job fields (max, fails, lost, err,
  result) belong to jobs that exist.

  KEYS[1] wait  KEYS[2] active  KEYS[3] delayed  KEYS[4] dead  KEYS[5] done
  KEYS[6] data  KEYS[7] lease   KEYS[8] max      KEYS[9] fails KEYS[10] lost
  KEYS[11] err  KEYS[12] result KEYS[13] meta

  ARGV[1] layout version
  ARGV[2] the most violations to list (the count is always exact)

  Returns
    {violations, jobs, line_1, line_2, …}  each line "<kind> <id> <detail>"
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local layout = redis.call('HGET', KEYS[13], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end

local maxLines = tonumber(ARGV[2])
local count, lines = 0, {}
local function report(line)
  count = count + 1
  if #lines < maxLines then lines[#lines + 1] = line end
end

local state = {}
local jobs = 0
local function mark(id, name)
  if state[id] then
    report('duplicate ' .. id .. ' in ' .. state[id] .. ' and ' .. name)
  else
    state[id] = name
    jobs = jobs + 1
  end
end
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do mark(id, 'wait') end
for i, name in ipairs({'active', 'delayed', 'dead', 'done'}) do
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1 + i], 0, -1)) do mark(id, name) end
end

local data = {}
for _, id in ipairs(redis.call('HKEYS', KEYS[6])) do
  data[id] = true
  if not state[id] then report('orphan-data ' .. id .. ' has a payload but is in no state') end
end
for id, name in pairs(state) do
  if not data[id] then report('no-data ' .. id .. ' is in ' .. name .. ' without a payload') end
end

local leased = {}
for _, id in ipairs(redis.call('HKEYS', KEYS[7])) do
  leased[id] = true
  if state[id] ~= 'active' then report('orphan-lease ' .. id .. ' has a lease token but is not active') end
end
for id, name in pairs(state) do
  if name == 'active' and not leased[id] then report('no-lease ' .. id .. ' is active without a lease token') end
end

local fields = {[8] = 'max', [9] = 'fails', [10] = 'lost', [11] = 'err'}
for k, name in pairs(fields) do
  for _, id in ipairs(redis.call('HKEYS', KEYS[k])) do
    if not data[id] then report('orphan-field ' .. id .. ' has ' .. name .. ' but no payload') end
  end
end
for _, id in ipairs(redis.call('HKEYS', KEYS[12])) do
  if state[id] ~= 'done' then report('orphan-result ' .. id .. ' has a result but is not retained as done') end
end

local out = {count, jobs}
for _, l in ipairs(lines) do out[#out + 1] = l end
return out
