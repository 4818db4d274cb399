-- Take a lease: refused ({0, holder, until}) while another node's lease is
-- valid unless forced; otherwise the fencing epoch goes up by one
-- ({1, token, until}). A pre-lease string value counts as expired.
-- The token carries a nonce the claimer drew: a store that lost a claim (an AOF
-- cut to its last fsync) hands out the same epoch again, and the holder of the
-- lost claim must not be able to write with the new one's token.
-- KEYS: lease. ARGV: node, address, lease ms, force ('1'), nonce.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local kind = redis.call('TYPE', KEYS[1])['ok']
local epoch, holder, till = 0, '', 0
if kind == 'string' then
  epoch = tonumber(string.match(redis.call('GET', KEYS[1]), ':(%d+)$')) or 0
  redis.call('DEL', KEYS[1])
elseif kind == 'hash' then
  local cur = redis.call('HMGET', KEYS[1], 'node', 'epoch', 'until')
  holder = cur[1] or ''
  epoch = tonumber(cur[2]) or 0
  till = tonumber(cur[3]) or 0
end
if holder ~= '' and holder ~= ARGV[1] and till > now and ARGV[4] ~= '1' then
  return {0, holder, till}
end
epoch = epoch + 1
local token = ARGV[1] .. ':' .. epoch .. ':' .. ARGV[5]
local untilms = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'node', ARGV[1], 'epoch', epoch, 'token', token,
           'until', untilms, 'addr', ARGV[2], 'claimed_ms', now)
if holder ~= '' then redis.call('HSET', KEYS[1], 'prev', holder) end
redis.call('HDEL', KEYS[1], 'next', 'next_addr')
return {1, token, untilms}
