--!include ready
--!include events
-- debounce_replace(id, data, events, maxlen, payload, delay, now): add's `dedupeReplace`
-- (BullMQ's debounce replace): the job `id` that holds a duplicate's dedupe key, while it is
-- waiting or delayed, takes the duplicate's payload (data HASH: id -> payload), and a
-- delayed one with `delay` > 0 becomes due `delay` ms from `now`; one `updated` event
-- (events STREAM, capped at `maxlen`). True when replaced; false (nothing written) when the
-- job is active, finished or gone: a running job is never changed under its handler.
local function debounce_replace(id, data, events, maxlen, payload, delay, now)
  local due = delayed_due_at(id)
  if not due and not ready_waits(id) then return false end
  redis.call('HSET', data, id, payload)
  if due and delay > 0 then to_delayed({now + delay, id}) end
  emit_event(events, maxlen, 'updated', id)
  return true
end
