-- A node's heartbeat (or its leaving), and the list of live nodes.
-- KEYS: nodes, the node's alive key, node info. ARGV: id, address, ttl ms, load,
-- leave ('1'). Returns {now, id1, seen1, 'load|addr', id2, ...} for the live nodes.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
if ARGV[5] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
  redis.call('HDEL', KEYS[3], ARGV[1])
else
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[4] .. '|' .. ARGV[2])
end
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - 20 * ttl)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
end
local out = {now}
local live = redis.call('ZRANGEBYSCORE', KEYS[1], now - ttl, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = live[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[3], live[i]) or '0|'
end
return out
