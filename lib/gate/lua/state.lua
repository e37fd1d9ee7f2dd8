-- state.lua - a target's configuration or state as named fields, read in one
-- atomic call (bp::Gate::Config and State; bpctl status). Decodes the records
-- with prelude.lua, so no caller knows their layout, and answers what
-- admit.lua would see now (refilled levels, learned rates, effective max
-- costs, the fair shares of the share rule), so no caller re-derives a rule.
-- Changes nothing; buckets are not refilled by reading.
--
-- KEYS[1] = "bp:{target}:state"
-- ARGV: "config"; or "state" and the ablation ("nopriority" computes the
--       queue weights without omega_k, as admit.lua does), and optionally
--       "summary": without the configuration's tuning and tenant weights,
--       the server's name and the per-queue list (O(classes), for scrapes);
--       or "keys": the names of the target's keys.
-- Reply: a flat list name1, value1, name2, value2, ... Numbers are decimal
-- strings ("%.17g", exact); lists are nested lists. A field is left out when
-- absent (e.g. the caps of an unconfigured target).
--   config: configured ("1"/"0"), requests_per_s, tokens_per_s, burst_s,
--     max_cost_requests, max_cost_tokens (0 = default), omega (omega_1..K),
--     adapt ("1"/"0"), then the tuning: slack_ms, lend_fraction, grace_ms,
--     ticket_ttl_ms, adapt_beta, adapt_recover_ms, adapt_window_ms,
--     adapt_min_429 (the defaults for fields never set), share_rule,
--     class_policy, and tenant_weights (tenant, weight, ...).
--     O(fields of the state hash): tenant weights are found by HSCAN.
--   state: configured, the caps, omega and adapt as above; unless
--     "summary", the tuning and tenant_weights as above and server (INFO
--     server's "valkey 9.1.2" or "redis 7.2.4"); class_requests and
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
--     learned_tokens_decreased_ms.
--     When configured, what admit.lua would use at server_time_ms:
--     learned_requests_per_s, learned_tokens_per_s (the refill rates: the
--     caps times the learned fractions while adapt is on, else the caps),
--     l1_requests_capacity, l1_tokens_capacity (C_d * burst_s),
--     l1_requests_now, l1_tokens_now (the levels refilled to now at those
--     rates, up to the capacity, for tokens plus O; a level above its top
--     is kept for tokens, lowered to it for requests, as admit.lua does),
--     effective_max_cost_requests, effective_max_cost_tokens (the configured
--     max cost, else max(60 C_d, C_d * burst_s)).
--     class_nominal_share: per class omega_k / sum of omega over classes
--     1..max(K, 1); class_current_share: per class, its share of the binding cap among
--     the backlogged queues under share_rule (hier: omega_k / sum of omega
--     over classes with backlogged tenants; flat: omega_k W_k / sum of
--     omega_j W_j; 0 without backlog; docs/gate.md "The rule"; W_k with the
--     tenants' weights now, as for fair_share below, unless "summary", which
--     takes W_k as the class records hold it).
--     Unless "summary": queues, one list per active queue (the seen set) of
--     tenant, priority, weight (w_t * omega_k now), tag, lag (tag - V),
--     backlogged ("1"/"0"), admits, defers, lent, and for a backlogged queue
--     fair_share (its class's current share times w_t / W_k, with w_t the
--     tenant's weight now and W_k adjusted to it). O(active queues).
--   keys: state, backlog, expiry, seen, reservations (the key names), and
--     ticket_prefix (a ticket n is ticket_prefix .. n): for tools and tests
--     that read the store itself (prelude.lua owns the names).

local what = ARGV[1]
if what ~= 'config' and what ~= 'state' and what ~= 'keys' then
  return redis.error_reply('ERR bp: state.lua takes "config", "state" or "keys"')
end
if what == 'keys' then
  return {'state', H, 'backlog', BL, 'expiry', BX, 'seen', SEEN, 'reservations', RSV,
    'ticket_prefix', P .. ':tk:'}
end
local full = what == 'config' or ARGV[3] ~= 'summary'
local function fmt(x) return string.format('%.17g', x) end
local out = {}
local function put(name, value) out[#out + 1] = name; out[#out + 1] = value end

local c = redis.call('HMGET', H, 'requests_per_s', 'tokens_per_s', 'burst_s', 'max_cost_requests',
  'max_cost_tokens', 'classes', 'adapt', 'ad', 'share_rule')
local configured = c[1] ~= false
local Cr, Ct = tonumber(c[1]) or 0, tonumber(c[2]) or 0
local burst = tonumber(c[3]) or DEFAULT_BURST_S
put('configured', configured and '1' or '0')
if configured then
  put('requests_per_s', fmt(Cr))
  put('tokens_per_s', fmt(Ct))
  put('burst_s', fmt(burst))
  put('max_cost_requests', fmt(tonumber(c[4]) or 0))
  put('max_cost_tokens', fmt(tonumber(c[5]) or 0))
end
local no_priority = ARGV[2] == 'nopriority'
local classes = tonumber(c[6]) or 0
local omega, omega_text = {}, {}
for k = 1, classes do
  omega_text[k] = redis.call('HGET', H, 'omega:' .. k)
  omega[k] = fmt(tonumber(omega_text[k]) or 1)
end
put('omega', omega)
put('adapt', c[7] == '1' and '1' or '0')

if full then
  local fields = {'slack_ms', DEFAULT_SLACK_MS, 'lend_fraction', DEFAULT_LEND_FRACTION,
    'grace_ms', DEFAULT_GRACE_MS, 'ticket_ttl_ms', DEFAULT_TICKET_TTL_MS, 'adapt_beta',
    DEFAULT_ADAPT_BETA, 'adapt_recover_ms', DEFAULT_ADAPT_RECOVER_MS, 'adapt_window_ms',
    DEFAULT_ADAPT_WINDOW_MS, 'adapt_min_429', DEFAULT_ADAPT_MIN_429}
  for i = 1, #fields, 2 do
    put(fields[i], fmt(tonumber(redis.call('HGET', H, fields[i])) or fields[i + 1]))
  end
  put('share_rule', c[9] or 'hier')
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
end
if what == 'config' then return out end
if full then
  local info = redis.call('INFO', 'server')
  local v = string.match(info, 'valkey_version:([^\r\n]+)')
  local server = v and ('valkey ' .. v)
  if not server then
    v = string.match(info, 'redis_version:([^\r\n]+)')
    server = v and ('redis ' .. v)
  end
  if server then put('server', server) end
end

local creq, ctok, cbl, ccnt, names = {}, {}, {}, {}, {}
local cn, cW = {}, {}  -- per class: backlogged tenants n, their weight sum W
for name in string.gmatch(NNAMES, '%S+') do names[#names + 1] = name end
for k = 1, math.max(classes, 1) do
  local raw = redis.call('HGET', H, 'c:' .. k)
  local r, t, n, W = rec(CREC, CLEN, raw)
  cn[k], cW[k] = n or 0, W or 0
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
local rsv = tonumber(redis.call('HGET', H, 'rsv')) or 0  -- O
put('reserved_tokens', fmt(rsv))
local capr, capt = Cr * burst, Ct * burst  -- B_r, B_t
local r, t, ts, V, _, _, seq = rec(GREC, GLEN, redis.call('HGET', H, 'g'))
if r then
  put('l1_requests', fmt(r))
  put('l1_tokens', fmt(t))
  put('l1_at_ms', fmt(ts / 1000))
  put('virtual_time', fmt(V))
  put('tickets', fmt(seq))
elseif configured then  -- never admitted to: a cold bucket is full
  put('l1_requests', fmt(capr))
  put('l1_tokens', fmt(capt))
end
V = V or 0
local a = ad_unpack(c[8])
if a and a[5] > 0 then
  put('learned_requests_fraction', fmt(learned(a[1], a[2], a[5], now)))
  put('learned_tokens_fraction', fmt(learned(a[3], a[4], a[5], now)))
  put('learned_requests_decreased_ms', fmt(a[1] < 1 and a[2] / 1000 or 0))
  put('learned_tokens_decreased_ms', fmt(a[3] < 1 and a[4] / 1000 or 0))
end
put('active_queues', fmt(redis.call('ZCARD', SEEN)))
-- Each active queue (unless "summary"), read before the shares: a backlogged
-- queue whose tenant weight was set since its last admission counts with the
-- tenant's weight now (tw:<tenant>), not the w_t its record added to W_k,
-- so a share read right after `set weight` is the share that weight gives.
-- W_k is adjusted by the difference (queues outside the seen set keep what
-- they added), as admit.lua adjusts it at the tenant's next admission.
local queues, backlogged = {}, {}
if full then
  for _, id in ipairs(redis.call('ZRANGE', SEEN, '0', '-1')) do
    local k, tenant = string.match(id, '^([^:]*):(.*)$')
    local qv = redis.call('HMGET', H, 'q:' .. id, 'tw:' .. (tenant or ''), 'omega:' .. (k or ''))
    local F, _, _, _, bl, _, na, nd, nl, qw = rec(QREC, QLEN, qv[1])
    local kn = tonumber(k)
    if kn and F then
      local wt = tenant_weight(qv[2])
      local entry = {'tenant', tenant, 'priority', k, 'weight',
        fmt(wt * class_weight(qv[3], no_priority)), 'tag', fmt(F), 'lag', fmt(F - V),
        'backlogged', bl == 1 and '1' or '0', 'admits', fmt(na), 'defers', fmt(nd), 'lent',
        fmt(nl)}
      queues[#queues + 1] = entry
      if bl == 1 and cW[kn] then
        cW[kn] = cW[kn] + (wt - qw)  -- qw: the w_t it added to W_k
        backlogged[#backlogged + 1] = {entry, kn, wt}
      end
    end
  end
end
-- The class weights omega_k as admit.lua weighs them (1 beyond K), and the
-- fluid shares of the share rule over the backlogged queues (docs/gate.md
-- "The rule"), from the class records admit.lua keeps: hier, class k gets
-- omega_k / sum(omega of classes with backlogged tenants) and its tenant t
-- w_t / W_k of that; flat, queue q gets w_t omega_k / sum over classes of
-- omega_j W_j.
local flat = c[9] == 'flat'
local om, current, total = {}, {}, 0
for k = 1, math.max(classes, 1) do
  om[k] = class_weight(omega_text[k], no_priority)
  if cn[k] > 0 then total = total + (flat and om[k] * cW[k] or om[k]) end
end
for k = 1, #om do
  current[k] = 0
  if cn[k] > 0 and total > 0 then current[k] = (flat and om[k] * cW[k] or om[k]) / total end
end
if configured then
  -- What admit.lua would use now: its learned rates, its L1 refill (the
  -- section "L1 refill" there) and its largest admissible costs.
  local lr, lt = Cr, Ct
  if c[7] == '1' and a then
    lr = Cr * learned(a[1], a[2], a[5], now)
    lt = Ct * learned(a[3], a[4], a[5], now)
  end
  put('learned_requests_per_s', fmt(lr))
  put('learned_tokens_per_s', fmt(lt))
  put('l1_requests_capacity', fmt(capr))
  put('l1_tokens_capacity', fmt(capt))
  local rn, tn = capr, capt
  if r then
    local el = math.max(0, now - ts)
    rn = math.min(capr, r + lr * el / 1e6)
    tn = t
    if t < capt + rsv then tn = math.min(capt + rsv, t + lt * el / 1e6) end
  end
  put('l1_requests_now', fmt(rn))
  put('l1_tokens_now', fmt(tn))
  local maxr, maxt = tonumber(c[4]) or 0, tonumber(c[5]) or 0
  put('effective_max_cost_requests', fmt(maxr > 0 and maxr or math.max(Cr * 60, capr)))
  put('effective_max_cost_tokens', fmt(maxt > 0 and maxt or math.max(Ct * 60, capt)))
end
local osum, nominal, cs = 0, {}, {}
for k = 1, #om do osum = osum + om[k] end
for k = 1, #om do nominal[k] = fmt(om[k] / osum) end
put('class_nominal_share', nominal)
for k = 1, #current do cs[k] = fmt(current[k]) end
put('class_current_share', cs)
if not full then return out end

-- A backlogged queue's part of its class's share: w_t / W_k of it.
for _, b in ipairs(backlogged) do
  local entry, kn, wt = b[1], b[2], b[3]
  if current[kn] and cW[kn] > 0 then
    entry[#entry + 1] = 'fair_share'
    entry[#entry + 1] = fmt(current[kn] * wt / cW[kn])
  end
end
put('queues', queues)
return out
