--[[
  reserve — promote due delayed jobs, then lease up to `count` jobs from wait.

  Each leased job moves from wait into active with score = Redis-now + leaseMs and
  gets a fencing token from the queue-wide counter meta.token (it only goes up).
  A wait entry "<id>|<max>|<payload>" (a job never reserved before) has its payload and
  maxAttempts moved into the data and max hashes here; an entry "<id>" has them there.

  KEYS[1] wait      LIST  entries ready to run (see add)
  KEYS[2] active    ZSET  id -> lease deadline (ms, Redis clock)
  KEYS[3] delayed   ZSET  id -> due time (ms)
  KEYS[4] marker    ZSET  wake-up marker (member "0")
  KEYS[5] meta      HASH  layout version, counters, token counter
  KEYS[6] data      HASH  id -> payload
  KEYS[7] lease     HASH  id -> fencing token of the current lease
  KEYS[8] fails     HASH  id -> handler failures so far
  KEYS[9] lost      HASH  id -> lost leases so far
  KEYS[10] max      HASH  id -> maxAttempts
  KEYS[11] dead     ZSET  id -> time of death (ms)
  KEYS[12] err      HASH  id -> last error (JSON)

  ARGV[1] layout version
  ARGV[2] count: the most jobs to lease (1 to 1000)
  ARGV[3] leaseMs
  ARGV[4] promoteLimit: the most due delayed jobs to promote in this call (at most 1000)

  Returns
    {nextDueMs, id_1, token_1, deadline_1, attempt_1, maxAttempts_1, payload_1, id_2, …}
      nextDueMs: ms until the next delayed job is due (0 if one is due now), or -1 if none.
      attempt = failures + lost leases + 1 (a release costs nothing).
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
  A job id found in wait without data is moved to dead with reason "missing-data"
  (it is never handed out, never dropped silently).
]]
local layout = redis.call('HGET', KEYS[5], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end

local count = tonumber(ARGV[2])
local leaseMs = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local due = redis.call('ZRANGE', KEYS[3], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[4]))
if #due > 0 then
  redis.call('LPUSH', KEYS[1], unpack(due))
  redis.call('ZREM', KEYS[3], unpack(due))
end

local out = {-1}
local entries = redis.call('RPOP', KEYS[1], count)
if entries then
  -- entries are "<id>|<max>|<payload>" (never reserved before) or "<id>" (data in the hashes)
  local ids, inline, known = {}, {}, {}
  for i, e in ipairs(entries) do
    local a = string.find(e, '|', 1, true)
    if a then
      local b = string.find(e, '|', a + 1, true)
      ids[i] = string.sub(e, 1, a - 1)
      inline[i] = {string.sub(e, a + 1, b - 1), string.sub(e, b + 1)}
    else
      ids[i] = e
      known[#known + 1] = e
    end
  end
  local stored = {}
  if #known > 0 then
    local payloads = redis.call('HMGET', KEYS[6], unpack(known))
    local fails = redis.call('HMGET', KEYS[8], unpack(known))
    local lost = redis.call('HMGET', KEYS[9], unpack(known))
    local maxes = redis.call('HMGET', KEYS[10], unpack(known))
    for i, id in ipairs(known) do
      stored[id] = {payloads[i], (tonumber(fails[i]) or 0) + (tonumber(lost[i]) or 0) + 1, tonumber(maxes[i]) or 1}
    end
  end
  local deadline = now + leaseMs
  local n = 0
  for i, id in ipairs(ids) do
    if inline[i] or stored[id][1] then n = n + 1 end
  end
  local token = 0
  if n > 0 then token = redis.call('HINCRBY', KEYS[5], 'token', n) - n end
  local zargs, hargs, dargs, margs = {}, {}, {}, {}
  for i, id in ipairs(ids) do
    local payload, attempt, max
    if inline[i] then
      max, payload, attempt = tonumber(inline[i][1]), inline[i][2], 1
      dargs[#dargs + 1] = id
      dargs[#dargs + 1] = payload
      margs[#margs + 1] = id
      margs[#margs + 1] = inline[i][1]
    else
      payload, attempt, max = stored[id][1], stored[id][2], stored[id][3]
    end
    if payload then
      token = token + 1
      zargs[#zargs + 1] = deadline
      zargs[#zargs + 1] = id
      hargs[#hargs + 1] = id
      hargs[#hargs + 1] = token
      out[#out + 1] = id
      out[#out + 1] = token
      out[#out + 1] = deadline
      out[#out + 1] = attempt
      out[#out + 1] = max
      out[#out + 1] = payload
    else
      redis.call('ZADD', KEYS[11], now, id)
      redis.call('HSET', KEYS[12], id, '{"reason":"missing-data","message":"job id was waiting but its payload was missing"}')
      redis.call('HINCRBY', KEYS[5], 'dead', 1)
    end
  end
  if #dargs > 0 then
    redis.call('HSET', KEYS[6], unpack(dargs))
    redis.call('HSET', KEYS[10], unpack(margs))
  end
  if n > 0 then
    redis.call('ZADD', KEYS[2], unpack(zargs))
    redis.call('HSET', KEYS[7], unpack(hargs))
  end
end

if redis.call('LLEN', KEYS[1]) > 0 then redis.call('ZADD', KEYS[4], 0, '0') end
local nextDue = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if nextDue[2] then
  local d = tonumber(nextDue[2]) - now
  if d < 0 then d = 0 end
  out[1] = d
end
return out
