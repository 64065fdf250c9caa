-- binary_trees.lua - the real allocation-heavy program of bench/alloc-overhead,
-- run on Debian's lua5.4 (which allocates only through realloc and free: its
-- l_alloc calls realloc(NULL, n) for every new object and free for every
-- collected one). The classic binary-trees benchmark: build and check
-- 2^depth-node trees of small tables many times over, one long-lived tree
-- alongside. Prints "elapsed_ns=N" to stderr, timing only the work (Lua's
-- os.clock is CPU time of the process, so the wall time comes from the
-- calling script's clock around the whole run; this is the work's CPU time).
-- usage: lua5.4 binary_trees.lua [MAX_DEPTH]

local function bottom_up(depth)
  if depth == 0 then
    return {}
  end
  depth = depth - 1
  return { bottom_up(depth), bottom_up(depth) }
end

local function check(tree)
  if tree[1] then
    return 1 + check(tree[1]) + check(tree[2])
  end
  return 1
end

local start = os.clock()
local max_depth = tonumber(arg and arg[1]) or 16
local min_depth = 4
if max_depth < min_depth + 2 then max_depth = min_depth + 2 end

io.write(string.format("stretch tree of depth %d\t check: %d\n", max_depth + 1, check(bottom_up(max_depth + 1))))
local long_lived = bottom_up(max_depth)
for depth = min_depth, max_depth, 2 do
  local iterations = 2 ^ (max_depth - depth + min_depth)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + check(bottom_up(depth))
  end
  io.write(string.format("%d\t trees of depth %d\t check: %d\n", iterations, depth, sum))
end
io.write(string.format("long lived tree of depth %d\t check: %d\n", max_depth, check(long_lived)))
io.stderr:write(string.format("elapsed_ns=%d\n", math.floor((os.clock() - start) * 1e9)))
