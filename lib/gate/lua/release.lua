-- release.lua - signed correction of an admission's debit (P4, paper IV-C).
--
-- The ticket (bp:{target}:tk:<n>, a string written by admit.lua:
-- "<k> <requests> <tokens debited> <ablation 0|1|2> <queue id> [<tokens on
-- the tag>]", ablation 1 = no-DRF, 2 = no-priority) records what was debited.
-- Release debits (actual > debited) or refunds (actual < debited) the
-- difference on L1 and on the class's admitted total, and moves the queue's
-- virtual tag from the tokens it was charged (the estimate; reservation mode
-- debits more on L1 than on the tag; absent = the L1 debit) to the actual
-- ones (dominant-share units at the current caps and weights), then deletes
-- the ticket: a second release of the same ticket changes nothing.
--
-- With ARGV[5] = "refused" or "429" the provider refused the admitted call:
-- L1 and the class totals keep the debit (the provider's window was full,
-- the gate's view of it stays conservative), and the queue's tag gives back
-- the call's whole dominant share, so a queue is charged once per call served
-- (a large call refused by a window edge keeps its turn).
--
-- Adaptive caps (docs/gate.md "Adaptive caps"), when the tuning field adapt = 1:
-- the upstream's answer feeds an AIMD rule (Chiu & Jain 1989; the halving of
-- RFC 5681 section 3.1, with CUBIC's gentler beta = 0.7 of RFC 9438 as the
-- default) on a learned fraction f_d of each cap C_d, d = requests, tokens:
--   f_d(now) = min(1, f_d + (now - t_d) / tau)     additive recovery, tau =
--              adapt_recover_ms (f from 0 to 1), stored with f_d in 'ad';
--   a 429 bound on d counts in a window of adapt_window_ms unless d is held;
--   at adapt_min_429 counts in one window: f_d = max(0.05, beta * f_d(now)),
--   t_d = now, and d is held (no count, no decrease) for max(window,
--   retry-after, the d reset header): one decrease per overload episode.
-- A 429 with no known bound counts against the dimensions whose remaining
-- header is 0, else against requests (and tokens if capped).
-- The header rule: an "ok" answer with remaining R_d and reset T_d (ms, > 0)
-- on a capped d sets f_d = f_d(now) + (g_d - f_d(now)) * min(1, T_d / window),
-- g_d = clamp(k_d ((R_d + c / 2) * 1000 / T_d - x_o) / C_d, 0.05, 1), t_d = now (the
-- 429 counts and holds are kept; no raise while AIMD holds d or counts a
-- 429 of d in its window), c the call's own cost (counted at the middle of
-- its share of the window), x_o the outside rate and k_d the margin in [1,
-- 2] measured between two answers of one provider window ('ah'): outside
-- traffic or a smaller limit lowers f_d before 429s, headroom raises it (at
-- most to 1). A 429 of d halves k_d's part above 1.
-- 'ad' (prelude.lua) is written on 429s and on answers whose headers move a
-- fraction; recovery is computed where it is read (admit, release, state).
-- Records, defaults and the weight rule are prelude.lua's (embedded before
-- this text at build time).
--
-- KEYS[1] = "bp:{target}:state" (the ticket key is named from it)
-- ARGV: ticket, actual_requests, actual_tokens, [now_ms] (tests only, 0 =
--       TIME), [outcome "ok" | "429" | "refused" (default ok); "429" and "refused" are
--       both refusals, only "429" feeds the adaptive caps], [bound "requests" |
--       "tokens" | ""], [retry_after_ms], [remaining_requests],
--       [reset_requests_ms], [remaining_tokens], [reset_tokens_ms]
--       (numbers: -1 or "" = absent; with "ok" the remaining and reset
--       numbers feed the header rule, the bound and retry-after are unused)
-- Reply: 1 if applied, 0 if the ticket was unknown (released, expired, "0")

local TK = P .. ':tk:' .. (ARGV[1] or '')
local areq, atok = tonumber(ARGV[2]), tonumber(ARGV[3])
local now = (tonumber(ARGV[4] or '0') or 0) * 1000
local refused = ARGV[5] == 'refused' or ARGV[5] == '429'
if not areq or not atok or areq < 0 or atok < 0 or areq ~= math.floor(areq)
    or atok ~= math.floor(atok) then
  return redis.error_reply('ERR bp: actual costs must be integers >= 0')
