-- report_min.lua: the peers' net/report.lua, plus the fastest response's latency.
--
-- Loaded by bench/http/wrk-min-latency in place of report.lua (path in
-- SATURN_WRK_REPORT). It runs report.lua unchanged and appends ,"min_us":M (wrk's
-- latency.min, microseconds) to the WRK_JSON line that report.lua's done() prints.
-- latency.min is the smallest latency wrk recorded; the samples wrk adds afterwards to
-- correct for coordinated omission never change it.

local report = os.getenv("SATURN_WRK_REPORT")
if report == nil or report == "" then
   error("report_min.lua: SATURN_WRK_REPORT (the path of report.lua) is not set")
end
dofile(report)

local report_done = done
if type(report_done) ~= "function" then
   error("report_min.lua: " .. report .. " defines no done()")
end

done = function(summary, latency, requests)
   local out = {}
   local write = io.write
   io.write = function(...)
      for _, s in ipairs({...}) do out[#out + 1] = tostring(s) end
   end
   local ok, err = pcall(report_done, summary, latency, requests)
   io.write = write
   if not ok then error(err) end
   local text, n = table.concat(out):gsub("(WRK_JSON [^\n]*)",
      function(line) return line .. string.format(',"min_us":%.1f', latency.min) end, 1)
   if n ~= 1 then
      io.stderr:write("report_min.lua: report.lua printed no WRK_JSON line\n")
   end
   io.write(text)
end
