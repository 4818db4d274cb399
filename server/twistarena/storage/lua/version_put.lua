-- Store a hosted version unless the agent has it already (versions are immutable).
-- KEYS: version hash, the agent's version index, its version number counter, its
-- archive bytes. ARGV: version id, created ms, most versions the agent may keep
-- (0: no cap), most packed bytes it may keep (0: no cap), this version's packed
-- bytes, then field, value pairs.
-- Returns 1 (stored), 0 (it existed: left as it was), -1 (the agent has the most
-- versions) or -2 (the new one would take the agent over its bytes).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local most = tonumber(ARGV[3])
if most > 0 and redis.call('ZCARD', KEYS[2]) >= most then return -1 end
local most_bytes = tonumber(ARGV[4])
local size = tonumber(ARGV[5])
local held = tonumber(redis.call('GET', KEYS[4]) or '0')
if most_bytes > 0 and held + size > most_bytes then return -2 end
-- Versions stored before numbers were kept are numbered by their rank: go on from there.
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], redis.call('ZCARD', KEYS[2]))
end
local fields = {'number', redis.call('INCR', KEYS[3])}
for i = 6, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('INCRBY', KEYS[4], size)
return 1
