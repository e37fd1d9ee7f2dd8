-- state.lua - a target's configuration or state as named fields, read in one
-- atomic call (bp::Gate::Config and State; bpctl). Decodes the records with
-- prelude.lua, so no caller knows their layout. Changes nothing; buckets are
-- not refilled by reading.
--
-- KEYS[1] = "bp:{target}:state"
-- ARGV: "config", or "state" and the ablation ("nopriority" computes the
--       queue weights without omega_k, as admit.lua does), and optionally
--       "summary": without the per-queue list (O(classes), for scrapes)
-- Reply: a flat list name1, value1, name2, value2, ... Numbers are decimal
-- strings ("%.17g", exact); lists are nested lists. A field is left out when
-- absent (e.g. the caps of an unconfigured target).
--   config: configured ("1"/"0"), requests_per_s, tokens_per_s, burst_s,
--     max_cost_requests, max_cost_tokens (0 = default), omega (omega_1..K),
--     slack_ms, lend_fraction, grace_ms, ticket_ttl_ms, adapt ("1"/"0"),
--     adapt_beta, adapt_recover_ms, adapt_window_ms, adapt_min_429 (the
--     defaults for fields never set), tenant_weights (tenant, weight, ...).
--     O(fields of the state hash): tenant weights are found by HSCAN.
--   state: configured, the caps as above, omega, class_requests and
--     class_tokens (classes 1..max(K, 1)), class_counters (per class, a
--     flat list name, value of prelude.lua's NNAMES: running totals, 0 when
--     none), rejects_priority, rejects_too_large, learned_requests_drops,
--     learned_tokens_drops (the target's running totals), class_backlogged
--     (per class, its backlogged tenants n), active_queues (the seen set's
--     size), server_time_ms (TIME),
--     reserved_tokens (O, reservation mode; 0 otherwise); when
--     the target has bucket state ('g'): l1_requests, l1_tokens, l1_at_ms,
--     virtual_time, tickets (the ticket counter), else when configured the
--     full cold bucket l1_requests, l1_tokens; adapt, and when a cap is
--     learned: learned_requests_fraction, learned_tokens_fraction (as of
--     server_time_ms), learned_requests_decreased_ms,
--     learned_tokens_decreased_ms; queues: one list per active queue (the
--     seen set) of tenant, priority, weight (w_t * omega_k now), tag,
--     backlogged ("1"/"0"), admits, defers, lent. O(active queues).

local what = ARGV[1]
if what ~= 'config' and what ~= 'state' then
  return redis.error_reply('ERR bp: state.lua takes "config" or "state"')
end
local function fmt(x) return string.format('%.17g', x) end
local out = {}
local function put(name, value) out[#out + 1] = name; out[#out + 1] = value end

local c = redis.call('HMGET', H, 'requests_per_s', 'tokens_per_s', 'burst_s', 'max_cost_requests',
  'max_cost_tokens', 'classes', 'adapt', 'ad')
local configured = c[1] ~= false
put('configured', configured and '1' or '0')
if configured then
  put('requests_per_s', fmt(tonumber(c[1]) or 0))
  put('tokens_per_s', fmt(tonumber(c[2]) or 0))
  put('burst_s', fmt(tonumber(c[3]) or DEFAULT_BURST_S))
  put('max_cost_requests', fmt(tonumber(c[4]) or 0))
  put('max_cost_tokens', fmt(tonumber(c[5]) or 0))
end
local classes = tonumber(c[6]) or 0
local omega = {}
for k = 1, classes do omega[k] = fmt(tonumber(redis.call('HGET', H, 'omega:' .. k)) or 1) end
put('omega', omega)
put('adapt', c[7] == '1' and '1' or '0')

if what == 'config' then
  local fields = {'slack_ms', DEFAULT_SLACK_MS, 'lend_fraction', DEFAULT_LEND_FRACTION,
    'grace_ms', DEFAULT_GRACE_MS, 'ticket_ttl_ms', DEFAULT_TICKET_TTL_MS, 'adapt_beta',
    DEFAULT_ADAPT_BETA, 'adapt_recover_ms', DEFAULT_ADAPT_RECOVER_MS, 'adapt_window_ms',
    DEFAULT_ADAPT_WINDOW_MS, 'adapt_min_429', DEFAULT_ADAPT_MIN_429}
  for i = 1, #fields, 2 do
    put(fields[i], fmt(tonumber(redis.call('HGET', H, fields[i])) or fields[i + 1]))
  end
  put('share_rule', redis.call('HGET', H, 'share_rule') or 'hier')
  put('class_policy', redis.call('HGET', H, 'class_policy') or 'fair')
  local tw, cursor = {}, '0'
  repeat
    local page = redis.call('HSCAN', H, cursor, 'MATCH', 'tw:*', 'COUNT', '1000')
    cursor = page[1]
    for j = 1, #page[2], 2 do
      tw[#tw + 1] = string.sub(page[2][j], 4)
      tw[#tw + 1] = fmt(tonumber(page[2][j + 1]) or 1)
    end
  until cursor == '0'
  put('tenant_weights', tw)
  return out
end

local creq, ctok, cbl, ccnt, names = {}, {}, {}, {}, {}
for name in string.gmatch(NNAMES, '%S+') do names[#names + 1] = name end
for k = 1, math.max(classes, 1) do
  local raw = redis.call('HGET', H, 'c:' .. k)
  local r, t, n = rec(CREC, CLEN, raw)
  creq[k], ctok[k], cbl[k] = fmt(r or 0), fmt(t or 0), fmt(n or 0)
  local v = {}
  if r and #raw >= CLEN + NLEN then v = {struct.unpack(NTAIL, raw, CLEN + 1)} end
  local list = {}
  for i, name in ipairs(names) do
    list[#list + 1] = name
    list[#list + 1] = fmt(v[i] or 0)
  end
  ccnt[k] = list
end
put('class_requests', creq)
put('class_tokens', ctok)
put('class_counters', ccnt)
put('class_backlogged', cbl)
local n = redis.call('HMGET', H, 'n:rejects_priority', 'n:rejects_too_large', 'n:drops_requests',
  'n:drops_tokens')
put('rejects_priority', fmt(tonumber(n[1]) or 0))
put('rejects_too_large', fmt(tonumber(n[2]) or 0))
put('learned_requests_drops', fmt(tonumber(n[3]) or 0))
put('learned_tokens_drops', fmt(tonumber(n[4]) or 0))
local now = server_us()
put('server_time_ms', fmt(now / 1000))
put('reserved_tokens', fmt(tonumber(redis.call('HGET', H, 'rsv')) or 0))  -- O
local r, t, ts, V, _, _, seq = rec(GREC, GLEN, redis.call('HGET', H, 'g'))
if r then
  put('l1_requests', fmt(r))
  put('l1_tokens', fmt(t))
  put('l1_at_ms', fmt(ts / 1000))
  put('virtual_time', fmt(V))
  put('tickets', fmt(seq))
elseif configured then  -- never admitted to: a cold bucket is full
  local burst = tonumber(c[3]) or DEFAULT_BURST_S
  put('l1_requests', fmt((tonumber(c[1]) or 0) * burst))
  put('l1_tokens', fmt((tonumber(c[2]) or 0) * burst))
end
local a = ad_unpack(c[8])
if a and a[5] > 0 then
  put('learned_requests_fraction', fmt(learned(a[1], a[2], a[5], now)))
  put('learned_tokens_fraction', fmt(learned(a[3], a[4], a[5], now)))
  put('learned_requests_decreased_ms', fmt(a[1] < 1 and a[2] / 1000 or 0))
  put('learned_tokens_decreased_ms', fmt(a[3] < 1 and a[4] / 1000 or 0))
end
put('active_queues', fmt(redis.call('ZCARD', SEEN)))
if ARGV[3] == 'summary' then return out end
local no_priority = ARGV[2] == 'nopriority'
local queues = {}
for _, id in ipairs(redis.call('ZRANGE', SEEN, '0', '-1')) do
  local k, tenant = string.match(id, '^([^:]*):(.*)$')
  local qv = redis.call('HMGET', H, 'q:' .. id, 'tw:' .. (tenant or ''), 'omega:' .. (k or ''))
  local F, _, _, _, bl, _, na, nd, nl = rec(QREC, QLEN, qv[1])
  if k and F then
    queues[#queues + 1] = {'tenant', tenant, 'priority', k, 'weight',
      fmt(queue_weight(qv[2], qv[3], no_priority)), 'tag', fmt(F), 'backlogged',
      bl == 1 and '1' or '0', 'admits', fmt(na), 'defers', fmt(nd), 'lent', fmt(nl)}
  end
end
put('queues', queues)
return out