end
local raw = redis.call('GETDEL', TK)  -- one command (Redis/Valkey >= 6.2, as ZADD GT)
if not raw then return 0 end
local k, dreq, dtok, abl, qid, ttok = string.match(raw, '^(%S+) (%S+) (%S+) (%S+) (%S+) ?(%S*)$')
if not qid then return redis.error_reply('ERR bp: malformed ticket') end
dreq, dtok = tonumber(dreq), tonumber(dtok)
ttok = tonumber(ttok) or dtok  -- tokens charged on the tag
local tenant = string.match(qid, '^[^:]+:(.+)$')
if now <= 0 then now = server_us() end
local s = redis.call('HMGET', H, 'cfg', 'g', 'q:' .. qid, 'c:' .. k, 'tw:' .. tenant,
  'omega:' .. k, 'ad', 'adapt', 'rsv', 'ah')
local Cr, Ct, burst, _, _, _, _, _, _, _, _, _, flat = rec(CFGREC, CFGLEN, s[1])
if not Cr or Cr <= 0 then return 1 end
local capr, capt = Cr * burst, Ct * burst

-- Adaptive caps: the learned fractions now, then a 429's decrease.
-- (Without 'ad' nothing is learned and tau is not needed until a 429.)
local a = ad_unpack(s[7]) or {}
local tau = a[5]
local fr, ft = learned(a[1], a[2], tau, now), learned(a[3], a[4], tau, now)
local function arg(i) return tonumber(ARGV[i] or '') or -1 end
local ahw  -- the header rule's new 'ah' record, written with the others
if s[8] == '1' and ARGV[5] == '429' then
  -- The AIMD tuning, read only here (a 429 is rare).
  local tn = redis.call('HMGET', H, 'adapt_beta', 'adapt_recover_ms', 'adapt_window_ms',
    'adapt_min_429')
  tau = tau or (tonumber(tn[2]) or DEFAULT_ADAPT_RECOVER_MS) * 1000
  local bound, ra = ARGV[6] or '', arg(7)
  local rem_r, rst_r, rem_t, rst_t = arg(8), arg(9), arg(10), arg(11)
  local win = (tonumber(tn[3]) or DEFAULT_ADAPT_WINDOW_MS) * 1000
  local beta = tonumber(tn[1]) or DEFAULT_ADAPT_BETA
  local m = tonumber(tn[4]) or DEFAULT_ADAPT_MIN_429
  local ws, n, h = a[6], {a[7] or 0, a[8] or 0}, {a[9] or 0, a[10] or 0}
  local f, t = {fr, ft}, {a[2] or now, a[4] or now}
  local base = {a[1] or 1, a[3] or 1}
  if not ws or now >= ws + win or now < ws then ws, n[1], n[2] = now, 0, 0 end
  local dims = {}
  if bound == 'requests' or (bound == 'tokens' and Ct <= 0) then dims = {1}
  elseif bound == 'tokens' then dims = {2}
  elseif rem_r == 0 or (rem_t == 0 and Ct > 0) then
    if rem_r == 0 then dims[#dims + 1] = 1 end
    if rem_t == 0 and Ct > 0 then dims[#dims + 1] = 2 end
  else
    dims = {1}
    if Ct > 0 then dims[2] = 2 end
  end
  -- A 429 of d halves the header rule's margin on d above 1 (the cap above
  -- the rate left overshot), until the answers show headroom again.
  local ah = {rec(AHREC, AHLEN, s[10])}
  for _, d in ipairs(dims) do
    if ah[6 * d] and ah[6 * d] > 1 then
      ah[6 * d] = 1 + (ah[6 * d] - 1) / 2
      ahw = struct.pack(AHREC, 1, unpack(ah, 1, 12))
    end
  end
  for _, d in ipairs(dims) do
    if now >= h[d] then
      n[d] = n[d] + 1
      if n[d] >= m then
        f[d], base[d], t[d], n[d] = math.max(0.05, beta * f[d]), nil, now, 0
        h[d] = now + math.max(win, ra * 1000, ((d == 1) and rst_r or rst_t) * 1000)
        if COUNTERS then
          redis.call('HINCRBY', H, d == 1 and 'n:drops_requests' or 'n:drops_tokens', 1)
        end
      end
    end
  end
  local function keepf(d)  -- unchanged fractions keep their stored base
    if base[d] then return base[d] end
    return f[d]
  end
  redis.call('HSET', H, 'ad', string.format(ADFMT, keepf(1), t[1], keepf(2), t[2], tau, ws, n[1],
    n[2], h[1], h[2]))
  fr, ft = f[1], f[2]
elseif s[8] == '1' and (ARGV[5] or 'ok') == 'ok' and (arg(9) > 0 or arg(11) > 0) then
  -- The header rule: a served call's remaining budget R_d over the time T_d
  -- until the provider restores it is the rate it still allows every
  -- client (R_d + c / 2: this call counted at the middle of its share);
  -- less the outside rate x_o measured in 'ah', the rate it allows the
  -- tenants; times the margin k_d; as a fraction of C_d: g_d = clamp(k_d
  -- ((R_d + c / 2) / T_d - x_o) / C_d, 0.05, 1); f_d moves towards it by
  -- the weight min(1, T_d /
  -- adapt_window_ms) (an answer close to its window's reset says little
  -- about the rate); it does not raise f_d while AIMD holds d or counts a
  -- 429 of d in its current window (429s showed the cap too high).
  -- x_o: two answers of one fixed window (the same reset instant, within
  -- half the first one's T) are T_a - T apart in the provider's time; the
  -- budget dropped by R_a - R, of which the gate's own served calls since
  -- the first (u) took u; the rest is outside use. Measured once the pair
  -- spans half of what the first answer saw left (T <= T_a / 2), kept
  -- until the next such pair; 0 once the anchored window ended a window
  -- ago. k_d, at the same answers: the budget fell at (R_a - R) / (T_a - T)
  -- where R_a / T_a would empty it at the reset; k_d moves towards k_d times
  -- their ratio by the call's share of R_a, within [1, HEADER_MARGIN_MAX]
  -- (not raised while f_d may not be): it rises while windows end unused,
  -- as the tenants attain less than their cap. 1 while nothing is measured.
  -- A token bucket never forms such a pair (its R rises as T falls).
  local tn = redis.call('HMGET', H, 'adapt_recover_ms', 'adapt_window_ms')
  local win = (tonumber(tn[2]) or DEFAULT_ADAPT_WINDOW_MS) * 1000
  local rem, rst, cap = {arg(8), arg(10)}, {arg(9), arg(11)}, {Cr, Ct}
  local own = {areq, atok}
  local ws = a[6] or 0
  local recent = now >= ws and now < ws + win
  local held = {now < (a[9] or 0) or (recent and (a[7] or 0) > 0),
    now < (a[10] or 0) or (recent and (a[8] or 0) > 0)}
  local f, base, t = {fr, ft}, {a[1] or 1, a[3] or 1}, {a[2] or now, a[4] or now}
  local h = {rec(AHREC, AHLEN, s[10])}
  local moved = false
  for d = 1, 2 do
    if cap[d] > 0 and rem[d] >= 0 and rst[d] > 0 then
      local o = 6 * (d - 1)
      local ra, ea, rsta, u, xo, k = h[o + 1], h[o + 2], h[o + 3], h[o + 4], h[o + 5], h[o + 6]
      local e = now + rst[d] * 1000  -- this answer's reset instant
      if not ra or rsta <= 0 or now > ea + win then ra, xo, k = nil, 0, 1 end
      if ra and math.abs(e - ea) < rsta * 500 and rem[d] <= ra then
        if rst[d] < rsta then  -- counted after the anchor
          u = u + own[d]
          if rst[d] * 2 <= rsta then
            local span = rsta - rst[d]  -- ms of the provider's time
            xo = math.max(0, (ra - rem[d] - u) * 1000 / span)
            if ra > 0 then  -- the margin: k times (R_a / T_a) / ((R_a - R) / span)
              local kn = HEADER_MARGIN_MAX
              if ra > rem[d] then kn = k * ra * span / ((ra - rem[d]) * rsta) end
              kn = math.min(HEADER_MARGIN_MAX, math.max(1, k + (kn - k) * math.min(1, own[d] / ra)))
              if kn < k or not held[d] then k = kn end
            end
          end
        end
      elseif not ra or e >= ea - rsta * 500 then
        ra, ea, rsta, u = rem[d], e, rst[d], 0  -- a new window's first answer
      end  -- else an earlier window's answer, released late: kept out
      h[o + 1], h[o + 2], h[o + 3], h[o + 4], h[o + 5], h[o + 6] = ra, ea, rsta, u, xo, k
      local left = (rem[d] + own[d] / 2) * 1000 / rst[d]  -- this call at the middle of its share
      local g = math.min(1, math.max(0.05, k * (left - xo) / cap[d]))
      local fn = f[d] + (g - f[d]) * math.min(1, rst[d] * 1000 / win)
      if fn < f[d] or (fn > f[d] and not held[d]) then
        f[d], base[d], t[d], moved = fn, fn, now, true
      end
    end
  end
  for i = 1, 12 do h[i] = h[i] or 0 end
  ahw = struct.pack(AHREC, 1, unpack(h, 1, 12))
  if moved then
    tau = tau or (tonumber(tn[1]) or DEFAULT_ADAPT_RECOVER_MS) * 1000
    redis.call('HSET', H, 'ad', string.format(ADFMT, base[1], t[1], base[2], t[2], tau, a[6] or 0,
      a[7] or 0, a[8] or 0, a[9] or 0, a[10] or 0))
    fr, ft = f[1], f[2]
  end
end
Cr, Ct = Cr * fr, Ct * ft  -- L1 refill and the tag correction at the learned caps
local dr, dt = areq - dreq, atok - dtok
if Ct == 0 or refused then dt = 0 end
if refused then dr = 0 end

-- Reservation mode: O ('rsv') is the max_tokens reserved beyond
-- the prompts by calls not yet released; the ZSET bp:{target}:rsv holds one
-- "<ticket> <tokens>" entry per such call, scored by its ticket's expiry.
-- This ticket's part leaves O, and so do expired tickets (a worker that died
-- mid-call): at most 8 per release, so O never keeps a dead reservation.
local extra = math.max(0, dtok - ttok)
local O = tonumber(s[9]) or 0
if extra > 0 or O > 0 then
  if extra > 0 and redis.call('ZREM', RSV, ARGV[1] .. ' ' .. string.format('%d', extra)) == 0 then
    extra = 0  -- not counted (issued before a reset): nothing to take out
  end
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', RSV, '-inf', now, 'LIMIT', 0, 8)) do
    O = O - (tonumber(string.match(m, ' (%d+)$')) or 0)
    redis.call('ZREM', RSV, m)
  end
  O = math.max(0, O)
end

-- L1: refill to now, then apply the signed difference (may go below zero:
-- a debt that later admissions wait out). The token level tops out at
-- capt + O (admit.lua), O still counting this call; then the call leaves O.
-- So a refund that finds the bucket at capt is kept as credit, up to the
-- call's reserved part, that the next admissions spend (clipped at capt,
-- most refunds of a 0.1 s bucket would be lost), and the level stays within
-- capt + O + the largest max_tokens (P1 bound: gate.h). Outside reservation
-- mode O = 0: the plain bucket, clipped at capt.
local r, t, ts, V, Dr, Dt, seq, evt = rec(GREC, GLEN, s[2])
r, t, ts = r or capr, t or capt, ts or now
local el = math.max(0, now - ts)
r = math.min(capr, r + Cr * el / 1e6 - dr)
t = math.min(capt + O, t + Ct * el / 1e6 - dt)
local hw = {'g', struct.pack(GREC, 1, r, t, math.max(ts, now), V or 0, Dr or 0, Dt or 0, seq or 0,
  evt or 0)}
