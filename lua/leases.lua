--[[
  leases — the first `limit` live leases of a queue by deadline, for the dashboard
  (read-only, O(log N + limit) for N active jobs: never a scan of the in-flight set).

  KEYS[1] active  ZSET  id -> lease deadline (ms, Redis clock)
  KEYS[2] lease   HASH  id -> fencing token of the current lease (layout 1, see include/active)
  KEYS[3] fails   HASH  id -> handler failures so far
  KEYS[4] lost    HASH  id -> lost leases so far
  KEYS[5] max     HASH  id -> maxAttempts (no field: 3, the default)
  KEYS[6] holder  HASH  id -> "<workerId>|<token>|<startedAt>|<until>" (include/active)

  ARGV[1] layout   layout version (not enforced: a read-only view)
  ARGV[2] limit    the most leases returned (1 to 1000)

  Returns
    {nowMs, total, expired, id, deadline, token, failures, lostLeases, maxAttempts, …}
      nowMs: Redis' clock, so a viewer counts deadlines down on the server's time
      total: every active lease; expired: those past their deadline, not yet swept
      then 6 values per lease, soonest deadline first (token, failures and lostLeases
      false when the hash has no field; maxAttempts then 3, the default)
]]
--!include active
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[2])
local A = {active = KEYS[1], lease = KEYS[2], holder = KEYS[6]}
local rows = active_page(A, limit)
local out = {now, active_count(A), active_expired_count(A, now)}
if #rows == 0 then return out end
local ids = {}
for i = 1, #rows, 2 do ids[#ids + 1] = rows[i] end
local tokens = active_tokens(A, ids)
local fails = redis.call('HMGET', KEYS[3], unpack(ids))
local lost = redis.call('HMGET', KEYS[4], unpack(ids))
local max = redis.call('HMGET', KEYS[5], unpack(ids))
for i, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = rows[2 * i]
  out[#out + 1] = tokens[i]
  out[#out + 1] = fails[i]
  out[#out + 1] = lost[i]
  out[#out + 1] = max[i] or '3'
end
return out
