-- prelude.lua - the one owner of the gate's key schema (docs/gate.md "Key schema").
--
-- The build puts this text in front of admit.lua, release.lua,
-- configure.lua, reset_buckets.lua and state.lua (cmake/EmbedFiles.cmake,
-- PRELUDE): one Lua chunk, so each script sees the locals below. A script
-- listed in parts.txt is several files, joined in its order behind this
-- text into the same one chunk (admit.lua, then admit_decision.lua); the
-- clients build the same text (docs/protocol.md). Here and
-- only here: the key names, the layout of the packed records and their
-- decoding, the tuning defaults, the tenant-name rule and the queue weight
-- rule. C++ decodes none of them (bp::Gate reads through state.lua, which
-- answers named fields). It runs on every call, so it only defines (eight
-- closures, no tables) and checks KEYS[1]; it calls no command.

-- The protocol version (docs/protocol.md): keys, arguments and replies of
-- these scripts. A client refuses scripts of another version (bp::kGateProtocolVersion).
local PROTOCOL_VERSION = 1  -- luacheck: ignore (read by clients from this text)

---------------------------------------------------------------- keys
-- KEYS[1] = "bp:{T}:state", the target's state hash, is the one key every
-- script declares (it exists while the target is configured). The others
-- are named from it and share its hash tag {T}, hence its cluster slot:
-- "bp:{T}:bl", ":bx", ":seen", ":rsv" (reservation mode's outstanding
-- reservations) and the tickets ":tk:<n>" (whose numbers
-- admit.lua picks, so they cannot be declared beforehand). Declaring the
-- zsets too would make a slot migration answer TRYAGAIN whenever one of them
-- is empty (absent), so they are not.
local H = KEYS[1]
if type(H) ~= 'string' or string.sub(H, -6) ~= ':state' then
  return redis.error_reply('ERR bp: KEYS[1] must be the state key bp:{<target>}:state')
end
local P = string.sub(H, 1, -7)  -- "bp:{T}"
local BL, BX, SEEN, RSV = P .. ':bl', P .. ':bx', P .. ':seen', P .. ':rsv'

---------------------------------------------------------------- records
-- The hot records of the state hash are struct-packed little-endian doubles
-- after a format byte 1 (exact, and about ten times cheaper than formatting
-- and parsing decimal text, which dominated the script's cost). An absent or
-- foreign value (another length or format byte) reads as absent: nil values.
--   g       = r t ts_us V Dr Dt seq evt_us    L1 levels (requests, tokens),
--             their refill time, the virtual time V, eq. (1) sums D_r and D_t,
--             the ticket counter, the last eviction pass
--   q:<id>  = F T_us ar at bl zs_us admits defers lent w    queue (k,
--             tenant): tag, promised wake-up, its tenant-level share of its
--             class's eq. (1) sums (w_t c_d / sigma), backlogged (1/0), last
--             seen, counters, the tenant weight w_t it added to the class's W
--   c:<k>   = requests tokens n W Ar At Er Et U    class k: admitted
--             requests and tokens (release-corrected); its n backlogged
--             tenants, the sum W of their weights w_t, the sums A_d of their
--             ar, at, E_d, the class's part of D_d: omega_k A_d / W (flat:
--             omega_k A_d), and U, the latest wake-up + grace promised to
--             its queues (class_policy strict: eligible while U > now)
--   cfg     = Cr Ct burst omega_sum lend slack_ms grace_ms ticket_ttl_ms
--             max_cost_requests max_cost_tokens adapt K flat strict, then
--             omega_1..omega_K (K more doubles)    what admit.lua reads,
--             rebuilt by configure.lua from the fields below with the
--             defaults applied (omega_sum 0 = no priority weights, max cost
--             0 = the default, one minute of cap, adapt 1 = on, K = classes,
--             flat 1 = share_rule flat, strict 1 = class_policy strict)
--   c:<k> then carries, after its CLEN bytes, the class's counters (NTAIL,
--             NLEN bytes, no format byte): running totals for operators
--             (bpctl metrics), outside the decision: no rule reads them, so
--             a record without them (written by an older script) reads as
--             zeros and the model (gate_model.h) leaves them out. In order:
--             admits, admitted requests, admitted tokens (the L1 debit),
--             lent admits, defers by binding (fair, l1:requests, l1:tokens,
--             strict), releases, released tokens (actual), refunded tokens
--             (debited - actual > 0), surcharged tokens (actual - debited >
--             0), refused releases ("429"/"refused")
--   l1hold  = until_us F needr needt, then the queue id    the L1 holder
--             (admit.lua): a due caller waiting for L1 until until_us, its
--             finish tag and its L1 need per dimension
--   l1line  = r_us t_us    the L1 line's end per dimension (admit.lua): L1's
--             refill up to then is promised to callers deferred for L1
local GREC, GLEN = '<Bdddddddd', 65
local QREC, QLEN = '<Bdddddddddd', 81
local CREC, CLEN = '<Bddddddddd', 73
local HOLDREC, HOLDLEN = '<Bdddd', 33  -- l1hold = until_us F needr needt, then the queue id
local LINEREC, LINELEN = '<Bdd', 17  -- l1line = r_us t_us
local CFGREC, CFGLEN = '<Bdddddddddddddd', 113  -- the fixed part; omega_k at CFGLEN + 1 + 8(k-1)
local NTAIL, NLEN = '<ddddddddddddd', 104  -- c:<k>'s 13 counters, after its CLEN bytes
-- ah = per dimension (requests, then tokens) ra ea_us rsta_ms u xo k: the
--      adaptive caps' header rule (release.lua only): the remaining budget,
--      reset instant (server time) and reset of the first answer of the
--      provider's current window, the cost of the served calls released
--      since that answer, the outside rate (per s) last measured, and the
--      margin k (release.lua: the factor, in [1, HEADER_MARGIN_MAX], by which
--      the cap sits above the rate left; 0 on a dimension never anchored)
local AHREC, AHLEN = '<Bdddddddddddd', 97
local HEADER_MARGIN_MAX = 2
-- The counters are kept when COUNTERS is true (bench/gate_bench.cpp times
-- the scripts with it false, to measure what they cost). Rare events count
-- in text fields by HINCRBY: 'n:rejects_priority', 'n:rejects_too_large'
-- (admit.lua's REJECTs), 'n:drops_requests', 'n:drops_tokens' (AIMD's
-- learned-cap decreases on 429s, release.lua; the header rule's moves are
-- continual and not counted).
-- NTAIL's names in order, as state.lua answers them (one constant, no concatenation):
local NNAMES = [[admits admitted_requests admitted_tokens lent defers_fair defers_l1_requests
defers_l1_tokens defers_strict releases released_tokens refunded_tokens surcharged_tokens refused]]
local COUNTERS = true
-- The values of record s in the order above, or nothing when s is absent or
-- foreign: rec(GREC, GLEN, s). Writing one: struct.pack(GREC, 1, values...).
-- (Helpers are few on purpose: every function here is a closure made anew
-- on each call, and closures and their garbage cost measurably.)
local function rec(fmt, len, s)
  if s and #s >= len and string.byte(s) == 1 then return select(2, struct.unpack(fmt, s)) end
