--[[
  log — add lines to a leased job's log (`job.log(line)`), fenced by its lease token.

  The lines go to the job's field in logs, one JSON string a line (JSON text holds no raw
  newline), oldest first; only the newest 100 are kept, and the client cuts each line to
  1024 characters, so a job's log is bounded. The field is dropped with the job's other
  fields (include/finish drop_jobs) and goes with obliterate. O(size of the job's log).

  KEYS[1] meta   HASH  layout version
  KEYS[2] lease  HASH  id -> fencing token of the current lease (layout 1, read only)
  KEYS[3] logs   HASH  id -> the job's log lines
  KEYS[4] holder HASH  id -> the lease's holder entry, with its token (include/active; read only)

  ARGV[1] layout  layout version
  ARGV[2] id      the job
  ARGV[3] token   its lease's fencing token
  ARGV[4..] line  the lines, each a JSON string

  Returns
    {1, kept}                   stored; kept: the lines the job's log holds now
    {0}                         the lease is not held under this token (lost, ended): nothing written
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include active
local LOGS_KEPT = 100

local id = ARGV[2]
if active_tokens({lease = KEYS[2], holder = KEYS[4]}, {id})[1] ~= ARGV[3] then return {0} end
local text = redis.call('HGET', KEYS[3], id)
local add = table.concat(ARGV, '\n', 4)
text = text and (text .. '\n' .. add) or add
local lines = 1
for _ in string.gmatch(text, '\n') do lines = lines + 1 end
local from = 1
while lines > LOGS_KEPT do
  from = string.find(text, '\n', from, true) + 1
  lines = lines - 1
end
redis.call('HSET', KEYS[3], id, from > 1 and string.sub(text, from) or text)
return {1, lines}
