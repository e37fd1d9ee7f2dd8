-- configure.lua - hot update of a target's configuration (I2), in one atomic
-- step.
--
-- Sets (or, with an empty value, deletes) fields of the state hash and
-- rebuilds the packed 'cfg' record that admit.lua reads on every call (the
-- caps, tuning, the adapt switch and omega_1..omega_K), with
-- the defaults of prelude.lua for fields never set. Fields: requests_per_s,
-- tokens_per_s, burst_s, max_cost_requests, max_cost_tokens, omega:<k>,
-- omega_sum, classes, tw:<tenant>, lend_fraction, slack_ms, grace_ms,
-- ticket_ttl_ms, adapt, adapt_beta, adapt_recover_ms, adapt_window_ms,
-- adapt_min_429, share_rule (hier | flat), class_policy (fair | strict)
-- (docs/gate.md "Key schema").
--
-- Mode "set" writes the pairs given; "replace" (a whole configuration)
-- also deletes every tenant weight tw:<tenant> not among them. "seed" (a
-- client's re-seed from its declared configuration, after the store lost
-- its state: docs/store-restart.md) is "replace" done only while the target
-- is unconfigured (no cfg record), so many clients racing to seed write
-- once; it also sets the L1 levels to empty at now and starts the ticket
-- counter at now in microseconds (see below). In all, writing 'classes'
-- deletes omega:<k> for the classes above it (up to the old 'classes'), and
-- a tenant weight for a tenant name outside the rule (prelude.lua) is an
-- error, with nothing written.
--
-- Structured modes take the declared configuration's JSON (the format of
-- `bpctl export`, lib/gate/include/bp/gate_config_json.h) instead of field
-- names, so a client names no field of the state hash: "declare" is
-- "replace" with a whole configuration, "declare_seed" is "seed" with one,
-- and "update" is "set" with a part of one: each section present is
-- written as a whole ("caps": all five, an absent optional one taking its
-- default; "priority_weights": omega_1..omega_K, [] deleting them;
-- "tuning": every field, an absent one taking its default), except
-- "tenant_weights", whose entries are merged (null deletes one). "declare"
-- and "declare_seed" need "caps"; their absent sections take the defaults
-- (no priority or tenant weights, default tuning). Values are checked for
-- type only: callers validate ranges (bp::ValidateGateConfig).
--
-- Adaptive caps: with adapt not "1" the learned state 'ad' is deleted (the
-- configured caps apply at once); a changed adapt_recover_ms re-bases 'ad'
-- (each fraction as of now, recovering at the new rate from now on).
--
-- KEYS[1] = "bp:{target}:state"
-- ARGV: mode ("set" | "replace"), field1, value1, field2, value2, ...
--       or "seed", now_ms (tests only; 0 = TIME), field1, value1, ...
--       or "declare" | "update", json; or "declare_seed", now_ms, json
-- Reply: 1 if the target is configured (requests_per_s set), else 0; for
-- "seed" and "declare_seed": 1 if this call wrote the configuration, 0 if
-- the target was configured already (nothing written).

