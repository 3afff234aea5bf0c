--[[
  extend — heartbeat: push the deadline of many leases to Redis-now + leaseMs, store the
  progress their handlers reported, and refresh the calling worker's registry record.

  A lease is still held when the job is in active and its token (include/active) is the token,
  even if its deadline has passed and no sweep has reclaimed it yet. A lease is never
  extended past its holder entry's `until` (run start + timeoutMs + lease, set by
  reserve for a job with a timeout), so a handler that ignores its timeout is reclaimed.

  KEYS[1] active    ZSET  id -> lease deadline (ms)
  KEYS[2] lease     HASH  id -> fencing token (layout 1, see include/active)
  KEYS[3] meta      HASH  layout version
  KEYS[4] holder    HASH  id -> "<workerId>|<token>|<startedAt>|<until>" (until 0 = no timeout)
  KEYS[5] cancelled ZSET  id -> time cancelled: a lost lease whose job is here was cancelled
  KEYS[6] progress  HASH  id -> latest progress (JSON)
  KEYS[7] workers   HASH  worker id -> its record (JSON)
  KEYS[8] workersAt ZSET  worker id -> time its record goes stale (ms)
  KEYS[9] events    STREAM job events: one `progress` entry {value} per progress stored

  ARGV[1] layout    layout version
  ARGV[2] leaseMs   the new lease, from now on the Redis clock
  ARGV[3] workerId  the calling worker ("" = leave the registry alone)
  ARGV[4] record    the worker's record: a JSON object; stored with ,"lastSeenAt":<Redis now ms> added
  ARGV[5] ttlMs     the record goes stale (a sweep drops it) this long after now
  ARGV[6] selfFenced leases the worker self-fenced since its last stored record, added to
                    meta.selfFenced (best effort: skipped when Redis is out of memory; a
                    call re-sent after a lost reply counts them twice)
  ARGV[7..] id, token, progress  one triple per lease, at most 1000 (progress: JSON text to
                    store for that job, "" = none new)

  Cost: O(1) commands per call (HMGET holder, HMGET lease for layout 1 entries, one ZADD, at most one HSET of
  progress, two registry writes; a ZSCORE per lost lease, an XADD per progress stored);
  O(n) work for n leases.

  Returns
    {deadline_1, …}  per job: its new deadline (ms, Redis clock), possibly capped at its
                     timeout limit; 0 the lease is lost; -1 the lease ended because the job
                     was cancelled, or its queue obliterated with force (meta has no
                     layout: add writes it, so a queue that leased a job has it until
                     obliterated); -2 the lease reached its timeout limit (not extended; a
                     sweep reclaims it as a failure with reason "timeout")
    {'LAYOUT_MISMATCH', found}      layout mismatch; nothing written
    {'OUT_OF_RANGE', 'extend', 'leases', n, 1000}  more than 1000 leases (or a partial
                     triple); nothing written
]]
--!include events
--!include limits
--!include active

local META = KEYS[3]
--!include layout-guard
-- the script's own limit, before its first write (see include/limits)
local refused = out_of_range('extend', 'leases', (#ARGV - 6) / 3, 1000)
if refused then return refused end
-- First a write that cannot grow memory (a no-op): with maxmemory reached and noeviction,
-- Redis refuses a script at its first write that may grow memory (ZADD here) unless a
-- write came before it. Heartbeats must go on then, or every long job would self-fence.
redis.call('HDEL', KEYS[3], '')

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = now + tonumber(ARGV[2])

if ARGV[3] ~= '' then
  local record = string.sub(ARGV[4], 1, -2) .. ',"lastSeenAt":' .. string.format('%d', now) .. '}'
  redis.call('HSET', KEYS[7], ARGV[3], record)
  redis.call('ZADD', KEYS[8], now + tonumber(ARGV[5]), ARGV[3])
end
local selfFenced = tonumber(ARGV[6]) or 0
if selfFenced > 0 then redis.pcall('HINCRBY', KEYS[3], 'selfFenced', selfFenced) end

local ids = {}
for i = 7, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
local out = {}
if #ids == 0 then return out end
local tokens, holders = active_read({lease = KEYS[2], holder = KEYS[4]}, ids)
local zargs, pargs, obliterated = {}, {}, nil
for i, id in ipairs(ids) do
  local base = 4 + i * 3
  if tokens[i] and tokens[i] == ARGV[base + 1] then
    local d = deadline
    local untilMs = 0
    if holders[i] then
      local _, _, u = string.find(holders[i], '|(%d+)$')
      untilMs = tonumber(u) or 0
    end
    if untilMs > 0 and untilMs < d then d = untilMs end
    if d <= now then
      out[i] = -2
    else
      zargs[#zargs + 1] = d
      zargs[#zargs + 1] = id
      out[i] = d
    end
    if ARGV[base + 2] ~= '' then
      pargs[#pargs + 1] = id
      pargs[#pargs + 1] = ARGV[base + 2]
    end
  elseif redis.call('ZSCORE', KEYS[5], id) then
    out[i] = -1
  else
    -- obliterated (with force, its leases revoked): meta has no layout, told as a cancel
    if obliterated == nil then obliterated = redis.call('HEXISTS', KEYS[3], 'layout') == 0 end
    out[i] = obliterated and -1 or 0
  end
end
active_extend({active = KEYS[1]}, zargs)
if #pargs > 0 then
  redis.call('HSET', KEYS[6], unpack(pargs))
  local maxlen = events_maxlen(KEYS[3])
  for i = 1, #pargs, 2 do emit_event(KEYS[9], maxlen, 'progress', pargs[i], 'value', pargs[i + 1]) end
end
return out
