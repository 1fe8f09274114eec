-- wrk: one verdict a request, from a list of "TOKEN PATH" lines (AB_LIST), shared out
-- between wrk's threads (AB_THREADS of them) so that no verdict is sent twice. A list
-- used up repeats its last line (a cheaper request): benches/ab.sh warns when a load
-- sent as many requests as its list holds.
local lines = {}
for l in io.lines(os.getenv("AB_LIST")) do
  local tok, path = l:match("^(%S+) (%S+)$")
  if tok then lines[#lines + 1] = { tok, path } end
end
local threads, made = tonumber(os.getenv("AB_THREADS") or "1"), 0

function setup(thread)
  thread:set("id", made)
  made = made + 1
end

local i
local body = '{"verdict":"valid"}'
function request()
  i = (i or id + 1 - threads) + threads
  local l = lines[i] or lines[#lines]
  return wrk.format("POST", l[2], {
    ["Authorization"] = "Bearer " .. l[1],
    ["Content-Type"] = "application/json",
  }, body)
end
