--[[
  worker-leave — a worker that closed takes its record out of the queue's registry.

  KEYS[1] workers   HASH  worker id -> its record (JSON)
  KEYS[2] workersAt ZSET  worker id -> time its record goes stale

  ARGV[1] layout    layout version (not enforced: removing a record is safe under any layout)
  ARGV[2] workerId  the closing worker

  Returns
    {1}  the record was there and is removed
    {0}  there was no record
]]
redis.call('ZREM', KEYS[2], ARGV[2])
return {redis.call('HDEL', KEYS[1], ARGV[2])}