end

-- Text fields (rarely written): 'ad' (adaptive caps, release.lua) =
-- "fr tr_us ft tt_us tau_us ws_us nr nt hr_us ht_us"; a ticket (bp:{T}:tk:<n>) = "<k> <requests>
-- <tokens debited> <ablation 0|1|2> <queue id> <tokens on the tag>".
local ADFMT = '%.17g %d %.17g %d %d %d %d %d %d %d'
local ADPAT = '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$'
local function ad_unpack(s)  -- the ten numbers of 'ad', or nil
  if not s then return end
  local v = {string.match(s, ADPAT)}
  if #v ~= 10 then return end
  for i = 1, 10 do v[i] = tonumber(v[i]) end
  return v
end
-- The learned fraction of a cap at time now: f recovers linearly, by
-- (now - t) / tau, up to 1; 1 when nothing is learned.
local function learned(f, t, tau, now)
  if not f or not tau or tau <= 0 then return 1 end
  return math.min(1, f + math.max(0, now - t) / tau)
end

---------------------------------------------------------------- defaults
-- Tuning defaults for fields never set (bp::GateTuning mirrors them; a test
-- compares): configure.lua puts them into cfg, release.lua and state.lua
-- read them here.
local DEFAULT_BURST_S, DEFAULT_LEND_FRACTION, DEFAULT_SLACK_MS = 1, 0.5, 50
local DEFAULT_GRACE_MS, DEFAULT_TICKET_TTL_MS, DEFAULT_QUEUE_TTL_MS = 200, 600000, 10000
local DEFAULT_ADAPT_BETA, DEFAULT_ADAPT_RECOVER_MS = 0.7, 120000
local DEFAULT_ADAPT_WINDOW_MS, DEFAULT_ADAPT_MIN_429 = 2000, 4

---------------------------------------------------------------- rules
-- Tenant ids: 1-128 bytes of [A-Za-z0-9_.-] (bp::ValidTenantName mirrors
-- this rule; a test compares the two on every byte and on lengths).
local TENANT_RULE = '[A-Za-z0-9_.-]{1,128}'
local function valid_tenant(t)
  return type(t) == 'string' and #t >= 1 and #t <= 128 and not string.find(t, '[^A-Za-z0-9_.%-]')
end
-- Weights (paper eq. 1; docs/gate.md "The rule"). tenant_weight: w_t =
-- tw:<tenant>, default 1. class_weight: omega_k (cfg's omega_k; 1 when
-- absent or under the no-priority ablation). A weight <= 0 counts as 1e-9.
-- queue_weight: w_t * omega_k, the product the flat share rule uses (the
-- hierarchical rule divides it by W, the summed w_t of the class's
-- backlogged tenants: admit.lua).
local function tenant_weight(tw)
  local w = tonumber(tw) or 1
  if w <= 0 then w = 1e-9 end
  return w
end
local function class_weight(omega, no_priority)
  local o = 1
  if not no_priority then o = tonumber(omega) or 1 end
  if o <= 0 then o = 1e-9 end
  return o
end
local function queue_weight(tw, omega, no_priority)
  return tenant_weight(tw) * class_weight(omega, no_priority)
end
-- Server time in integer microseconds.
local function server_us()
  local tm = redis.call('TIME')
  return tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
