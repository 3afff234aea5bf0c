--[[
  dead-peek — a page of dead jobs for a person to look at (the dashboard), each error and
  payload cut inside Redis, so a reading's cost is bounded by bytes, not only by count
  (read-only). A value longer than loadMax, or than what is left of budget, is not loaded:
  only its length comes back. With hide = 1 no payload is loaded at all.

  KEYS[1] dead  ZSET  id -> time of death (ms)
  KEYS[2] err   HASH  id -> last error (JSON)
  KEYS[3] data  HASH  id -> payload
  KEYS[4] fails HASH  id -> failures
  KEYS[5] lost  HASH  id -> lost leases

  ARGV[1] offset   0 = the oldest death
  ARGV[2] count    the most jobs to read
  ARGV[3] cut      the most bytes of one value returned
  ARGV[4] loadMax  the longest value loaded (a longer one: its length only)
  ARGV[5] budget   the most bytes of values this call loads in all
  ARGV[6] hide     1: no payload is loaded (lengths only), else 0

  Returns
    {total, id_1, diedAtMs_1, error_1|false, errorLength_1, payload_1|false, payloadLength_1,
     failures_1, lost_1, id_2, …}
      error, payload: the value's first `cut` bytes; false when missing or not loaded
]]
local PEEK_CUT = tonumber(ARGV[3])
local PEEK_LOAD_MAX = tonumber(ARGV[4])
local PEEK_BUDGET = tonumber(ARGV[5])
--!include peek
local hide = ARGV[6] == '1'
--!include dead
local DEAD = {dead = KEYS[1]}
local page = dead_page(DEAD, tonumber(ARGV[1]), tonumber(ARGV[2]))
local out = {dead_count(DEAD)}
for i = 1, #page, 2 do
  local id = page[i]
  out[#out + 1] = id
  out[#out + 1] = tonumber(page[i + 1])
  local e, elen = peek(KEYS[2], id, false)
  out[#out + 1] = e
  out[#out + 1] = elen
  local p, plen = peek(KEYS[3], id, hide)
  out[#out + 1] = p
  out[#out + 1] = plen
  out[#out + 1] = tonumber(redis.call('HGET', KEYS[4], id)) or 0
  out[#out + 1] = tonumber(redis.call('HGET', KEYS[5], id)) or 0
end
return out
