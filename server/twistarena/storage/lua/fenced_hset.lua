-- Write fields of a hash only while the writer's lease is valid.
-- KEYS: hash, lease. ARGV: token, mode ('nx': keep fields already set), field, value...
-- Returns 1 (written), or 0 (fenced: the token changed or the lease expired).
--#include lease_held
if not lease_held(KEYS[2], ARGV[1]) then return 0 end
local cmd = 'HSET'
if ARGV[2] == 'nx' then cmd = 'HSETNX' end
for i = 3, #ARGV, 2 do redis.call(cmd, KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
