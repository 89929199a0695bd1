-- report.lua: one request at a time per connection (wrk's default), and the result
-- line of result.lua at the end. Used by the http suite's json and delay scenarios:
--   wrk -t T -c C -d Ds -s report.lua http://127.0.0.1:P/json
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local result = dofile(dir .. "result.lua")

done = result.done
