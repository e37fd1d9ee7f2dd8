-- reset_buckets.lua - a target's resets, each in one atomic step
-- (bp::GateAdmin::ResetBuckets, ResetLearned and Reset; bpctl reset).
--
-- "buckets" (the default): drops the bucket and queue state and keeps the
-- configuration. Deletes the state hash's 'g' (L1 levels, V, eq. 1 sums),
-- 'l1hold' (a due queue's claim on the L1 refill), 'l1line' (the refill
-- promised to callers deferred for L1), 'rsv' (outstanding reservations),
-- 'q:<id>' (queue tags and counters), 'c:<k>' (class totals and counters)
-- and 'n:*' (the target's counters) fields, the bl, bx, seen and rsv sets, and the tickets issued so far. Configuration fields (caps,
-- omega, tw:<tenant>, tuning, cfg) stay. The ticket counter survives: 'g' is
-- rewritten as empty buckets at time 0 (so the next admission refills them
-- to full, as a cold start does) with the old counter, so tickets issued
-- after the reset never reuse a number. Reply: the ticket counter.
-- "learned": drops the adaptive caps' learned state 'ad' and the header
-- rule's window anchor, outside rate and margin 'ah' (the configured caps
-- apply from the next admission). Reply: the number of those fields there were.
-- "all": deletes every key of the target, configuration included. Reply:
-- the number of keys deleted.
-- Tickets and "all" find keys by SCAN (O(keys in the database) work in one
-- call): tools only, never while workers admit.
--
-- KEYS[1] = "bp:{target}:state" (the others are named from it; prelude.lua)
-- ARGV: ["buckets" | "learned" | "all"]

local mode = ARGV[1] or 'buckets'
if mode ~= 'buckets' and mode ~= 'learned' and mode ~= 'all' then
  return redis.error_reply('ERR bp: reset_buckets.lua takes "buckets", "learned" or "all"')
end
if mode == 'learned' then return redis.call('HDEL', H, 'ad', 'ah') end
-- Deletes the keys "<P>:<glob>" (P glob-escaped: a target may hold * ? [ ] \)
-- for which keep(key) is false; the number deleted.
local function delete_matching(glob, keep)
  local pattern = string.gsub(P, '[%*%?%[%]\\]', '\\%0') .. ':' .. glob
  local cursor, n = '0', 0
  repeat
    local page = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', '1000')
    cursor = page[1]
    local del = {}
    for _, key in ipairs(page[2]) do
      if not keep(key) then del[#del + 1] = key end
    end
    if #del > 0 then n = n + redis.call('DEL', unpack(del)) end
  until cursor == '0'
  return n
end
if mode == 'all' then return delete_matching('*', function() return false end) end

local seq = select(7, rec(GREC, GLEN, redis.call('HGET', H, 'g'))) or 0
local drop = {}
for _, f in ipairs(redis.call('HKEYS', H)) do
  local head = string.sub(f, 1, 2)
  if f == 'g' or f == 'l1hold' or f == 'l1line' or f == 'rsv' or head == 'q:'
      or head == 'c:' or head == 'n:' then
    drop[#drop + 1] = f
  end
end
for i = 1, #drop, 1000 do  -- unpack() has a stack limit
  redis.call('HDEL', H, unpack(drop, i, math.min(i + 999, #drop)))
end
redis.call('DEL', BL, BX, SEEN, RSV)
if seq > 0 then  -- empty buckets at time 0, the counter kept
  redis.call('HSET', H, 'g', struct.pack(GREC, 1, 0, 0, 0, 0, 0, 0, seq, 0))
  -- The tickets issued before the reset: their numbers are 1..seq.
  local head = P .. ':tk:'
  delete_matching('tk:*', function(key)
    local n = string.sub(key, 1, #head) == head and string.match(string.sub(key, #head + 1), '^%d+$')
    return not (n and tonumber(n) >= 1 and tonumber(n) <= seq)
  end)
end
return seq
