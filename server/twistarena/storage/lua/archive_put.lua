-- Store an archive (once per content) and note the version that uses it.
-- KEYS: the archive, its users. ARGV: the bytes, the user (<agent>/<version id>).
-- Returns 1 when the archive is new, 0 when it was stored already. An archive
-- stored before users were noted gets the user 'legacy': it is never collected.
local new = redis.call('SET', KEYS[1], ARGV[1], 'NX')
if not new and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SADD', KEYS[2], 'legacy')
end
redis.call('SADD', KEYS[2], ARGV[2])
if new then return 1 end
return 0
