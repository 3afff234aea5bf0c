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
    holder:                the job is active (orphan-holder)
    max, fails, lost, err, progress, timeout: the job has a payload in data (orphan-field)
    result:                the job is retained in done (orphan-result)

  KEYS[1] active   ZSET
  KEYS[2] delayed  ZSET
  KEYS[3] dead     ZSET
  KEYS[4] done     ZSET
  KEYS[5] data     HASH  id -> payload
  KEYS[6] lease    HASH  id -> fencing token
  KEYS[7] max      HASH  id -> maxAttempts
  KEYS[8] fails    HASH  id -> handler failures
  KEYS[9] lost     HASH  id -> lost leases
  KEYS[10] err     HASH  id -> last error
  KEYS[11] result  HASH  id -> result
  KEYS[12] meta    HASH  (field layout)
  KEYS[13] holder  HASH  id -> holder of the lease
  KEYS[14] progress HASH id -> latest progress
  KEYS[15] timeout HASH  id -> timeoutMs
  KEYS[16] cancelled ZSET id -> time of the cancel (a retained cancelled job keeps its data)

  ARGV[1] layout  layout version
  ARGV[2] hash    which hash: data, lease, max, fails, lost, err, result, holder, progress or timeout
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
local META = KEYS[12]
--!include layout-guard

local index = {
  data = 5, lease = 6, max = 7, fails = 8, lost = 9, err = 10, result = 11, holder = 13, progress = 14, timeout = 15,
}
local name = ARGV[2]
if not index[name] then return redis.error_reply('verify-hash: no hash named ' .. tostring(name)) end
local scan = redis.call('HSCAN', KEYS[index[name]], ARGV[3], 'COUNT', tonumber(ARGV[4]))
local fields = scan[2]
local candidates, lines = {}, {}
for i = 1, #fields, 2 do
  local id = fields[i]
  fields[i + 1] = nil
  if name == 'data' then
    local found = false
    for k = 1, 4 do
      if redis.call('ZSCORE', KEYS[k], id) then
        found = true
        break
      end
    end
    if not found and not redis.call('ZSCORE', KEYS[16], id) then candidates[#candidates + 1] = id end
  elseif name == 'lease' or name == 'holder' then
    if not redis.call('ZSCORE', KEYS[1], id) then
      lines[#lines + 1] = 'orphan-' .. name .. ' ' .. id .. ' has a lease ' .. (name == 'lease' and 'token' or 'holder') .. ' but is not active'
    end
  elseif name == 'result' then
    if not redis.call('ZSCORE', KEYS[4], id) then
      lines[#lines + 1] = 'orphan-result ' .. id .. ' has a result but is not retained as done'
    end
  elseif redis.call('HEXISTS', KEYS[5], id) == 0 then
    lines[#lines + 1] = 'orphan-field ' .. id .. ' has ' .. name .. ' but no payload'
  end
end
local out = {scan[1], candidates}
for _, l in ipairs(lines) do out[#out + 1] = l end
return out
