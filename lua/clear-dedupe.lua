--[[
  clear-dedupe — free a dedupe key now, whatever holds it (a TTL or "until finished"),
  so the next add with it is accepted. The job that held it is not changed.

  KEYS[1] dedupe    ZSET  dedupe key -> expiry
  KEYS[2] dedupeid  HASH  dedupe key -> id of the job holding it
  KEYS[3] meta      HASH  layout version

  ARGV[1] layout  layout version
  ARGV[2] key     the dedupe key

  Returns
    {1, holderId|false}  the key was held (by that job); it is free now
    {0}                  the key was not held (an expired key left for the sweep counts as not held; it is dropped)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[3]
--!include layout-guard

local key = ARGV[2]
local exp = redis.call('ZSCORE', KEYS[1], key)
local holder = redis.call('HGET', KEYS[2], key)
redis.call('ZREM', KEYS[1], key)
redis.call('HDEL', KEYS[2], key)
if not exp then return {0} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if exp ~= 'inf' and tonumber(exp) <= now then return {0} end
return {1, holder}
