--[[
  extend — heartbeat: push the deadline of many leases to Redis-now + leaseMs.

  A lease is still held when the job is in active and lease[id] equals the token,
  even if its deadline has passed and no sweep has reclaimed it yet.

  KEYS[1] active  ZSET  id -> lease deadline (ms)
  KEYS[2] lease   HASH  id -> fencing token
  KEYS[3] meta    HASH  layout version

  ARGV[1] layout   layout version
  ARGV[2] leaseMs  the new lease, from now on the Redis clock
  ARGV[3..] id, token  one pair per lease

  Returns
    {deadline_1, …}  per job: its new deadline (ms, Redis clock), or 0 when the lease is lost
    {'LAYOUT_MISMATCH', found}      layout mismatch; nothing written
]]
local META = KEYS[3]
--!include layout-guard
-- First a write that cannot grow memory (a no-op): with maxmemory reached and noeviction,
-- Redis refuses a script at its first write that may grow memory (ZADD here) unless a
-- write came before it. Heartbeats must go on then, or every long job would self-fence.
redis.call('HDEL', KEYS[3], '')

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = now + tonumber(ARGV[2])

local ids = {}
for i = 3, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local out = {}
if #ids == 0 then return out end
local tokens = redis.call('HMGET', KEYS[2], unpack(ids))
local zargs = {}
for i, id in ipairs(ids) do
  if tokens[i] and tokens[i] == ARGV[2 + i * 2] then
    zargs[#zargs + 1] = deadline
    zargs[#zargs + 1] = id
    out[i] = deadline
  else
    out[i] = 0
  end
end
if #zargs > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(zargs)) end
return out
