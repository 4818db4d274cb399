-- Store a hosted version unless the agent has it already (versions are immutable).
-- KEYS: version hash, the agent's version index. ARGV: version id, created ms,
-- most versions the agent may keep (0: no cap), then field, value pairs.
-- Returns 1 (stored), 0 (it existed: left as it was) or -1 (the agent has the most).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local most = tonumber(ARGV[3])
if most > 0 and redis.call('ZCARD', KEYS[2]) >= most then return -1 end
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
