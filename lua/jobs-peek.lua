--[[
  jobs-peek — one page of the jobs in one state for a person to look at (the dashboard):
  the pages and cursors of job-list (lua/include/job-page.lua), each payload cut inside
  Redis, so a page's cost is bounded by bytes, not only by count (read-only). A payload
  longer than loadMax, or than what is left of budget, is not loaded: only its length comes
  back. With hide = 1 no payload is loaded at all. Each row also carries the job's
  attempts, its run's start (active, completed) and its outcome: a completed job's result,
  cut as a payload is (hidden with hide), or another's last error, decoded only within the
  same loadMax and budget and cut to its reason, name, tag and `cut` bytes of message.
  O(log N + count).

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
  KEYS[11] holder   HASH  id -> "<workerId>|<token>|<startedAt>|<until>" (layout 1: no token) of an active job (or of the
                    run of a retained completed one)
  KEYS[12..] ready   READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
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
     payload_1|false, payloadLength_1, addedAt_1|false, failures_1, lostLeases_1,
     maxAttempts_1, startedAt_1|false, outcome_1|false, outcomeLength_1, id_2, …}
     (11 entries a job)
      payload: its first `cut` bytes; false when missing or not loaded
      addedAt: when the job was added (ms) for an id that carries no time (see get-job)
      startedAt: when an active job's run, or a completed job's last run, started (ms)
      outcome: completed: its result's first `cut` bytes (false: none, hidden or not
        loaded); else its last error as JSON {reason, name, tag, message} (false: none or
        not loaded; `{}` for one that is not a JSON object); outcomeLength its stored length
    {'OUT_OF_RANGE', 'jobs-peek', 'count', value, 1000}  a count outside 1 .. 1000
]]
local PEEK_CUT = tonumber(ARGV[6])
local PEEK_LOAD_MAX = tonumber(ARGV[7])
local PEEK_BUDGET = tonumber(ARGV[8])
--!include peek
--!include zset-page
--!include ready
--!include job-page
--!include active
local HOLDER = {holder = KEYS[11]}

local count = tonumber(ARGV[5])
if not count or count < 1 or count > 1000 then return {'OUT_OF_RANGE', 'jobs-peek', 'count', ARGV[5], 1000} end
local hide = ARGV[9] == '1'
local state = ARGV[2]
local out = {'', 0}
-- the hashes that are empty in a queue without failures or maxAttempts other than 3
local anyFails = redis.call('EXISTS', KEYS[6], KEYS[7], KEYS[8], KEYS[9]) > 0

-- a job's last error cut to what a row shows, and its length; loaded only within the
-- limits a payload is (loadMax, and what is left of the call's budget)
local function row_error(id)
  local len = redis.call('HSTRLEN', KEYS[9], id)
  if len == 0 then return false, 0 end
  if len > PEEK_LOAD_MAX or len > PEEK_BUDGET then return false, len end
  PEEK_BUDGET = PEEK_BUDGET - len
  local ok, e = pcall(cjson.decode, redis.call('HGET', KEYS[9], id))
  if not ok or type(e) ~= 'table' then return '{}', len end
  local cut = {message = type(e.message) == 'string' and string.sub(e.message, 1, PEEK_CUT) or ''}
  for _, f in ipairs({'reason', 'name', 'tag'}) do
    if type(e[f]) == 'string' then cut[f] = string.sub(e[f], 1, 128) end
  end
  return cjson.encode(cut), len
end

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
  if anyFails then
    out[#out + 1] = redis.call('HGET', KEYS[6], id) or '0'
    out[#out + 1] = redis.call('HGET', KEYS[7], id) or '0'
    out[#out + 1] = redis.call('HGET', KEYS[8], id) or '3'
  else
    out[#out + 1], out[#out + 2], out[#out + 3] = '0', '0', '3'
  end
  local started = false
  if state == 'active' or state == 'completed' then
    local at = string.match(active_holder(HOLDER, id) or '', '|(%d+)|%d*$')
    started = at and tonumber(at) or false
  end
  out[#out + 1] = started
  local outcome, olen = false, 0
  if state == 'completed' then
    outcome, olen = peek(KEYS[10], id, hide)
  elseif anyFails then
    outcome, olen = row_error(id)
  end
  out[#out + 1] = outcome
  out[#out + 1] = olen
  return true
end

job_page(state, ARGV[3] == 'desc', ARGV[4], count, {active = KEYS[1], dead = KEYS[2], completed = KEYS[3], cancelled = KEYS[4]}, put, out)
return out
