-- A version no longer uses an archive: the archive goes with its last user.
-- KEYS: the archive, its users. ARGV: the user (<agent>/<version id>).
-- Returns the bytes freed (0: other versions still use it).
if redis.call('SREM', KEYS[2], ARGV[1]) == 0 then return 0 end
if redis.call('SCARD', KEYS[2]) > 0 then return 0 end
local freed = redis.call('STRLEN', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
return freed
