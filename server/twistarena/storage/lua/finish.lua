-- Store the end of a match, only on the log it was computed from, fenced by its lease.
-- KEYS: meta, log, lease. ARGV: token, expected log length, expected last entry
-- ('' for an empty log), retention in ms (0: kept for good), field, value...
-- Returns 1 (stored), 0 (fenced: the token changed or the lease expired), or
-- {-2, actual length} (the stored log is not the one the end was computed from:
-- shorter, longer, or with another last entry).
--#include lease_held
if not lease_held(KEYS[3], ARGV[1]) then return 0 end
local n = redis.call('LLEN', KEYS[2])
if n ~= tonumber(ARGV[2]) then return {-2, n} end
if n > 0 and redis.call('LINDEX', KEYS[2], -1) ~= ARGV[3] then return {-2, n} end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
local keep = tonumber(ARGV[4])
if keep > 0 then
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], keep) end
end
return 1
