-- Make a version the agent's active one, if it is stored (in one step, so that a
-- deletion cannot remove it in between).
-- KEYS: the version hash, the agent's active version. ARGV: the version id.
-- Returns 1 (activated) or 0 (no such version).
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
return 1
