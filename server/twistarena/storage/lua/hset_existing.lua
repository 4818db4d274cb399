-- Set fields of a hash that exists (a match's metadata), never creating it: a
-- late write must not bring back a match the store dropped or expired.
-- KEYS: hash. ARGV: field, value, ...
-- Returns 1 if written, 0 if the hash does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
