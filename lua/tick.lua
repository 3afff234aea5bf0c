--[[
  tick — make the jobs of one due tick of a schedule, once. The caller read the
  schedule's next tick `due` (schedules.lua) and computed, from the Redis time, the ticks
  to make jobs for and the tick after them (`next`). The tick happens only while `due` is
  still the stored next tick: the first of any number of sweepers to run it moves the
  next tick to `next`, and every other (a second sweeper, this very call sent again
  after a lost reply, a tick of a schedule replaced or removed meanwhile) finds another
  score, or none, and writes nothing. Each job's id is `<name>@<tick>`, and a job whose
  id is in data already is not made again: a tick replayed after a failover that lost
  the score but kept the job (within the job's retention) still makes no second job.

  KEYS[1] meta       HASH    layout version, counters (added)
  KEYS[2] schedules  HASH    name -> the schedule (JSON: payload, maxAttempts, timeoutMs, …)
  KEYS[3] schedAt    ZSET    name -> its next tick (ms, Redis clock)
  KEYS[4] data       HASH    id -> payload
  KEYS[5] max        HASH    id -> maxAttempts, when not 3
  KEYS[6] timeout    HASH    id -> timeoutMs, when the schedule gives one
  KEYS[7] events     STREAM  job events: one `added` entry naming the jobs made
  KEYS[8..] ready    READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                     marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] name    the schedule's name
  ARGV[3] due     the next tick the caller read (ms)
  ARGV[4] next    the tick after this one (ms), stored as the next tick
  ARGV[5..] at    the tick times to make a job for (ms, each at or before the Redis time)

  Returns
    {n, id_1, …}  the tick happened: the ids of the n jobs made (a tick whose job exists
                  already makes none)
    {-1, next}    stale: the schedule is gone (next -1), or its next tick is no longer
                  `due` (ticked already, replaced; next is the stored one); nothing written
    {-2, now}     a tick time is later than the Redis time `now`; nothing written
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include events
--!include ready

local META = KEYS[1]
--!include layout-guard
local name = ARGV[2]
local score = redis.call('ZSCORE', KEYS[3], name)
if tonumber(score) ~= tonumber(ARGV[3]) then return {-1, score and tonumber(score) or -1} end
local def = redis.call('HGET', KEYS[2], name)
if not def then return {-1, -1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 5, #ARGV do
  if tonumber(ARGV[i]) > now then return {-2, now} end
end

-- the first write updates a member that exists: the tick is taken
redis.call('ZADD', KEYS[3], 'XX', ARGV[4], name)
local s = cjson.decode(def)
local ids = {}
for i = 5, #ARGV do
  local id = name .. '@' .. ARGV[i]
  if redis.call('HSETNX', KEYS[4], id, s.payload) == 1 then
    if s.maxAttempts ~= 3 then redis.call('HSET', KEYS[5], id, s.maxAttempts) end
    if s.timeoutMs ~= 0 then redis.call('HSET', KEYS[6], id, s.timeoutMs) end
    ids[#ids + 1] = id
  end
end
local out = {#ids}
if #ids > 0 then
  ready_note_added(ids, now)
  ready_push(ids, false)
  ready_wake()
  redis.call('HINCRBY', META, 'added', #ids)
  emit_many(KEYS[7], events_maxlen(META), 'added', ids)
  for _, id in ipairs(ids) do out[#out + 1] = id end
end
return out
