-- result.lua: the one line scripts/bench reads from a wrk run, shared by report.lua
-- and pipeline.lua (loaded with dofile from the directory of the calling script).
--
--   WRK_RESULT {"requests":N,"duration_s":D,"rps":R,"p50_us":..,"p90_us":..,"p99_us":..,
--               "p999_us":..,"max_us":..,"min_us":..,"errors":E,"non2xx":X,"bytes":B}
--
-- errors = connect + read + write + timeout errors; non2xx = responses whose status was
-- not 2xx or 3xx (wrk's summary.errors.status); bytes = response bytes read, headers
-- included (summary.bytes). min_us is the fastest response's latency:
-- a /delay/{ms} answer faster than ms was sent early (checked by scripts/bench).
-- wrk's coordinated-omission correction may add samples below latency.min, after which
-- percentile() can return 0 for a high percentile; such a value is printed as null
-- rather than as a latency nobody saw.

local M = {}

local function pct(latency, p)
   local v = latency:percentile(p)
   if v == 0 and latency.max > 0 then return "null" end
   return string.format("%.1f", v)
end

function M.done(summary, latency, requests)
   local e = summary.errors
   local fastest = latency.max > 0 and string.format("%.1f", latency.min) or "null"
   local secs = summary.duration / 1e6
   io.write(string.format(
      'WRK_RESULT {"requests":%d,"duration_s":%.3f,"rps":%.1f,' ..
      '"p50_us":%s,"p90_us":%s,"p99_us":%s,"p999_us":%s,"max_us":%.1f,"min_us":%s,' ..
      '"errors":%d,"non2xx":%d,"bytes":%d}\n',
      summary.requests, secs, secs > 0 and summary.requests / secs or 0,
      pct(latency, 50), pct(latency, 90), pct(latency, 99), pct(latency, 99.9),
      latency.max, fastest, e.connect + e.read + e.write + e.timeout, e.status, summary.bytes))
end

return M
