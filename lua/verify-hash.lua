--[[
  verify-hash — check one HSCAN page of a per-job hash (read-only), for an incremental
  verify. Bounded: about ARGV[4] fields (HSCAN's COUNT), each checked with at most four
  ZSCOREs or one HEXISTS. HSCAN also returns the values (payloads, errors, results):
  they are dropped here and only held during this call.

  Checks per field (a job id):
    data:                  the job is in active, delayed, dead, done or cancelled; if it is in
                           none, the id is returned as a candidate: the caller checks
                           it against the ids it saw in wait (orphan-data)
    lease:                 the job is active (orphan-lease)
    holder:                the job is active, or retained completed (its run's) (orphan-holder)
    max, fails, lost, err, progress, timeout, priority, backoff, errors, logs: the job has a
                           payload in data (orphan-field)
    result:                the job is retained in done (orphan-result)

  KEYS[1] active   ZSET
  KEYS[2] dead     ZSET
  KEYS[3] done     ZSET
  KEYS[4] data     HASH  id -> payload
  KEYS[5] lease    HASH  id -> fencing token
  KEYS[6] max      HASH  id -> maxAttempts
  KEYS[7] fails    HASH  id -> handler failures
  KEYS[8] lost     HASH  id -> lost leases
  KEYS[9]  err     HASH  id -> last error
  KEYS[10] result  HASH  id -> result
  KEYS[11] meta    HASH  (field layout)
  KEYS[12] holder  HASH  id -> holder of the lease
  KEYS[13] progress HASH id -> latest progress
  KEYS[14] timeout HASH  id -> timeoutMs
  KEYS[15] cancelled ZSET id -> time of the cancel (a retained cancelled job keeps its data)
  KEYS[16] backoff HASH  id -> the job's own backoff
  KEYS[17] errors  HASH  id -> the errors of its failed attempts
  KEYS[18] logs    HASH  id -> its log lines
  KEYS[19..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] hash    which hash: data, lease, max, fails, lost, err, result, holder, progress, timeout,
                  backoff, errors, logs
                  or priority (a ready key: read through ready.lua)
  ARGV[3] cursor  HSCAN cursor ('0' to start)
  ARGV[4] count   HSCAN COUNT

  Returns
    {cursor, candidates, line_1, …}
      cursor: the next HSCAN cursor, '0' when the hash is done
      candidates: for data, the ids in no sorted set (in wait, or orphans); else {}
      line: "<kind> <id> <detail>"
    {'LAYOUT_MISMATCH', found}  layout mismatch
    an error reply when ARGV[2] names no hash verify checks
]]
local META = KEYS[11]
--!include layout-guard
--!include ready
--!include deps
--!include active
--!include dead
local A, DEAD = {active = KEYS[1], lease = KEYS[5], holder = KEYS[12]}, {dead = KEYS[2]}
local function is_active(id) return active_deadline(A, id) end
local function is_dead(id) return dead_at(DEAD, id) end

local hashes = {
  data = KEYS[4], max = KEYS[6], fails = KEYS[7], lost = KEYS[8], err = KEYS[9], result = KEYS[10],
  progress = KEYS[13], timeout = KEYS[14], backoff = KEYS[16],
  errors = KEYS[17], logs = KEYS[18],
}
local name = ARGV[2]
local scan
if name == 'priority' then
  scan = ready_priority_scan(ARGV[3], tonumber(ARGV[4]))
elseif name == 'lease' or name == 'holder' then
  scan = active_scan_field(A, name, ARGV[3], tonumber(ARGV[4]))
elseif not hashes[name] then
  return redis.error_reply('verify-hash: no hash named ' .. tostring(name))
else
  scan = redis.call('HSCAN', hashes[name], ARGV[3], 'COUNT', tonumber(ARGV[4]))
end
-- membership of the states a job with data may be in (cancelled is checked after them)
local function in_set(key) return function(id) return redis.call('ZSCORE', key, id) end end
-- (and waiting for children: lua/include/deps.lua)
local states = {is_active, delayed_due_at, is_dead, in_set(KEYS[3]), deps_waiting_since}
local fields = scan[2]
local candidates, lines = {}, {}
for i = 1, #fields, 2 do
  local id = fields[i]
  fields[i + 1] = nil
  if name == 'data' then
    local found = false
    for _, has in ipairs(states) do
      if has(id) then
        found = true
        break
      end
    end
    if not found and not redis.call('ZSCORE', KEYS[15], id) then candidates[#candidates + 1] = id end
  elseif name == 'lease' or name == 'holder' then
    if not active_deadline(A, id) and not (name == 'holder' and redis.call('ZSCORE', KEYS[3], id)) then
      lines[#lines + 1] = 'orphan-' .. name .. ' ' .. id .. ' has a lease ' .. (name == 'lease' and 'token' or 'holder') .. ' but is not active'
    end
  elseif name == 'result' then
    if not redis.call('ZSCORE', KEYS[3], id) then
      lines[#lines + 1] = 'orphan-result ' .. id .. ' has a result but is not retained as done'
    end
  elseif redis.call('HEXISTS', KEYS[4], id) == 0 then
    lines[#lines + 1] = 'orphan-field ' .. id .. ' has ' .. name .. ' but no payload'
  end
end
local out = {scan[1], candidates}
for _, l in ipairs(lines) do out[#out + 1] = l end
return out
