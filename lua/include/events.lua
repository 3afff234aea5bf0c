--!include job-name
-- The job events stream: one entry per state change, written by the script that makes
-- the change (never by a second call that could be lost), so a reader of the stream
-- sees exactly what the queue did.
--
-- events_maxlen(meta): the queue's event retention, read from the meta HASH field
--   `eventsMaxLen` (set by setEventRetention); DEFAULT_EVENTS_MAXLEN (10,000) when unset.
--   0 means the queue records no events.
-- emit_event(eventsKey, maxlen, kind, id, ...): XADD eventsKey MAXLEN ~ maxlen *
--   kind <kind> id <id> followed by the extra field/value pairs in `...`. One entry may
--   carry the same change for several jobs of one call (added, active, completed,
--   lease-lost, dead): `id` is then their ids joined by ",", and a per-job field (active's
--   token, lease-lost's attempt) holds as many values, joined by "," in the same order;
--   job ids never contain ",". Does nothing
--   when maxlen is 0. "~" trims whole stream nodes only, so the stream holds about
--   maxlen entries (up to one node, 100 entries by default, more) at O(1) amortised cost.
--   eventsKey  STREAM  the queue's events key (declared in the caller's KEYS)
local DEFAULT_EVENTS_MAXLEN = 10000
local function events_maxlen(meta)
  local v = redis.call('HGET', meta, 'eventsMaxLen')
  if v then return tonumber(v) end
  return DEFAULT_EVENTS_MAXLEN
end
local function emit_event(eventsKey, maxlen, kind, id, ...)
  if maxlen <= 0 then return end
  redis.call('XADD', eventsKey, 'MAXLEN', '~', maxlen, '*', 'kind', kind, 'id', id, ...)
end
-- emit_many(eventsKey, maxlen, kind, ids, perJobField, perJob, ...): the same change for
--   the jobs `ids` of one call, one entry per EVENTS_PER_ENTRY (100) of them, so an entry
--   stays small and the retention (in entries) bounds memory: `id` their ids joined by
--   ",", `perJobField` (or nil) their `perJob` values joined likewise, then `...`.
local EVENTS_PER_ENTRY = 100
local function emit_many(eventsKey, maxlen, kind, ids, perJobField, perJob, ...)
  if maxlen <= 0 then return end
  for i = 1, #ids, EVENTS_PER_ENTRY do
    local j = math.min(i + EVENTS_PER_ENTRY - 1, #ids)
    if perJobField then
      emit_event(eventsKey, maxlen, kind, table.concat(ids, ',', i, j), perJobField, table.concat(perJob, ',', i, j), ...)
    else
      emit_event(eventsKey, maxlen, kind, table.concat(ids, ',', i, j), ...)
    end
  end
end

-- emit_named(eventsKey, maxlen, kind, ids, names, ...): as emit_many, each entry also carrying
--   field `name:<k>` (k from 0 in the entry) for each of its jobs with a name (names[id]),
--   then the field/value pairs `...`.
local function emit_named(eventsKey, maxlen, kind, ids, names, ...)
  if maxlen <= 0 then return end
  for i = 1, #ids, EVENTS_PER_ENTRY do
    local j = math.min(i + EVENTS_PER_ENTRY - 1, #ids)
    local extra = {}
    for x = i, j do
      if names[ids[x]] then
        extra[#extra + 1] = 'name:' .. (x - i)
        extra[#extra + 1] = names[ids[x]]
      end
    end
    for _, v in ipairs({...}) do extra[#extra + 1] = v end
    emit_event(eventsKey, maxlen, kind, table.concat(ids, ',', i, j), unpack(extra))
  end
end

-- emit_completed(eventsKey, maxlen, ids, results): the `completed` entries of the jobs `ids`
--   (as emit_many), each carrying its jobs' results: field `result:<k>` the k-th job's result
--   (JSON text, k from 0 in the entry) when it has one of at most RESULT_IN_EVENT_BYTES (1,024)
--   bytes and the entry's results stay within RESULTS_PER_ENTRY_BYTES (4,096: the events'
--   retention counts entries, so an entry's size must be bounded); another is only referred
--   to, field `stored:<k>` its size in bytes (getJob reads it while the job is retained). A
--   job without a result (results[i] "") has neither. `names` (optional, id -> name, see
--   complete_jobs): field `name:<k>` for each named job.
local RESULT_IN_EVENT_BYTES = 1024
local RESULTS_PER_ENTRY_BYTES = 4096
local function emit_completed(eventsKey, maxlen, ids, results, names)
  if maxlen <= 0 then return end
  for i = 1, #ids, EVENTS_PER_ENTRY do
    local j = math.min(i + EVENTS_PER_ENTRY - 1, #ids)
    local extra, inline = {}, 0
    for x = i, j do
      local r = results[x]
      if r and r ~= '' then
        if #r <= RESULT_IN_EVENT_BYTES and inline + #r <= RESULTS_PER_ENTRY_BYTES then
          inline = inline + #r
          extra[#extra + 1] = 'result:' .. (x - i)
          extra[#extra + 1] = r
        else
          extra[#extra + 1] = 'stored:' .. (x - i)
          extra[#extra + 1] = tostring(#r)
        end
      end
      if names and names[ids[x]] then
        extra[#extra + 1] = 'name:' .. (x - i)
        extra[#extra + 1] = names[ids[x]]
      end
    end
    emit_event(eventsKey, maxlen, 'completed', table.concat(ids, ',', i, j), unpack(extra))
  end
end
