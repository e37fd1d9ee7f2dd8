-- reset_buckets.lua - drops a target's bucket and queue state and keeps its
-- configuration, in one atomic step (bp::Gate::ResetBuckets, bpctl reset).
--
-- Deletes the state hash's 'g' (L1 levels, V, eq. 1 sums), 'l1hold' (a due
-- queue's claim on the L1 refill), 'q:<id>' (queue tags and counters) and
-- 'c:<k>' (class totals) fields and the bl, bx and
-- seen sets. Configuration fields (caps, omega, tw:<tenant>, tuning, cfg) stay.
-- The ticket counter survives: 'g' is rewritten as empty buckets at time 0
-- (so the next admission refills them to full, as a cold start does) with the
-- old counter, so tickets issued after the reset never reuse a number. The
-- caller deletes the stale tickets, numbered 1..counter.
--
-- KEYS[1] = "bp:{target}"
-- Reply: the ticket counter at the reset.

local P = KEYS[1]
local H = P .. ':state'
local g = redis.call('HGET', H, 'g')
local seq = 0
if g then
  seq = tonumber(string.match(g, '^%S+ %S+ %S+ %S+ %S+ %S+ (%S+) %S+$')) or 0
end
local drop = {}
for _, f in ipairs(redis.call('HKEYS', H)) do
  local head = string.sub(f, 1, 2)
  if f == 'g' or f == 'l1hold' or head == 'q:' or head == 'c:' then drop[#drop + 1] = f end
end
for i = 1, #drop, 1000 do  -- unpack() has a stack limit
  redis.call('HDEL', H, unpack(drop, i, math.min(i + 999, #drop)))
end
redis.call('DEL', P .. ':bl', P .. ':bx', P .. ':seen')
if seq > 0 then
  -- GFMT of admit.lua: r t ts_us V Dr Dt seq evt_us
  redis.call('HSET', H, 'g', string.format('0 0 0 0 0 0 %d 0', seq))
end
return seq
