--[[
  job-list — one page of the jobs in one state, with their payloads (read-only).

  Waiting jobs are read through lua/include/ready.lua by position (the cursor is how many
  were read); the jobs of a sorted set (delayed, active, completed, cancelled, dead) by
  score with the last one read as the cursor (lua/include/zset-page.lua), the pages of
  lua/include/job-page.lua. O(log N + count)
  per page (waiting: LRANGE walks the list's nodes, ~100 entries each, to the page), and a page stops early, with a cursor to go on, once it has read 4 MiB of
  payloads. Jobs that move while pages are read may be listed twice or not at all.

  KEYS[1] active    ZSET  id -> lease deadline
  KEYS[2] dead      ZSET  id -> time of death
  KEYS[3] done      ZSET  id -> completion time
  KEYS[4] cancelled ZSET  id -> time of the cancel
  KEYS[5] data      HASH  id -> payload
  KEYS[6] fails     HASH  id -> handler failures
  KEYS[7] lost      HASH  id -> lost leases
  KEYS[8] max       HASH  id -> maxAttempts (no field: 3)
  KEYS[9] err       HASH  id -> last error (JSON)
  KEYS[10] result   HASH  id -> result of a retained completed job
  KEYS[11] holder   HASH  id -> "<workerId>|<token>|<startedAt>|<until>" of an active job (include/active;
                    a retained completed job keeps its run's, without the token)
  KEYS[12..] ready   READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version (not checked: a view)
  ARGV[2] state   waiting | delayed | active | completed | cancelled | dead | waiting-children
  ARGV[3] order   asc (waiting: the next to run first; else the lowest score first) | desc
  ARGV[4] cursor  "" for the first page; waiting: the jobs read so far; else "<score>:<id>"
  ARGV[5] count   the most jobs in the page (1 .. 1000)

  Returns
    {next_cursor ("" when the state has no more), total in the state, id_1, score_1|"",
     payload_1|false, addedAt_1|false, failures_1, lostLeases_1, maxAttempts_1, error_1|false,
     result_1|false, resultBytes_1, startedAt_1|false, id_2, …}  (11 entries a job)
      addedAt: when the job was added (ms) for an id that carries no time (see get-job)
      error: the last error of a job not completed, cut to what an operator acts on: JSON
        {reason, name, message (at most 512 bytes), tag} (an error over 16 KiB: its length
        as the message, not decoded)
      result: a completed job's result when at most 1 KiB, else false; resultBytes its length
      startedAt: when an active job's run started, or a completed job's last run (ms, Redis
        clock), from its holder entry
    {'OUT_OF_RANGE', 'job-list', 'count', value, 1000}  a count outside 1 .. 1000
]]
--!include zset-page
--!include ready
--!include job-page
--!include active
local HOLDER = {holder = KEYS[11]}

local count = tonumber(ARGV[5])
if not count or count < 1 or count > 1000 then return {'OUT_OF_RANGE', 'job-list', 'count', ARGV[5], 1000} end
local BUDGET = 4194304
-- the hashes that are empty in a queue without failures, maxAttempts other than 3 or results
local anyFails = redis.call('EXISTS', KEYS[6], KEYS[7], KEYS[8], KEYS[9]) > 0

-- a job's last error as a row shows it (see Returns), and its length
local function row_error(id)
  local len = redis.call('HSTRLEN', KEYS[9], id)
  if len == 0 then return false, 0 end
  if len > 16384 then return cjson.encode({message = '(an error of ' .. len .. ' bytes: see getJob)'}), len end
  local ok, e = pcall(cjson.decode, redis.call('HGET', KEYS[9], id))
  if not ok or type(e) ~= 'table' then return cjson.encode({message = '(an error that is not JSON)'}), len end
  local out = {message = type(e.message) == 'string' and string.sub(e.message, 1, 512) or ''}
  if type(e.reason) == 'string' then out.reason = string.sub(e.reason, 1, 64) end
  if type(e.name) == 'string' then out.name = string.sub(e.name, 1, 128) end
  if type(e.tag) == 'string' then out.tag = string.sub(e.tag, 1, 128) end
  return cjson.encode(out), len
end
local state, rev, cursor = ARGV[2], ARGV[3] == 'desc', ARGV[4]
local out = {'', 0}
local bytes = 0

-- add one job to the page; false once the page holds BUDGET bytes of payloads
local function put(entry, score)
  local id, payload = entry, false
  local bar = string.find(entry, '|', 1, true)
  if bar then
    id = string.sub(entry, 1, bar - 1)
    payload = string.sub(entry, (string.find(entry, '|', bar + 1, true) or #entry) + 1)
  end
  payload = redis.call('HGET', KEYS[5], id) or payload
  out[#out + 1] = id
  out[#out + 1] = score
  out[#out + 1] = payload
  out[#out + 1] = ready_added_at(id)
  local err, result, rlen, started = false, false, 0, false
  if anyFails then
    out[#out + 1] = redis.call('HGET', KEYS[6], id) or '0'
    out[#out + 1] = redis.call('HGET', KEYS[7], id) or '0'
    out[#out + 1] = redis.call('HGET', KEYS[8], id) or '3'
    if state ~= 'completed' then err = row_error(id) end
  else
    out[#out + 1], out[#out + 2], out[#out + 3] = '0', '0', '3'
  end
  if state == 'completed' then
    rlen = redis.call('HSTRLEN', KEYS[10], id)
    if rlen > 0 and rlen <= 1024 then result = redis.call('HGET', KEYS[10], id) end
  end
  if state == 'completed' or state == 'active' then
    local h = active_holder(HOLDER, id)
    local at = h and string.match(h, '|(%d+)|%d+$')
    started = at and tonumber(at) or false
  end
  out[#out + 1] = err
  out[#out + 1] = result
  out[#out + 1] = rlen
  out[#out + 1] = started
  if payload then bytes = bytes + #payload end
  if err then bytes = bytes + #err end
  if result then bytes = bytes + #result end
  return bytes < BUDGET
end

job_page(state, rev, cursor, count, {active = KEYS[1], dead = KEYS[2], completed = KEYS[3], cancelled = KEYS[4]}, put, out)
return out
