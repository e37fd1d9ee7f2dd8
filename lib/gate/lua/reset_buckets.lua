-- reset_buckets.lua - drops a target's bucket and queue state and keeps its
-- configuration, in one atomic step (bp::Gate::ResetBuckets, bpctl reset).
--
-- Deletes the state hash's 'g' (L1 levels, V, eq. 1 sums), 'l1hold' (a due
-- queue's claim on the L1 refill), 'l1line' (the refill promised to
-- callers deferred for L1), 'rsv' (outstanding reservations),
-- 'q:<id>' (queue tags and counters), 'c:<k>' (class totals and counters) and
-- 'n:*' (the target's counters) fields and
-- the bl, bx, seen and rsv sets. Configuration fields (caps, omega, tw:<tenant>, tuning, cfg) stay.
-- The ticket counter survives: 'g' is rewritten as empty buckets at time 0
-- (so the next admission refills them to full, as a cold start does) with the
-- old counter, so tickets issued after the reset never reuse a number. The
-- caller deletes the stale tickets, numbered 1..counter.
--
-- KEYS[1] = "bp:{target}:state" (the zsets are named from it; prelude.lua)
-- Reply: the ticket counter at the reset.

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
end
return seq
