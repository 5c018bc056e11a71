-- DeepShare's submission gate for Slurm 22.05 (job_submit/lua; docs/slurm.md §2).
--
-- Install: this file as job_submit.lua next to slurm.conf, deepshare_gate.conf beside it,
-- and JobSubmitPlugins=lua in slurm.conf. slurmctld reloads the script when it changes.
--
-- What it does, for jobs of DeepShare's partitions (`partitions` in deepshare_gate.conf):
--  1. Reads the GPU request in every form sbatch/salloc/srun accept (--gres=gpu[:MODEL]:N,
--     --gpus-per-node, -G/--gpus, --gpus-per-task with -n, --comment=ds:gpus=N) and turns
--     it into one request: G GPUs on each of N nodes, where a job fits one node
--     (G <= gpus_per_node, N = 1) or takes whole nodes (G = gpus_per_node). Anything else
--     is refused with a message that says what to write instead.
--  2. Takes the GPU request out of the job's TRES fields (DeepShare adds the GRES of the
--     GPUs it chooses when it starts the job: Slurm 22.05 cannot change a GRES request once
--     set) and records the request in the job's AdminComment, which only operators can
--     write: "ds:v=1;gpus=..;n=..;nr=..;[mem=..;u=..;begin=..;trace=..;gm=..]". A GPU model
--     (--gres=gpu:MODEL:N, or --constraint=MODEL / A|B) must be one of the partitions'
--     gpu_model list; it goes into gm= (DeepShare places the job on nodes of that model).
--  3. Parks the job: BeginTime 2100-01-01 (the user's --begin is kept in the AdminComment).
--     Slurm never starts a parked job but still evaluates its dependencies, so DeepShare
--     sees when a job becomes eligible; --hold keeps working as a user hold.
--  4. Marks jobs that cannot be preempted (--no-requeue, interactive allocations) with nr=1:
--     DeepShare never runs them on borrowed GPUs.
--  5. On `scontrol update` by a non-operator it refuses changes that would bypass DeepShare
--     (GRES, node counts, node lists, partition, account, requeue flag, pin keys in the
--     comment) and turns a new StartTime into the AdminComment's begin (the job stays parked).
-- For other partitions it refuses what only DeepShare may request (the gpushare GRES, the
-- per-index GPU types g0..gN) and turns --gres=gpu:MODEL:N of a listed model into gpu:N (on
-- DeepShare's nodes GPU types name indices, so model names would not match).
--
-- Assumptions: Slurm 22.05 job_submit/lua (fields unset in an update are nil, NO_VAL or
-- NO_VAL16; begin_time 0); Lua 5.1. A failure inside the gate refuses the job (fail closed).
-- The rules live in the table `gate`, which tests/slurm/gate_test.lua drives without Slurm.

local gate = {}

gate.PARK = 4102444800 -- 2100-01-01T00:00:00Z: "waiting for DeepShare"
local NO_VAL = 4294967294
local NO_VAL16 = 65534
-- Slurm 22.05 error codes (slurm_errno.h), returned so that the last line the user sees
-- names the kind of problem; the gate's own message comes before it.
gate.E = {
  INVALID_PARTITION = 2000,
  ACCESS_DENIED = 2002,
  INVALID_NODE_COUNT = 2006,
  JOB_HELD = 2042,
  INVALID_ACCOUNT = 2045,
  INVALID_GRES = 2072,
}
-- The keys of DeepShare's record, one line each: who writes it (user: in --comment at
-- submit; gate: here; pin: the controller), the kind of value and its range. This table is
-- the one definition of a valid record value: the controller's build reads these lines
-- (src/slurm/record_keys.cmake generates src/slurm/record.cpp's table from them), so that
-- the gate never accepts what the controller would refuse. Kinds: int (decimal digits, a
-- leading '-' only where min < 0), num (digits with an optional '.' and fraction), flag (0
-- or 1), name (letters, digits, '.', '_', '-'), models (names separated by '|': "A" or
-- "A|B", each one of them allowed), text (no ';'), gpus (node@i,j/node@k).
-- BEGIN RECORD KEYS
gate.KEYS = {
  v = { writer = "gate", kind = "int", min = 1, max = 1 },
  gpus = { writer = "user", kind = "int", min = 1, max = 4096 },
  n = { writer = "gate", kind = "int", min = 1, max = 4096 },
  nr = { writer = "gate", kind = "flag", min = 0, max = 1 },
  mem = { writer = "user", kind = "num", min = 1, max = 1048576 },
  u = { writer = "user", kind = "num", min = 0, max = 100 },
  begin = { writer = "gate", kind = "int", min = 0, max = 1099511627776 },
  trace = { writer = "user", kind = "name", min = 0, max = 0 },
  gm = { writer = "gate", kind = "models", min = 0, max = 0 },
  r = { writer = "pin", kind = "int", min = 0, max = 1073741824 },
  b = { writer = "pin", kind = "flag", min = 0, max = 1 },
  s = { writer = "pin", kind = "flag", min = 0, max = 1 },
  g = { writer = "pin", kind = "gpus", min = 0, max = 63 },
  m = { writer = "pin", kind = "int", min = 1, max = 100 },
  l = { writer = "pin", kind = "int", min = 0, max = 1073741824 },
  t = { writer = "pin", kind = "int", min = -1125899906842624, max = 1125899906842624 },
  p = { writer = "pin", kind = "int", min = 0, max = 1073741824 },
  x = { writer = "pin", kind = "text", min = 0, max = 0 },
  e = { writer = "pin", kind = "int", min = 1, max = 1125899906842624 },
}
-- END RECORD KEYS
local USER_KEYS, PIN_KEYS, GATE_KEYS = {}, {}, {}
for k, spec in pairs(gate.KEYS) do
  local set = spec.writer == "user" and USER_KEYS or (spec.writer == "gate" and GATE_KEYS or PIN_KEYS)
  set[k] = true
end

-- "A" or "A|B": GPU model names (the name grammar), none empty.
function gate.is_models(v)
  if v == nil or v == "" then
    return false
  end
  for name in string.gmatch(v .. "|", "([^|]*)|") do
    if not name:match("^[%w%._%-]+$") then
      return false
    end
  end
  return true
end

-- The value of key k checked against gate.KEYS: the number (or the text), or nil + why.
function gate.check_value(k, value)
  local spec = gate.KEYS[k]
  if spec == nil then
    return nil, "unknown key"
  end
  local v = value or ""
  if spec.kind == "int" then
    local ok = v:match("^%d+$") or (spec.min < 0 and v:match("^%-%d+$"))
    if not ok then
      return nil, "expected a whole number"
    end
  elseif spec.kind == "num" then
    if not (v:match("^%d+%.?%d*$") or v:match("^%.%d+$")) then
      return nil, "expected a number"
    end
  elseif spec.kind == "flag" then
    if v ~= "0" and v ~= "1" then
      return nil, "expected 0 or 1"
    end
    return tonumber(v), nil
  elseif spec.kind == "name" then
    if not v:match("^[%w%._%-]+$") then
      return nil, "may hold letters, digits, '.', '_' and '-' only"
    end
    return v, nil
  elseif spec.kind == "models" then
    if not gate.is_models(v) then
      return nil, "GPU model names (letters, digits, '.', '_', '-') separated by '|'"
    end
    return v, nil
  else
    return v, nil -- text, gpus: written by the controller only
  end
  local n = tonumber(v)
  if n == nil or n < spec.min or n > spec.max then
    return nil, "expected " .. string.format("%d..%d", spec.min, spec.max)
  end
  return n, nil
end

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function split(s, sep)
  local out = {}
  if s == nil or s == "" then
    return out
  end
  for part in string.gmatch(s, "[^" .. sep .. "]+") do
    local t = trim(part)
    if t ~= "" then
      out[#out + 1] = t
    end
  end
  return out
end

-- gpu_model = "a100, v100": the models in order and as a set; nil + why for a bad name.
local function read_models(c, v)
  c.gpu_models, c.gpu_model_set = {}, {}
  for _, m in ipairs(split(v, ",")) do
    if not m:match("^[%w%._%-]+$") or m:match("^g%d+$") then
      return "gpu_model: '" .. m .. "' is not a model name (letters, digits, '.', '_', '-';"
        .. " g0..gN name GPU indices)"
    end
    c.gpu_models[#c.gpu_models + 1] = m
    c.gpu_model_set[m] = true
  end
  return nil
end

-- gpu_memory_mib = "81920" (every model) or "a100:81920, v100:32768" (per model; the largest
-- bounds a job without a model). nil + why when malformed.
local function read_memory(c, v)
  c.model_memory = {}
  if v:match("^%d+$") then
    c.gpu_memory_mib = tonumber(v)
    return nil
  end
  local most = nil
  for _, e in ipairs(split(v, ",")) do
    local m, mib = e:match("^([^:%s]+)%s*:%s*(%d+)$")
    if not m then
      return "gpu_memory_mib: expected MiB or MODEL:MiB, not '" .. e .. "'"
    end
    c.model_memory[m] = tonumber(mib)
    most = math.max(most or 0, tonumber(mib))
  end
  c.gpu_memory_mib = most or c.gpu_memory_mib
  return nil
end

-- deepshare_gate.conf: "key = value" lines, '#' comments.
function gate.load_conf(path)
  local c = {
    partitions = { batch = true },
    gpus_per_node = 8,
    gpu_models = {}, -- the partitions' GPU models (gpu_model = a100, v100), in order
    gpu_model_set = {},
    gpu_memory_mib = 81920,
    model_memory = {}, -- MiB per model where gpu_memory_mib lists them
    operators = { [0] = true },
    require_association = true,
    max_gpus = nil,
  }
  local f = io.open(path, "r")
  if not f then
    return c, "cannot read " .. path
  end
  local bad = nil
  for line in f:lines() do
    line = trim((line:gsub("#.*$", "")))
    local k, v = line:match("^([%w_]+)%s*=%s*(.-)$")
    if k then
      if k == "partitions" then
        c.partitions = {}
        for _, p in ipairs(split(v, ",")) do
          c.partitions[p] = true
        end
      elseif k == "operators" then
        c.operators = {}
        for _, u in ipairs(split(v, ",")) do
          c.operators[tonumber(u)] = true
        end
      elseif k == "gpus_per_node" or k == "max_gpus" then
        c[k] = tonumber(v)
      elseif k == "gpu_memory_mib" then
        bad = bad or read_memory(c, v)
      elseif k == "gpu_model" then
        bad = bad or read_models(c, v)
      elseif k == "require_association" then
        c.require_association = (v == "yes" or v == "true" or v == "1")
      end
    end
  end
  f:close()
  for m, _ in pairs(c.model_memory) do
    if not c.gpu_model_set[m] then
      bad = bad or ("gpu_memory_mib: '" .. m .. "' is not in gpu_model")
    end
  end
  return c, bad
end

-- "ds:k=v;k=v" -> table (nil when the text does not start with "ds:").
function gate.parse_record(text)
  if text == nil or text:sub(1, 3) ~= "ds:" then
    return nil
  end
  local t = {}
  for _, kv in ipairs(split(text:sub(4), ";")) do
    local k, v = kv:match("^([^=]+)=(.*)$")
    if k then
      t[trim(k)] = trim(v)
    else
      t[trim(kv)] = ""
    end
  end
  return t
end

-- Request keys in a fixed order, the rest sorted (same layout as src/slurm/record.cpp).
function gate.format_record(t)
  local order = { "v", "gpus", "n", "nr", "mem", "u", "begin", "trace", "gm" }
  local seen, parts = {}, {}
  for _, k in ipairs(order) do
    if t[k] ~= nil then
      parts[#parts + 1] = k .. "=" .. t[k]
      seen[k] = true
    end
  end
  local rest = {}
  for k, _ in pairs(t) do
    if not seen[k] then
      rest[#rest + 1] = k
    end
  end
  table.sort(rest)
  for _, k in ipairs(rest) do
    parts[#parts + 1] = k .. "=" .. t[k]
  end
  return "ds:" .. table.concat(parts, ";")
end

-- "gres:gpu:2,gres:gpu:a100:1" (or gres/gpu:2, gpu:2) -> { {name=,type=,count=} ... }.
-- As Slurm reads --gres: NAME[:TYPE][:COUNT], the count 1 when left out, so "gpu:g1" is
-- one GPU of type g1 and "gpu:a100" one a100. A count that is not a plain number of
-- digits is nil (refused by the callers).
function gate.parse_tres(s)
  local out = {}
  for _, e in ipairs(split(s, ",")) do
    e = e:gsub("^gres[:/]", "")
    local f = split(e, ":")
    local item = { name = f[1] }
    local function count(v)
      return v:match("^%d+$") and tonumber(v) or nil
    end
    if #f == 2 then
      if f[2]:match("^%d") then
        item.count = count(f[2])
      else
        item.type, item.count = f[2], 1
      end
    elseif #f >= 3 then
      item.type = f[2]
      item.count = count(f[3])
    else
      item.count = 1
    end
    out[#out + 1] = item
  end
  return out
end

local function is_index_type(t)
  return t ~= nil and t:match("^g%d+$") ~= nil
end

local function set(v)
  return v ~= nil and v ~= false and v ~= NO_VAL and v ~= NO_VAL16 and v ~= ""
end

-- The partitions a job names (or the default one).
function gate.job_partitions(desc_partition, part_list)
  if desc_partition ~= nil and desc_partition ~= "" then
    return split(desc_partition, ",")
  end
  for name, p in pairs(part_list or {}) do
    if p.flag_default == 1 then
      return { name }
    end
  end
  return {}
end

-- "a100, v100" for messages ("none" when the site lists no model).
local function model_list(conf)
  return #conf.gpu_models > 0 and table.concat(conf.gpu_models, ", ") or "none"
end

-- GPU entries of one TRES field, checked against what the user may write.
-- Returns count (nil when the field has no GPU entry), error message, the model asked for.
local function gpu_entries(conf, field, value)
  local total, any, model = 0, false, nil
  for _, e in ipairs(gate.parse_tres(value)) do
    if e.name == "gpushare" then
      return nil, "the gpushare GRES is DeepShare's sharing slot: ask for whole GPUs (--gres=gpu:N)"
    end
    if e.name ~= "gpu" then
      return nil, "DeepShare partitions schedule GPUs only: remove '" .. e.name .. "' from " .. field
    end
    if is_index_type(e.type) then
      return nil,
        "GPU types g0..gN name GPU indices that DeepShare assigns: write --gres=gpu:" .. (e.count or 1)
    end
    if e.type ~= nil and not conf.gpu_model_set[e.type] then
      return nil,
        "this partition has no '" .. e.type .. "' GPUs (its GPU models: " .. model_list(conf)
          .. "): write --gres=gpu:MODEL:" .. (e.count or 1) .. " with one of them, or --gres=gpu:"
          .. (e.count or 1) .. " for any"
    end
    if e.type ~= nil and model ~= nil and e.type ~= model then
      return nil, "ask for GPUs of one model per job (" .. model .. " or " .. e.type
        .. "), or --constraint='" .. model .. "|" .. e.type .. "' --gres=gpu:N for either"
    end
    model = e.type or model
    if e.count == nil or e.count < 1 or e.count ~= math.floor(e.count) then
      return nil, "'" .. value .. "' is not a whole number of GPUs"
    end
    total, any = total + e.count, true
  end
  if not any then
    return nil, nil
  end
  return total, nil, model
end

-- The model(s) a --constraint names: "a100" or "a100|v100" of listed models (nil when it
-- names none of them: other features, and names the gate does not know, are Slurm's to
-- honour); an error when it mixes listed models with anything else.
function gate.constraint_models(conf, features)
  if not set(features) or #conf.gpu_models == 0 then
    return nil, nil
  end
  local names, known = {}, 0
  for name in string.gmatch(features .. "|", "([^|]*)|") do
    names[#names + 1] = name
    known = known + (conf.gpu_model_set[name] and 1 or 0)
  end
  if known == 0 then
    return nil, nil
  end
  if known ~= #names then
    return nil, "--constraint='" .. features .. "': name GPU models only, one or several"
      .. " separated by '|' (this partition's GPU models: " .. model_list(conf) .. ")"
  end
  return features, nil
end

-- The job's GPU request as one number of GPUs and a node count; nil + message when it
-- cannot be expressed. `d` carries the job_desc fields the gate reads.
function gate.normalise(conf, d)
  local notes = {}
  if set(d.tres_per_socket) then
    return nil, "--gpus-per-socket is not supported in DeepShare partitions: write --gres=gpu:N"
  end
  if set(d.ntasks_per_tres) then
    return nil, "--ntasks-per-gpu is not supported in DeepShare partitions: write -n/--ntasks"
  end
  for _, f in ipairs({ "tres_freq", "tres_bind" }) do
    if set(d[f]) and tostring(d[f]):find("gpu") then
      return nil, "--gpu-freq/--gpu-bind are not supported in DeepShare partitions (DeepShare binds GPUs)"
    end
  end
  local nodes = set(d.min_nodes) and d.min_nodes or nil
  if nodes and set(d.max_nodes) and d.max_nodes ~= nodes then
    return nil, "give an exact node count (-N " .. nodes .. ", not a range)"
  end
  local per_node, per_job, per_task, err, m1, m2, m3
  per_node, err, m1 = gpu_entries(conf, "--gres/--gpus-per-node", d.tres_per_node)
  if err then
    return nil, err
  end
  per_job, err, m2 = gpu_entries(conf, "--gpus", d.tres_per_job)
  if err then
    return nil, err
  end
  per_task, err, m3 = gpu_entries(conf, "--gpus-per-task", d.tres_per_task)
  if err then
    return nil, err
  end
  local model
  model, err = gate.constraint_models(conf, d.features)
  if err then
    return nil, err
  end
  local typed = m1 or m2 or m3
  if typed and model and typed ~= model then
    return nil, "--gres asks for " .. typed .. " GPUs but --constraint for '" .. model
      .. "': give the model once"
  end
  model = typed or model
  local forms = (per_node and 1 or 0) + (per_job and 1 or 0) + (per_task and 1 or 0)
  if forms > 1 then
    return nil, "give the GPUs one way: --gres=gpu:N (per node), -G N (per job) or --gpus-per-task"
  end
  local total
  if per_node then
    total = per_node * (nodes or 1)
  elseif per_job then
    total = per_job
    notes[#notes + 1] = "-G " .. per_job
  elseif per_task then
    local tasks = set(d.num_tasks) and d.num_tasks or nil
    if not tasks and set(d.ntasks_per_node) then
      tasks = d.ntasks_per_node * (nodes or 1)
    end
    total = per_task * (tasks or 1)
    notes[#notes + 1] = "--gpus-per-task=" .. per_task .. " x " .. (tasks or 1) .. " tasks"
  end
  local rec = gate.parse_record(d.comment) or {}
  if rec.gpus ~= nil then
    local g = gate.check_value("gpus", rec.gpus)
    if g == nil then
      return nil, "--comment key gpus=" .. rec.gpus .. " is not a whole number of GPUs"
    end
    if total ~= nil and total ~= g then
      return nil, "--comment says gpus=" .. g .. " but the GRES options ask for " .. total
    end
    total = g
  end
  if total == nil or total == 0 then
    if d.shared == 0 and nodes then -- --exclusive without GPUs: whole nodes
      total = nodes * conf.gpus_per_node
      notes[#notes + 1] = "--exclusive"
    else
      return nil, "DeepShare partitions run GPU jobs: add --gres=gpu:N (N GPUs on one node)"
    end
  end
  local gpn = conf.gpus_per_node
  local shape_n
  if total <= gpn then
    if nodes and nodes > 1 then
      return nil,
        nodes .. " nodes with " .. total .. " GPUs in all: DeepShare places a job on one node, or on"
          .. " whole nodes (" .. gpn .. " GPUs each); write -N 1 --gres=gpu:" .. total
          .. (total == nodes * math.floor(total / nodes) and (" or -N " .. nodes .. " --gres=gpu:" .. gpn) or "")
    end
    shape_n = 1
    if d.shared == 0 and total < gpn then
      return nil, "--exclusive takes a whole node (" .. gpn .. " GPUs): write --gres=gpu:" .. gpn
        .. " --exclusive, or drop --exclusive"
    end
  else
    if total % gpn ~= 0 then
      local k = math.ceil(total / gpn)
      return nil,
        total .. " GPUs do not fill whole nodes of " .. gpn .. " GPUs: write -N " .. k .. " --gres=gpu:"
          .. gpn .. " (" .. (k * gpn) .. " GPUs) or at most " .. gpn .. " GPUs on one node"
    end
    shape_n = total / gpn
    if nodes and nodes ~= shape_n then
      return nil,
        total .. " GPUs on " .. nodes .. " nodes: DeepShare places multi-node jobs on whole nodes; write -N "
          .. shape_n .. " --gres=gpu:" .. gpn
    end
  end
  if conf.max_gpus and total > conf.max_gpus then
    return nil, total .. " GPUs: the partition has " .. conf.max_gpus
  end
  if total > gate.KEYS.gpus.max then
    return nil, total .. " GPUs: DeepShare schedules at most " .. gate.KEYS.gpus.max .. " per job"
  end
  return { gpus = total, nodes = shape_n, notes = notes, model = model }, nil
end

-- Checks the user's --comment keys (gate.KEYS, then the site's bounds); returns the record
-- table or nil + message.
function gate.user_keys(conf, comment)
  local rec = gate.parse_record(comment)
  if rec == nil then
    return {}, nil
  end
  local pins = {}
  for k, _ in pairs(rec) do
    if PIN_KEYS[k] or GATE_KEYS[k] then
      pins[#pins + 1] = k
    elseif not USER_KEYS[k] then
      return nil, "unknown --comment key '" .. k .. "' (DeepShare reads gpus=, u=, mem=)"
    end
  end
  if #pins > 0 then
    table.sort(pins)
    return nil,
      "--comment keys " .. table.concat(pins, ",") .. " are DeepShare's placement record: only the"
        .. " scheduler writes them (remove them; DeepShare decides where a job runs)"
  end
  local what = { u = "u= (GPU utilisation %)", mem = "mem= (GPU memory MiB)", gpus = "gpus=",
                 trace = "trace=" }
  for k, v in pairs(rec) do
    local n, err = gate.check_value(k, v)
    if n == nil then
      return nil, "--comment key " .. what[k] .. ": " .. err .. ", not '" .. v .. "'"
    end
    if k == "mem" and n > conf.gpu_memory_mib then
      return nil, "--comment key mem= (GPU memory MiB) must be 1.." .. conf.gpu_memory_mib
        .. ", not '" .. v .. "'"
    end
  end
  return rec, nil
end

-- Other partitions: no gpushare, no index types; MODEL types become untyped.
function gate.other_partition(conf, d)
  for _, f in ipairs({ "tres_per_node", "tres_per_job", "tres_per_task", "tres_per_socket" }) do
    if set(d[f]) then
      local items, changed = {}, false
      for _, e in ipairs(gate.parse_tres(d[f])) do
        if e.name == "gpushare" then
          return nil, "the gpushare GRES is DeepShare's sharing slot and cannot be requested"
        end
        if e.name == "gpu" and is_index_type(e.type) then
          return nil, "GPU types g0..gN name GPU indices reserved for DeepShare: write --gres=gpu:" .. (e.count or 1)
        end
        if e.name == "gpu" and e.type ~= nil and conf.gpu_model_set[e.type] then
          e.type, changed = nil, true
        end
        items[#items + 1] = "gres:" .. e.name .. (e.type and (":" .. e.type) or "") .. ":" .. (e.count or 1)
      end
      if changed then
        d[f] = table.concat(items, ",")
      end
    end
  end
  return d, nil
end

-- The submit decision. `d` is a plain table of the job_desc fields read below; returns
-- (changes, message, code): changes = fields to write back, or nil with the refusal.
function gate.submit(conf, d, part_list, now)
  local parts = gate.job_partitions(d.partition, part_list)
  local ds, other = 0, 0
  for _, p in ipairs(parts) do
    if conf.partitions[p] then
      ds = ds + 1
    else
      other = other + 1
    end
  end
  if ds == 0 then
    local out, err = gate.other_partition(conf, d)
    if err then
      return nil, err, gate.E.INVALID_GRES
    end
    return { tres_per_node = out.tres_per_node, tres_per_job = out.tres_per_job,
             tres_per_task = out.tres_per_task, tres_per_socket = out.tres_per_socket }, nil
  end
  if other > 0 then
    return nil, "submit to DeepShare's partitions or to others, not both (-p " .. d.partition .. ")",
      gate.E.INVALID_PARTITION
  end
  if set(d.het_job_offset) then
    -- Slurm calls the gate once per component and applies an update of one component to
    -- all of them; DeepShare places and preempts one job at a time.
    return nil,
      "heterogeneous jobs (components separated by ':' or '#SBATCH hetjob') are not supported in"
        .. " DeepShare partitions: submit each component as its own job (--dependency orders them)",
      gate.E.INVALID_PARTITION
  end
  if conf.require_association and not set(d.account) and not set(d.default_account) then
    return nil,
      "user " .. tostring(d.user_name) .. " has no Slurm account: DeepShare tenants are Slurm accounts;"
        .. " ask an administrator (sacctmgr add user NAME account=TEAM)", gate.E.INVALID_ACCOUNT
  end
  if set(d.reservation) then
    -- A reservation holds its nodes for its window (maintenance, an operator's block):
    -- DeepShare keeps every job off them for that window and does not schedule inside one.
    return nil,
      "--reservation is not supported in DeepShare partitions: DeepShare keeps its jobs off"
        .. " reserved nodes for the reservation's window; submit without --reservation (or to"
        .. " another partition)", gate.E.ACCESS_DENIED
  end
  if set(d.req_nodes) then
    -- --nodelist / -w: DeepShare writes each job's node list itself when it starts it (its
    -- placement), so a user's list would be replaced without a word (issue #24): refused.
    return nil,
      "--nodelist (-w) is not supported in DeepShare partitions: DeepShare chooses each job's"
        .. " nodes; keep a job off nodes with --exclude, or ask for a GPU model with --gres or"
        .. " --constraint", gate.E.ACCESS_DENIED
  end
  if d.shared == 2 or d.shared == 3 then
    -- --exclusive=user / =mcs: Slurm would start the job only on nodes free of other users'
    -- jobs, which DeepShare's placement does not know (issue #24): refused, not rolled back.
    return nil,
      "--exclusive=user and --exclusive=mcs are not supported in DeepShare partitions: DeepShare"
        .. " places jobs on GPUs; write --exclusive -N K --gres=gpu:GPUS_PER_NODE for whole nodes",
      gate.E.ACCESS_DENIED
  end
  local rec, err = gate.user_keys(conf, d.comment)
  if err then
    return nil, err, gate.E.ACCESS_DENIED
  end
  local req
  req, err = gate.normalise(conf, d)
  if err then
    return nil, err, gate.E.INVALID_GRES
  end
  local admin = { v = "1", gpus = tostring(req.gpus), n = tostring(req.nodes) }
  local nr = (d.requeue == 0) or not d.script
  admin.nr = nr and "1" or "0"
  if rec.mem then
    admin.mem = rec.mem
  end
  if rec.u then
    admin.u = rec.u
  end
  if rec.trace then
    admin.trace = rec.trace
  end
  if req.model then
    admin.gm = req.model
    local mib = conf.model_memory[req.model]
    if mib and rec.mem and tonumber(rec.mem) > mib then
      return nil, "--comment key mem= (GPU memory MiB) must be 1.." .. mib .. " on " .. req.model
        .. " GPUs, not '" .. rec.mem .. "'", gate.E.ACCESS_DENIED
    end
  end
  if set(d.begin_time) and d.begin_time > (now or 0) then
    admin.begin = string.format("%d", d.begin_time)
  end
  local ch = {
    tres_per_node = "", tres_per_job = "", tres_per_task = "", tres_per_socket = "",
    cpus_per_tres = "", mem_per_tres = "",
    min_nodes = req.nodes, max_nodes = req.nodes,
    begin_time = gate.PARK,
    admin_comment = gate.format_record(admin),
  }
  -- --mem-per-gpu / --cpus-per-gpu refer to the GPUs taken out above: per node instead.
  local gpn = req.gpus / req.nodes
  local mpt = gate.parse_tres(set(d.mem_per_tres) and d.mem_per_tres or "")
  if #mpt > 0 then
    ch.min_mem_per_node = (mpt[1].count or 0) * gpn
    req.notes[#req.notes + 1] = "--mem-per-gpu"
  end
  local cpt = gate.parse_tres(set(d.cpus_per_tres) and d.cpus_per_tres or "")
  if #cpt > 0 then
    ch.pn_min_cpus = (cpt[1].count or 0) * gpn
    req.notes[#req.notes + 1] = "--cpus-per-gpu"
  end
  local msg = nil
  if #req.notes > 0 then
    msg = "DeepShare: " .. req.gpus .. " GPU(s) on " .. req.nodes .. " node(s) (from "
      .. table.concat(req.notes, ", ") .. ")"
  end
  if nr then
    msg = (msg and (msg .. "; ") or "DeepShare: ")
      .. "not requeueable: runs only within the account's guaranteed GPUs, never on borrowed ones"
  end
  return ch, msg
end

-- The modify decision for a non-operator; returns (changes or {}, nil) or (nil, code).
-- `d` holds the update's fields, `job` the job record's partition and admin_comment.
function gate.modify(conf, d, job, now)
  local was_ds = job.partition ~= nil and conf.partitions[job.partition] or false
  local to_ds = false
  for _, p in ipairs(split(d.partition, ",")) do
    to_ds = to_ds or (conf.partitions[p] and true or false)
  end
  if not was_ds and not to_ds then
    local _, err = gate.other_partition(conf, d)
    if err then
      return nil, gate.E.INVALID_GRES
    end
    return {}, nil
  end
  if set(d.partition) and d.partition ~= job.partition then
    return nil, gate.E.INVALID_PARTITION
  end
  if set(d.account) then
    return nil, gate.E.INVALID_ACCOUNT
  end
  for _, f in ipairs({ "tres_per_node", "tres_per_job", "tres_per_task", "tres_per_socket", "cpus_per_tres", "mem_per_tres" }) do
    if d[f] ~= nil then
      return nil, gate.E.INVALID_GRES
    end
  end
  for _, f in ipairs({ "min_nodes", "max_nodes", "num_tasks", "ntasks_per_node" }) do
    if set(d[f]) then
      return nil, gate.E.INVALID_NODE_COUNT
    end
  end
  for _, f in ipairs({ "req_nodes", "exc_nodes", "features", "reservation" }) do
    if d[f] ~= nil then
      return nil, gate.E.ACCESS_DENIED
    end
  end
  if set(d.requeue) or set(d.shared) then
    return nil, gate.E.ACCESS_DENIED
  end
  -- Memory, CPUs and --tmp decide the nodes DeepShare may place the job on (its node mask,
  -- read when the controller first sees the job: issue #24): fixed after submission.
  for _, f in ipairs({ "min_mem_per_node", "min_mem_per_cpu", "cpus_per_task", "pn_min_cpus", "min_cpus",
                       "pn_min_tmp_disk" }) do
    if set(d[f]) then
      return nil, gate.E.ACCESS_DENIED
    end
  end
  if d.comment ~= nil and gate.parse_record(d.comment) ~= nil then
    return nil, gate.E.ACCESS_DENIED
  end
  local ch = {}
  if d.priority ~= nil and d.priority ~= NO_VAL and gate.parse_record(job.admin_comment) ~= nil then
    -- A hold or release by the user: the job stays (or is again) parked. Slurm's release keeps
    -- the job's BeginTime, which after DeepShare's requeue-hold (a preemption) is already past:
    -- Slurm would start it by itself at once. Parked, it waits for DeepShare, and its user's
    -- hold shows as one (a parked hold is never DeepShare's own, docs/slurm.md §7).
    ch.begin_time = gate.PARK
  end
  if set(d.begin_time) and d.begin_time ~= 0 then
    -- A new StartTime: DeepShare honours it; the job stays parked. It goes into the job's
    -- Comment (begin=, 0: none), which the user may write: Slurm refuses an AdminComment in
    -- a user's update even when this plugin sets it, and a begin time only ever concerns the
    -- user's own job. The controller takes it over the AdminComment's begin.
    if gate.parse_record(job.admin_comment) == nil then
      return nil, gate.E.JOB_HELD
    end
    local user = gate.parse_record(job.comment) or {}
    user.begin = d.begin_time > (now or 0) and string.format("%d", d.begin_time) or "0"
    ch.begin_time = gate.PARK
    ch.comment = gate.format_record(user)
  end
  return ch, nil
end

-- ---- the job_submit/lua entry points -------------------------------------------------

local FIELDS = {
  "partition", "account", "default_account", "user_name", "comment", "tres_per_node",
  "tres_per_job", "tres_per_task", "tres_per_socket", "cpus_per_tres", "mem_per_tres",
  "min_nodes", "max_nodes", "num_tasks", "ntasks_per_node", "ntasks_per_tres", "requeue",
  "shared", "script", "begin_time", "tres_freq", "tres_bind", "req_nodes", "exc_nodes",
  "features", "reservation", "het_job_offset", "priority", "min_mem_per_node", "min_mem_per_cpu",
  "cpus_per_task", "pn_min_cpus", "min_cpus", "pn_min_tmp_disk",
}

local function snapshot(desc)
  local d = {}
  for _, f in ipairs(FIELDS) do
    d[f] = desc[f]
  end
  if d.script ~= nil then
    d.script = true -- only whether it is a batch job matters
  end
  return d
end

local function conf_path()
  local env = os.getenv("DEEPSHARE_GATE_CONF")
  if env and env ~= "" then
    return env
  end
  local src = debug.getinfo(1, "S").source or ""
  local dir = src:match("^@(.*)/[^/]*$") or "."
  return dir .. "/deepshare_gate.conf"
end

-- Read on every call (a few lines): an edited deepshare_gate.conf takes effect at once.
local function conf()
  local c, err = gate.load_conf(conf_path())
  if err then
    slurm.log_error("deepshare gate: %s", err)
  end
  return c, err
end

function slurm_job_submit(desc, part_list, submit_uid)
  local ok, rc = pcall(function()
    local c, err = conf()
    if err then
      slurm.log_user("DeepShare: the submission gate is misconfigured (%s); ask an administrator", err)
      return gate.E.ACCESS_DENIED
    end
    local d = snapshot(desc)
    local ch, msg, code = gate.submit(c, d, part_list, os.time())
    if ch == nil then
      slurm.log_user("DeepShare: %s", msg)
      slurm.log_info("deepshare gate: refused a job of uid %d: %s", submit_uid, msg)
      return code
    end
    for k, v in pairs(ch) do
      if v ~= nil then
        desc[k] = v
      end
    end
    if msg then
      slurm.log_user("%s", msg)
    end
    return slurm.SUCCESS
  end)
  if not ok then
    slurm.log_error("deepshare gate: %s", tostring(rc))
    slurm.log_user("DeepShare: internal error in the submission gate; the job was not submitted")
    return gate.E.ACCESS_DENIED
  end
  return rc
end

function slurm_job_modify(desc, job_rec, part_list, modify_uid)
  local ok, rc = pcall(function()
    local c, err = conf()
    if err then
      return gate.E.ACCESS_DENIED
    end
    if c.operators[modify_uid] then
      return slurm.SUCCESS
    end
    local d = snapshot(desc)
    local job = { partition = job_rec.partition, admin_comment = job_rec.admin_comment,
                  comment = job_rec.comment }
    local ch, code = gate.modify(c, d, job, os.time())
    if ch == nil then
      slurm.log_info("deepshare gate: refused an update of job %s by uid %d (code %d)",
        tostring(job_rec.job_id), modify_uid, code)
      return code
    end
    for k, v in pairs(ch) do
      desc[k] = v
    end
    return slurm.SUCCESS
  end)
  if not ok then
    slurm.log_error("deepshare gate: %s", tostring(rc))
    return gate.E.ACCESS_DENIED
  end
  return rc
end

deepshare_gate = gate -- for tests/slurm/gate_test.lua
return slurm.SUCCESS
