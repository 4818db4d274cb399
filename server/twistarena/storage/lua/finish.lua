-- Store the end of a match, only on the log it was computed from, fenced by its lease.
-- KEYS: meta, log, lease. ARGV: token, expected log length, expected last entry
-- ('' for an empty log), retention in ms (0: kept for good), field, value...
-- Returns 1 (stored), 0 (fenced: the token changed or the lease expired),
-- {-2, actual length} (the stored log is not the one the end was computed from:
-- shorter, longer, or with another last entry), or {-3, stored status} (the
-- match's end is already stored, and it is another end: a stored end is final,
-- so a second writer of the match learns it here and stops). The same end
-- again from the same holder (a retry whose reply was lost) is 1.
--#include lease_held
if redis.call('HEXISTS', KEYS[3], 'ended') == 1 then
  local stored = redis.call('HMGET', KEYS[1], 'status', 'result')
  local status, result
  for i = 5, #ARGV, 2 do
    if ARGV[i] == 'status' then status = ARGV[i + 1] end
    if ARGV[i] == 'result' then result = ARGV[i + 1] end
  end
  local same = redis.call('HGET', KEYS[3], 'token') == ARGV[1]
  if same and stored[1] == status and stored[2] == result then return 1 end
  return {-3, tonumber(stored[1]) or 0}
end
if not lease_held(KEYS[3], ARGV[1]) then return 0 end
local n = redis.call('LLEN', KEYS[2])
if n ~= tonumber(ARGV[2]) then return {-2, n} end
if n > 0 and redis.call('LINDEX', KEYS[2], -1) ~= ARGV[3] then return {-2, n} end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[3], 'ended', 1)
local keep = tonumber(ARGV[4])
if keep > 0 then
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], keep) end
end
return 1
