-- wrk script: POSTs one JSON-RPC body (BENCH_BODY) to an MCP endpoint, with the session header
-- when BENCH_SESSION is set and any extra headers in BENCH_HEADERS ("Name: value" lines), then
-- prints one "WRK_JSON {...}" line the bench parses (bench/wrk.ts). With BENCH_EXPECT set, every
-- answer's body must contain that text; the others are counted as "wrong".
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"

local session = os.getenv("BENCH_SESSION")
if session ~= nil and session ~= "" then
  wrk.headers["Mcp-Session-Id"] = session
  wrk.headers["MCP-Protocol-Version"] = os.getenv("BENCH_PROTOCOL") or "2025-11-25"
end

for line in (os.getenv("BENCH_HEADERS") or ""):gmatch("[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.-)%s*$")
  if name == nil then error("BENCH_HEADERS: not a 'Name: value' line: " .. line) end
  wrk.headers[name] = value
end

-- Only defined when asked for: wrk hands bodies to Lua only when a response() function exists.
local expect = os.getenv("BENCH_EXPECT")
wrong = 0
if expect ~= nil and expect ~= "" then
  function response(status, headers, body)
    if body == nil or not body:find(expect, 1, true) then wrong = wrong + 1 end
  end
end

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local e = summary.errors
  local bad = 0
  for _, thread in ipairs(threads) do bad = bad + (thread:get("wrong") or 0) end
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"wrong":%d},' ..
      '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout, bad,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
