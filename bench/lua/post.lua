-- wrk script: POSTs one JSON-RPC body (BENCH_BODY) to an MCP endpoint, with the session header
-- when BENCH_SESSION is set and any extra headers in BENCH_HEADERS ("Name: value" lines), then
-- prints one "WRK_JSON {...}" line the bench parses (bench/wrk.ts).
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

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