-- The field/value pairs of a declared configuration's JSON text (the
-- structured modes above), or an error message. partial: "update".
local function declared_pairs(text, partial)
  local ok, doc = pcall(cjson.decode, text or '')
  if not ok or type(doc) ~= 'table' then
    return 'ERR bp: configure: the declared configuration must be a JSON object'
  end
  local out = {}
  local function add(f, v) out[#out + 1] = f; out[#out + 1] = v end
  local function fmt(x) return string.format('%.17g', x) end
  local function bad(where, what) return 'ERR bp: configure: ' .. where .. ' must be ' .. what end
  for key in pairs(doc) do
    if key ~= 'version' and key ~= 'caps' and key ~= 'priority_weights'
        and key ~= 'tenant_weights' and key ~= 'tuning' then
      return 'ERR bp: configure: unknown field ' .. tostring(key)
    end
  end
  local caps = doc.caps
  if caps == nil or caps == cjson.null then
    if not partial then return 'ERR bp: configure: caps required' end
  elseif type(caps) ~= 'table' or type(caps.requests_per_s) ~= 'number' then
    return bad('caps', 'an object with a number requests_per_s')
  else
    for _, f in ipairs({'requests_per_s', 'tokens_per_s', 'burst_s', 'max_cost_requests',
        'max_cost_tokens'}) do
      local v = caps[f]
      if v ~= nil and type(v) ~= 'number' then return bad('caps.' .. f, 'a number') end
      if f == 'tokens_per_s' then v = v or 0 end
      -- Absent (or a max cost of 0): deleted, so the default applies.
      if v == nil or (v == 0 and string.sub(f, 1, 9) == 'max_cost_') then
        add(f, '')
      else
        add(f, fmt(v))
      end
    end
  end
  local w = doc.priority_weights
  if w ~= nil or not partial then
    if w == nil or w == cjson.null then w = {} end
    if type(w) ~= 'table' then return bad('priority_weights', 'an array of numbers') end
    local sum = 0
    for k = 1, #w do
      if type(w[k]) ~= 'number' then return bad('priority_weights', 'an array of numbers') end
      sum = sum + w[k]
      add('omega:' .. k, fmt(w[k]))
    end
    add('omega_sum', #w > 0 and fmt(sum) or '')
    add('classes', #w > 0 and tostring(#w) or '')
  end
  local tw = doc.tenant_weights
  if tw ~= nil and tw ~= cjson.null then
    if type(tw) ~= 'table' then return bad('tenant_weights', 'an object') end
    for tenant, v in pairs(tw) do
      if v == cjson.null then
        add('tw:' .. tenant, '')
      elseif type(v) ~= 'number' then
        return bad('tenant_weights.' .. tostring(tenant), 'a number')
      else
        add('tw:' .. tenant, fmt(v))
      end
    end
  end
  local t = doc.tuning
  if t ~= nil or not partial then
    if t == nil or t == cjson.null then t = {} end
    if type(t) ~= 'table' then return bad('tuning', 'an object') end
    local known = {slack_ms = 1, lend_fraction = 1, grace_ms = 1, ticket_ttl_ms = 1, adapt = 1,
      adapt_beta = 1, adapt_recover_ms = 1, adapt_window_ms = 1, adapt_min_429 = 1,
      share_rule = 1, class_policy = 1}
    for key in pairs(t) do
      if not known[key] then return 'ERR bp: configure: unknown field tuning.' .. tostring(key) end
    end
    for _, f in ipairs({'slack_ms', 'lend_fraction', 'grace_ms', 'ticket_ttl_ms', 'adapt_beta',
        'adapt_recover_ms', 'adapt_window_ms', 'adapt_min_429'}) do
      local v = t[f]
      if v ~= nil and type(v) ~= 'number' then return bad('tuning.' .. f, 'a number') end
      add(f, v == nil and '' or fmt(v))
    end
    if t.adapt ~= nil and type(t.adapt) ~= 'boolean' then return bad('tuning.adapt', 'a boolean') end
    add('adapt', t.adapt and '1' or '0')
    for _, f in ipairs({'share_rule', 'class_policy'}) do
      if t[f] ~= nil and type(t[f]) ~= 'string' then return bad('tuning.' .. f, 'a string') end
      add(f, t[f] or '')
    end
  end
  return out
end

local mode = ARGV[1]
local args = ARGV  -- mode, [now_ms,] field/value pairs
if mode == 'declare' or mode == 'declare_seed' or mode == 'update' then
  local pairs_or_error = declared_pairs(ARGV[mode == 'declare_seed' and 3 or 2],
    mode == 'update')
  if type(pairs_or_error) == 'string' then return redis.error_reply(pairs_or_error) end
  args = {mode == 'declare' and 'replace' or mode == 'update' and 'set' or 'seed'}
  if mode == 'declare_seed' then args[2] = ARGV[2] end
  for _, v in ipairs(pairs_or_error) do args[#args + 1] = v end
  mode = args[1]
end
if mode ~= 'set' and mode ~= 'replace' and mode ~= 'seed' then
  return redis.error_reply('ERR bp: configure mode must be set, replace, seed, declare, '
    .. 'declare_seed or update')
end
local first = mode == 'seed' and 3 or 2  -- the first field's index in args
if (#args - first) % 2 ~= 1 then
  return redis.error_reply('ERR bp: configure takes field/value pairs')
end
if mode == 'seed' and redis.call('HEXISTS', H, 'cfg') == 1 then return 0 end
local given = {}
for i = first, #args, 2 do
  local f, v = args[i], args[i + 1]
  if string.sub(f, 1, 3) == 'tw:' and v ~= '' and not valid_tenant(string.sub(f, 4)) then
    return redis.error_reply('ERR bp: tenant weight: tenant \'' .. string.sub(f, 4)
      .. '\' must match ' .. TENANT_RULE)
  end
  if (f == 'share_rule' and v ~= '' and v ~= 'hier' and v ~= 'flat')
      or (f == 'class_policy' and v ~= '' and v ~= 'fair' and v ~= 'strict') then
    return redis.error_reply('ERR bp: ' .. f .. ' \'' .. v .. '\' must be '
      .. (f == 'share_rule' and 'hier or flat' or 'fair or strict'))
  end
  given[f] = true
end
if mode == 'seed' then
  -- Conservative buckets: the clients called ungated while the store was
  -- away, so the provider's window may already hold up to its limit. An
  -- empty L1 (refilling at C_d from now) never adds a burst on top of that;
  -- a full one (a cold start's) would admit C_d * burst_s at once. The
  -- ticket counter starts at now in microseconds: tickets issued before the
  -- loss (released late, after it) never name one issued after it, unless
  -- the old counter ran ahead of the clock (over a million admissions per
  -- second). V, D_r, D_t and the eviction time start at 0, as on a cold start.
  local now = math.floor((tonumber(args[2]) or 0) * 1000)
  if now <= 0 then now = server_us() end
  local seq = select(7, rec(GREC, GLEN, redis.call('HGET', H, 'g'))) or 0
  redis.call('HSET', H, 'g', struct.pack(GREC, 1, 0, 0, now, 0, 0, 0, math.max(seq, now), 0))
end
local old_classes = tonumber(redis.call('HGET', H, 'classes')) or 0
if mode ~= 'set' then
  local cursor = '0'
  repeat
    local page = redis.call('HSCAN', H, cursor, 'MATCH', 'tw:*', 'COUNT', '1000')
    cursor = page[1]
    for j = 1, #page[2], 2 do
      if not given[page[2][j]] then redis.call('HDEL', H, page[2][j]) end
    end
  until cursor == '0'
end
for i = first, #args, 2 do
  if args[i + 1] == '' then
    redis.call('HDEL', H, args[i])
  else
    redis.call('HSET', H, args[i], args[i + 1])
  end
end
if given['classes'] then
  local classes = tonumber(redis.call('HGET', H, 'classes')) or 0
  for c = classes + 1, old_classes do redis.call('HDEL', H, 'omega:' .. c) end
end
local ad = redis.call('HMGET', H, 'adapt', 'ad', 'adapt_recover_ms')
if ad[1] ~= '1' then
  redis.call('HDEL', H, 'ad')
elseif ad[2] then
  local a = ad_unpack(ad[2])
  local tau = (tonumber(ad[3]) or DEFAULT_ADAPT_RECOVER_MS) * 1000
  if a and a[5] ~= tau and tau > 0 then
    local now = server_us()
    for _, i in ipairs({1, 3}) do
      a[i] = learned(a[i], a[i + 1], a[5], now)
      a[i + 1] = now
    end
    a[5] = tau
    redis.call('HSET', H, 'ad', string.format(ADFMT, unpack(a)))
  end
end
local f = redis.call('HMGET', H, 'requests_per_s', 'tokens_per_s', 'burst_s', 'omega_sum',
  'lend_fraction', 'slack_ms', 'grace_ms', 'ticket_ttl_ms', 'max_cost_requests',
  'max_cost_tokens', 'adapt', 'classes', 'share_rule', 'class_policy')
if not f[1] then
  redis.call('HDEL', H, 'cfg')
  return 0
end
local function num(i, d) return tonumber(f[i]) or d end
local classes = math.max(0, math.floor(num(12, 0)))
-- cfg = Cr Ct burst omega_sum lend slack_ms grace_ms ticket_ttl_ms
--       max_cost_requests max_cost_tokens adapt K flat strict omega_1..omega_K
--       (prelude.lua)
local parts = {struct.pack(CFGREC, 1, num(1, 0), num(2, 0), num(3, DEFAULT_BURST_S), num(4, 0),
  num(5, DEFAULT_LEND_FRACTION), num(6, DEFAULT_SLACK_MS), num(7, DEFAULT_GRACE_MS),
  num(8, DEFAULT_TICKET_TTL_MS), num(9, 0), num(10, 0), f[11] == '1' and 1 or 0, classes,
  f[13] == 'flat' and 1 or 0, f[14] == 'strict' and 1 or 0)}
for c = 1, classes do
  parts[c + 1] = struct.pack('<d', tonumber(redis.call('HGET', H, 'omega:' .. c)) or 1)
end
redis.call('HSET', H, 'cfg', table.concat(parts))
return 1
