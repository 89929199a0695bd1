-- arena.lua: the arena suite's request mixes (HttpArena's profiles, docs/arena.md §2, §4).
--   wrk -t T -c C -d Ds -s arena.lua http(s)://127.0.0.1:P/ -- MODE [ARG]
-- MODE:
--   baseline       GET /baseline11, POST with Content-Length, POST chunked, in turn
--   limited-conn   baseline's three, every 10th request with Connection: close (the
--                  server closes after answering and wrk reconnects: HttpArena's -r 10)
--   json           /json/{1,5,10,15,25,40,50}?m=... in turn (json-tls uses it too)
--   json-comp      /json/{25,40,50}?m=... with Accept-Encoding: gzip, br
--   upload N       POST /upload with an N-byte body (default 2 MiB)
--   static         the 20 files of /static in HttpArena's order, each request with
--                  Accept-Encoding: br;q=1, gzip;q=0.8 (as its static-rotate.lua)
--   async-db       GET /async-db?min=10&max=50&limit={5,10,20,35,50} in turn (HttpArena's
--                  rotation)
--   crud           HttpArena's crud mix, drawn per request: 75% GET /crud/items/{1..50000},
--                  15% PUT /crud/items/{1..50000}, 5% GET /crud/items?category=office&
--                  page={1..10}&limit=10, 5% POST /crud/items with ids counting up from
--                  100001 (an insert, then upserts once the run wraps around)
-- The values vary (a, b, m) so no answer can be cached; scripts/bench checks one answer
-- of every kind before the load. wrk's request() runs per thread: each thread cycles
-- through the mix, so the connections of a thread share it.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local result = dofile(dir .. "result.lua")

local reqs = {}
local n = 0
local dynamic = nil  -- a function making each request (crud), else reqs in turn

local function raw(lines, body)
   return table.concat(lines, "\r\n") .. "\r\n\r\n" .. (body or "")
end

local function host()
   return "Host: " .. (wrk.host or "127.0.0.1") .. ":" .. tostring(wrk.port or 80)
end

local function baseline(close_every)
   local out = {}
   for i = 1, 30 do
      local a, b = 10 + i, 40 + (i * 7) % 50
      local path = string.format("/baseline11?a=%d&b=%d", a, b)
      local close = (close_every and i % close_every == 0) and "Connection: close" or nil
      local k = i % 3
      local lines
      if k == 1 then
         lines = { "GET " .. path .. " HTTP/1.1", host() }
         if close then lines[#lines + 1] = close end
         out[#out + 1] = raw(lines)
      elseif k == 2 then
         local body = tostring(i)
         lines = { "POST " .. path .. " HTTP/1.1", host(), "Content-Length: " .. #body }
         if close then lines[#lines + 1] = close end
         out[#out + 1] = raw(lines, body)
      else
         local body = tostring(i)
         lines = { "POST " .. path .. " HTTP/1.1", host(), "Transfer-Encoding: chunked" }
         if close then lines[#lines + 1] = close end
         out[#out + 1] = raw(lines, string.format("%x\r\n%s\r\n0\r\n\r\n", #body, body))
      end
   end
   return out
end

local JSON = { { 1, 3 }, { 5, 7 }, { 10, 2 }, { 15, 5 }, { 25, 4 }, { 40, 8 }, { 50, 6 } }
local JSON_COMP = { { 25, 4 }, { 40, 8 }, { 50, 6 } }
local STATIC = { "reset.css", "layout.css", "theme.css", "components.css", "utilities.css",
                 "analytics.js", "helpers.js", "app.js", "vendor.js", "router.js",
                 "header.html", "footer.html", "regular.woff2", "bold.woff2", "logo.svg",
                 "icon-sprite.svg", "hero.webp", "thumb1.webp", "thumb2.webp", "manifest.json" }

local PUT_BODY = '{"name":"Updated Product","category":"test","price":200,"quantity":25}'
local post_id = 100000

local function crud()
   local k = math.random(20)
   if k <= 15 then
      return raw({ string.format("GET /crud/items/%d HTTP/1.1", math.random(50000)), host() })
   elseif k <= 18 then
      return raw({ string.format("PUT /crud/items/%d HTTP/1.1", math.random(50000)), host(),
                   "Content-Type: application/json", "Content-Length: " .. #PUT_BODY }, PUT_BODY)
   elseif k == 19 then
      return raw({ string.format("GET /crud/items?category=office&page=%d&limit=10 HTTP/1.1", math.random(10)),
                   host() })
   end
   post_id = post_id + 1
   local body = string.format('{"id":%d,"name":"New Product","category":"test","price":150,"quantity":30}',
                              post_id)
   return raw({ "POST /crud/items HTTP/1.1", host(), "Content-Type: application/json",
                "Content-Length: " .. #body }, body)
end

init = function(args)
   local mode = args[1] or "json"
   if mode == "baseline" then
      reqs = baseline(nil)
   elseif mode == "limited-conn" then
      reqs = baseline(10)
   elseif mode == "json" then
      for _, v in ipairs(JSON) do
         reqs[#reqs + 1] = raw({ string.format("GET /json/%d?m=%d HTTP/1.1", v[1], v[2]), host() })
      end
   elseif mode == "json-comp" then
      for _, v in ipairs(JSON_COMP) do
         reqs[#reqs + 1] = raw({ string.format("GET /json/%d?m=%d HTTP/1.1", v[1], v[2]), host(),
                                 "Accept-Encoding: gzip, br" })
      end
   elseif mode == "upload" then
      local size = tonumber(args[2]) or 2097152
      reqs[1] = raw({ "POST /upload HTTP/1.1", host(), "Content-Length: " .. size },
                    string.rep("u", size))
   elseif mode == "static" then
      for _, f in ipairs(STATIC) do
         reqs[#reqs + 1] = raw({ "GET /static/" .. f .. " HTTP/1.1", host(),
                                 "Accept-Encoding: br;q=1, gzip;q=0.8" })
      end
   elseif mode == "async-db" then
      for _, limit in ipairs({ 5, 10, 20, 35, 50 }) do
         reqs[#reqs + 1] = raw({ string.format("GET /async-db?min=10&max=50&limit=%d HTTP/1.1", limit), host() })
      end
   elseif mode == "crud" then
      -- Each thread its own random sequence (wrk gives every thread a fresh Lua state).
      math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
      dynamic = crud
   else
      error("arena.lua: unknown mode " .. mode)
   end
end

request = function()
   if dynamic then return dynamic() end
   n = n % #reqs + 1
   return reqs[n]
end

done = result.done
