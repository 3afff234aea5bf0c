--[[
  schedules-peek — the first schedules by next tick for a person to look at (the
  dashboard), each payload cut inside Redis, so a reading's cost is bounded by bytes, not
  only by count (read-only, O(log S + count)). A schedule longer than loadMax, or than
  what is left of budget, is not loaded: only its name, next tick and length come back.
  With hide = 1 the payload is dropped inside Redis (its length still comes back).

  KEYS[1] schedules  HASH  name -> the schedule (JSON, its payload in field "payload")
  KEYS[2] schedAt    ZSET  name -> its next tick (ms, Redis clock)

  ARGV[1] layout   layout version (a read-only view: not checked)
  ARGV[2] count    the most schedules returned (1 to 1000)
  ARGV[3] cut      the most bytes of one payload returned
  ARGV[4] loadMax  the longest schedule loaded (a longer one: its length only)
  ARGV[5] budget   the most bytes of schedules this call loads in all
  ARGV[6] hide     1: no payload is returned (its length only), else 0

  Returns
    {now, total, name_1, next_1, schedule_1|false, payloadLength_1, name_2, …}  soonest first
      now            the Redis time (ms)
      schedule       the schedule (JSON) with its payload cut to `cut` bytes ("" with hide);
                     false when missing or not loaded (then payloadLength is the schedule's length)
]]
local PEEK_LOAD_MAX = tonumber(ARGV[4])
local PEEK_CUT = PEEK_LOAD_MAX
local PEEK_BUDGET = tonumber(ARGV[5])
--!include peek
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local count = tonumber(ARGV[2])
local cut = tonumber(ARGV[3])
local hide = ARGV[6] == '1'
local rows = redis.call('ZRANGE', KEYS[2], 0, count - 1, 'WITHSCORES')
local out = {now, redis.call('ZCARD', KEYS[2])}
for i = 1, #rows, 2 do
  local name = rows[i]
  out[#out + 1] = name
  out[#out + 1] = tonumber(rows[i + 1])
  local text, len = peek(KEYS[1], name, false)
  if text then
    local s = cjson.decode(text)
    local p = type(s.payload) == 'string' and s.payload or ''
    len = #p
    s.payload = hide and '' or string.sub(p, 1, cut)
    text = cjson.encode(s)
  end
  out[#out + 1] = text
  out[#out + 1] = len
end
return out
