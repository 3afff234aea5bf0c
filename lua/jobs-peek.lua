--[[
  jobs-peek — one page of the jobs in one state for a person to look at (the dashboard):
  the pages and cursors of job-list (lua/include/job-page.lua), each payload cut inside
  Redis, so a page's cost is bounded by bytes, not only by count (read-only). A payload
  longer than loadMax, or than what is left of budget, is not loaded: only its length comes
  back. With hide = 1 no payload is loaded at all. O(log N + count).

  KEYS[1] active    ZSET  id -> lease deadline
  KEYS[2] dead      ZSET  id -> time of death
  KEYS[3] done      ZSET  id -> completion time
  KEYS[4] cancelled ZSET  id -> time of the cancel
  KEYS[5] data      HASH  id -> payload
  KEYS[6..] ready   READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout   layout version (not checked: a view)
  ARGV[2] state    waiting | delayed | active | completed | cancelled | dead
  ARGV[3] order    asc (waiting: the next to run first; else the lowest score first) | desc
  ARGV[4] cursor   "" for the first page; else the next cursor of the page before (as job-list's)
  ARGV[5] count    the most jobs in the page (1 .. 1000)
  ARGV[6] cut      the most bytes of one payload returned
  ARGV[7] loadMax  the longest payload loaded (a longer one: its length only)
  ARGV[8] budget   the most bytes of payloads this call loads in all
  ARGV[9] hide     1: no payload is loaded (lengths only), else 0

  Returns
    {next_cursor ("" when the state has no more), total in the state, id_1, score_1|"",
     payload_1|false, payloadLength_1, addedAt_1|false, id_2, …}
      payload: its first `cut` bytes; false when missing or not loaded
      addedAt: when the job was added (ms) for an id that carries no time (see get-job)
    {'OUT_OF_RANGE', 'jobs-peek', 'count', value, 1000}  a count outside 1 .. 1000
]]
local PEEK_CUT = tonumber(ARGV[6])
local PEEK_LOAD_MAX = tonumber(ARGV[7])
local PEEK_BUDGET = tonumber(ARGV[8])
--!include peek
--!include zset-page
--!include ready
--!include job-page

local count = tonumber(ARGV[5])
if not count or count < 1 or count > 1000 then return {'OUT_OF_RANGE', 'jobs-peek', 'count', ARGV[5], 1000} end
local hide = ARGV[9] == '1'
local out = {'', 0}

-- add one job to the page, its payload peeked (a wait-list entry "id|…|payload" holds its own)
local function put(entry, score)
  local id, inline = entry, false
  local bar = string.find(entry, '|', 1, true)
  if bar then
    id = string.sub(entry, 1, bar - 1)
    inline = string.sub(entry, (string.find(entry, '|', bar + 1, true) or #entry) + 1)
  end
  local payload, len = peek(KEYS[5], id, hide)
  if len == 0 and inline then
    len = #inline
    payload = (not hide) and string.sub(inline, 1, PEEK_CUT)
  end
  out[#out + 1] = id
  out[#out + 1] = score
  out[#out + 1] = payload
  out[#out + 1] = len
  out[#out + 1] = ready_added_at(id)
  return true
end

job_page(ARGV[2], ARGV[3] == 'desc', ARGV[4], count, {active = KEYS[1], dead = KEYS[2], completed = KEYS[3], cancelled = KEYS[4]}, put, out)
return out
