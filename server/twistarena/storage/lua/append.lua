-- Append entries to a match's action log, fenced by its lease.
-- KEYS: log, lease. ARGV: token, expected log length, entry...
-- Returns {1, new length}, {-1, current token or 'lease expired'} (fenced)
-- or {-2, actual length} (the log is not as long as expected).
local o = redis.call('HMGET', KEYS[2], 'token', 'until')
if o[1] ~= ARGV[1] then return {-1, o[1] or ''} end
local t = redis.call('TIME')
if tonumber(o[2]) <= tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then
  return {-1, 'lease expired'}
end
local n = redis.call('LLEN', KEYS[1])
if n ~= tonumber(ARGV[2]) then return {-2, n} end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
return {1, n + #ARGV - 2}
