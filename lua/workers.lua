--[[
  workers — the registry of a queue's live workers (read-only).

  Each worker writes its record with its heartbeat (see extend); a record whose worker
  has not heartbeated within its ttl is stale: it is left out here, and a sweep drops it.
  Cost O(W) for W registered workers.

  KEYS[1] workers   HASH  worker id -> its record (JSON)
  KEYS[2] workersAt ZSET  worker id -> time its record goes stale (ms, Redis clock)

  ARGV[1] layout  layout version (not enforced: a read of plain records)

  Returns
    {nowMs, record_1, record_2, …}  the records of live workers (JSON text), oldest id first
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {now}
local live = redis.call('ZRANGE', KEYS[2], '(' .. now, '+inf', 'BYSCORE')
if #live == 0 then return out end
table.sort(live)
local records = redis.call('HMGET', KEYS[1], unpack(live))
for i = 1, #live do
  if records[i] then out[#out + 1] = records[i] end
end
return out