local c = {rec(CREC, CLEN, s[4])}
for i = 1, 9 do c[i] = c[i] or 0 end
c[1], c[2] = c[1] + dr, c[2] + dt
hw[3], hw[4] = 'c:' .. k, struct.pack(CREC, 1, unpack(c))
if COUNTERS then  -- the class's counters (prelude.lua, NTAIL)
  local cnt = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
  if s[4] and #s[4] >= CLEN + NLEN and string.byte(s[4]) == 1 then
    cnt = {struct.unpack(NTAIL, s[4], CLEN + 1)}
  end
  cnt[9] = cnt[9] + 1
  if refused then
    cnt[13] = cnt[13] + 1
  else
    cnt[10] = cnt[10] + atok
    cnt[11], cnt[12] = cnt[11] + math.max(0, dtok - atok), cnt[12] + math.max(0, atok - dtok)
  end
  hw[4] = hw[4] .. struct.pack(NTAIL, unpack(cnt, 1, 13))
end

-- L3: the queue's tag moves by the change in its dominant share.
local qF, qT, qdr, qdt, qbl, qzs, qna, qnd, qnl, qw = rec(QREC, QLEN, s[3])
if qF then
  local function sig(req, tok)
    local x = req / Cr
    if abl ~= '1' and Ct > 0 then x = math.max(x, tok / Ct) end
    return x
  end
  -- The queue's weight as admit.lua takes it (w_q, with W_k from the class).
  local tw = tenant_weight(s[5])
  local w = tw * class_weight(s[6], abl == '2')
  if flat ~= 1 then
    local W = c[4]
    if qbl ~= 1 then W = c[4] + tw elseif qw ~= tw then W = c[4] - qw + tw end
    w = w / W
  end
  local dF = (sig(areq, atok) - sig(dreq, ttok)) / w
  if refused then dF = -sig(dreq, ttok) / w end
  if dF ~= 0 then
    qF = qF + dF
    hw[5], hw[6] = 'q:' .. qid, struct.pack(QREC, 1, qF, qT, qdr, qdt, qbl, qzs, qna, qnd, qnl, qw)
    redis.call('ZADD', BL, 'XX', qF, qid)  -- only if backlogged
  end
end
if extra > 0 or O ~= (tonumber(s[9]) or 0) then
  hw[#hw + 1], hw[#hw + 2] = 'rsv', string.format('%d', math.max(0, O - extra))
end
if ahw then hw[#hw + 1], hw[#hw + 2] = 'ah', ahw end
redis.call('HSET', H, unpack(hw))
return 1
