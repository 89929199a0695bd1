-- pipeline.lua: HTTP/1.1 pipelining, the TechEmpower plaintext shape. Each connection
-- writes DEPTH requests in one write and reads the DEPTH responses before writing the
-- next batch; wrk counts each response as a request, and a response's latency runs
-- from the write of its batch (so percentiles are per batch, indicative only).
--   wrk -t T -c C -d Ds -s pipeline.lua http://127.0.0.1:P/plaintext -- [DEPTH]  (16)
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local result = dofile(dir .. "result.lua")

local batch

init = function(args)
   local depth = tonumber(args[1]) or 16
   local reqs = {}
   for i = 1, depth do
      reqs[i] = wrk.format()
   end
   batch = table.concat(reqs)
end

request = function()
   return batch
end

done = result.done
