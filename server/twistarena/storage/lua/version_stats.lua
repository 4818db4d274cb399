-- Count one match's report on a hosted version, once per report id.
-- KEYS: counts, cpumax, seen, failures. ARGV: version, report id, slowest
-- decision's CPU ms, failures kept, failure JSON ('' for none), then
-- counter, increment pairs. Returns 1 (counted) or 0 (counted already).
local v = ARGV[1]
if redis.call('SADD', KEYS[3], v .. ':' .. ARGV[2]) == 0 then return 0 end
for i = 6, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], v .. ':' .. ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], 'GT', ARGV[3], v)
if ARGV[5] ~= '' then
  redis.call('LPUSH', KEYS[4], ARGV[5])
  redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[4]) - 1)
end
return 1
