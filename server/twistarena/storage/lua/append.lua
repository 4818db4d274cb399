-- Append entries to the action logs of one or more matches, each fenced by its
-- own lease: the appends of a batch in one call (one script run per batch, not
-- one per match) where the keys may share a server; one call per match in a cluster.
-- KEYS: log_1, lease_1, log_2, lease_2, ...
-- ARGV: for each match in KEYS' order: token, expected log length, entry count, entries...
-- Returns a flat array, two items per match: 1 and the new length; -1 and the
-- current token, 'lease expired' or 'match over' (fenced: a stored end is
-- final, whoever writes after it); or -2 and the actual length (the log
-- is not as long as expected). A fenced or short match appends nothing.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
local a = 1
for k = 1, #KEYS, 2 do
  local token, expected, count = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local first = a + 3
  a = first + count
  local o = redis.call('HMGET', KEYS[k + 1], 'token', 'until', 'ended')
  if o[3] then
    out[#out + 1] = -1
    out[#out + 1] = 'match over'
  elseif o[1] ~= token then
    out[#out + 1] = -1
    out[#out + 1] = o[1] or ''
  elseif tonumber(o[2]) <= now then
    out[#out + 1] = -1
    out[#out + 1] = 'lease expired'
  else
    local n = redis.call('LLEN', KEYS[k])
    if n ~= expected then
      out[#out + 1] = -2
      out[#out + 1] = n
    else
      for i = first, a - 1 do redis.call('RPUSH', KEYS[k], ARGV[i]) end
      out[#out + 1] = 1
      out[#out + 1] = n + count
    end
  end
end
return out
