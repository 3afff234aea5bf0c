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
  KEYS[6..] ready   READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version (not checked: a view)
  ARGV[2] state   waiting | delayed | active | completed | cancelled | dead | waiting-children
  ARGV[3] order   asc (waiting: the next to run first; else the lowest score first) | desc
  ARGV[4] cursor  "" for the first page; waiting: the jobs read so far; else "<score>:<id>"
  ARGV[5] count   the most jobs in the page (1 .. 1000)

  Returns
    {next_cursor ("" when the state has no more), total in the state, id_1, score_1|"",
     payload_1|false, addedAt_1|false, id_2, …}
      addedAt: when the job was added (ms) for an id that carries no time (see get-job)
    {'OUT_OF_RANGE', 'job-list', 'count', value, 1000}  a count outside 1 .. 1000
]]
--!include zset-page
--!include ready
--!include job-page

local count = tonumber(ARGV[5])
if not count or count < 1 or count > 1000 then return {'OUT_OF_RANGE', 'job-list', 'count', ARGV[5], 1000} end
local BUDGET = 4194304
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
  if payload then bytes = bytes + #payload end
  return bytes < BUDGET
end

job_page(state, rev, cursor, count, {active = KEYS[1], dead = KEYS[2], completed = KEYS[3], cancelled = KEYS[4]}, put, out)
return out
