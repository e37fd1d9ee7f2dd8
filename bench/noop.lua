-- noop.lua - the trivial script bench/gate_bench.cpp compares admit.lua to:
-- one HINCRBY on the target's prefix, so it pays the same EVALSHA round trip.
return redis.call('HINCRBY', KEYS[1] .. ':noop', 'n', 1)
