/**
 * A Lua script that keeps Redis busy for `ARGV[1]` ms, reading the clock in a loop: while
 * it runs (past `busy-reply-threshold`) every other client gets BUSY. For tests of what a
 * call does under BUSY (test/reliability/acks.test.ts, test/flows/flows-faults.test.ts).
 */
export const BUSY_SCRIPT = `
local t0 = redis.call('TIME')
local n = 0
while true do
  n = n + 1
  local t = redis.call('TIME')
  if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > tonumber(ARGV[1]) * 1000 then return n end
end`
