-- Store a hosted version unless the agent has it already (versions are immutable).
-- KEYS: version hash, the agent's version index. ARGV: version id, created ms,
-- then field, value pairs. Returns 1 (stored) or 0 (it existed: left as it was).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
