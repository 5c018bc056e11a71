-- Unit tests of DeepShare's submission gate (deploy/slurm/job_submit.lua) without Slurm:
-- a fake `slurm` table, the gate's rules driven with job_desc-like tables.
-- Usage: lua5.1 tests/slurm/gate_test.lua deploy/slurm/job_submit.lua
local script = arg[1] or "deploy/slurm/job_submit.lua"
local NO_VAL, NO_VAL16 = 4294967294, 65534
local messages = {}
slurm = {
  SUCCESS = 0,
  ERROR = -1,
  log_user = function(fmt, ...) messages[#messages + 1] = string.format(fmt, ...) end,
  log_info = function() end,
  log_error = function() end,
}
local conf_file = os.tmpname()
local f = assert(io.open(conf_file, "w"))
f:write([[
# test configuration
partitions = batch, gpu2   # two DeepShare partitions
gpus_per_node = 4
gpu_model = a100, v100     # two models
gpu_memory_mib = a100:24576, v100:16384
max_gpus = 16
operators = 0, 64030
require_association = yes
]])
f:close()
local saved_getenv = os.getenv
os.getenv = function(k)
  if k == "DEEPSHARE_GATE_CONF" then
    return conf_file
  end
  return saved_getenv(k)
end
assert(dofile(script) == 0, "the script returns slurm.SUCCESS on load")
local gate = deepshare_gate
local conf = assert(gate.load_conf(conf_file))

local pass, fail = 0, 0
local function check(name, cond, detail)
  if cond then
    pass = pass + 1
  else
    fail = fail + 1
    print("FAIL " .. name .. (detail and (": " .. tostring(detail)) or ""))
  end
end

local parts = { batch = { flag_default = 1 }, gpu2 = { flag_default = 0 }, other = { flag_default = 0 } }
local function job(t)
  local d = {
    partition = nil, account = "alpha", default_account = "alpha", user_name = "alice",
    min_nodes = NO_VAL, max_nodes = NO_VAL, num_tasks = NO_VAL, ntasks_per_node = NO_VAL16,
    ntasks_per_tres = NO_VAL16, requeue = NO_VAL16, shared = NO_VAL16, script = true,
    begin_time = 0,
  }
  for k, v in pairs(t) do
    d[k] = v
  end
  return d
end
local function submit(t)
  return gate.submit(conf, job(t), parts, 1000)
end
local function rec(ch)
  return gate.parse_record(ch.admin_comment)
end

-- config
check("conf: partitions", conf.partitions.batch and conf.partitions.gpu2 and not conf.partitions.other)
check("conf: operators", conf.operators[0] and conf.operators[64030])
check("conf: numbers", conf.gpus_per_node == 4 and conf.max_gpus == 16)
check("conf: models in order, memory per model (the largest bounds mem=)",
  table.concat(conf.gpu_models, ",") == "a100,v100" and conf.model_memory.v100 == 16384
    and conf.gpu_memory_mib == 24576)
local function conf_text(text)
  local path = os.tmpname()
  local cf = assert(io.open(path, "w"))
  cf:write(text)
  cf:close()
  local c, err = gate.load_conf(path)
  os.remove(path)
  return c, err
end
local one = conf_text("gpu_model = a100\ngpu_memory_mib = 81920\n")
check("conf: one model, one memory (the old form)", one.gpu_model_set.a100 and one.gpu_memory_mib == 81920)
local _, e1 = conf_text("gpu_model = a100, g3\n")
check("conf: an index type is not a model", e1 and e1:find("gpu_model") and e1:find("g3"), e1)
local _, e2 = conf_text("gpu_model = a100\ngpu_memory_mib = h100:8000\n")
check("conf: memory of an unlisted model refused", e2 and e2:find("h100"), e2)
local _, e3 = conf_text("gpu_model = a100\ngpu_memory_mib = a100=8000\n")
check("conf: malformed memory refused, naming the key", e3 and e3:find("gpu_memory_mib"), e3)
local _, missing = gate.load_conf("/nonexistent/deepshare_gate.conf")
check("conf: a missing file is an error", missing ~= nil)

-- the plain case: --gres=gpu:2 -A alpha
local ch, msg = submit({ tres_per_node = "gres:gpu:2" })
check("gres=gpu:2 accepted", ch ~= nil, msg)
check("gres=gpu:2 -> 2 GPUs, 1 node", rec(ch).gpus == "2" and rec(ch).n == "1" and rec(ch).nr == "0")
check("gres cleared, parked", ch.tres_per_node == "" and ch.tres_per_job == "" and ch.begin_time == gate.PARK)
check("one node", ch.min_nodes == 1 and ch.max_nodes == 1)
check("no message for the plain case", msg == nil, msg)
check("record layout", ch.admin_comment == "ds:v=1;gpus=2;n=1;nr=0", ch.admin_comment)

-- every form of GPU request
ch = submit({ tres_per_node = "gres:gpu:a100:3" })
check("gpu:a100:3 -> 3 GPUs, model a100 recorded, GRES untyped (cleared)",
  ch and rec(ch).gpus == "3" and rec(ch).gm == "a100" and ch.tres_per_node == "")
check("gm comes last in the record", ch and ch.admin_comment == "ds:v=1;gpus=3;n=1;nr=0;gm=a100",
  ch and ch.admin_comment)
ch = submit({ tres_per_node = "gres:gpu:v100:2" })
check("gpu:v100:2: the other model", ch and rec(ch).gm == "v100" and rec(ch).gpus == "2")
ch = submit({ tres_per_job = "gres:gpu:v100:2" })
check("-G v100:2: the model from --gpus too", ch and rec(ch).gm == "v100")
ch, msg = submit({ tres_per_node = "gres:gpu:h100:3" })
check("gpu:h100 refused, naming the partition's models", ch == nil and msg:find("'h100'")
  and msg:find("a100, v100"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:a100:1,gres:gpu:v100:1" })
check("two models in one request refused", ch == nil and msg:find("one model"), msg)
ch = submit({ tres_per_node = "gres:gpu:2", features = "v100" })
check("--constraint=v100: the model", ch and rec(ch).gm == "v100")
ch = submit({ tres_per_node = "gres:gpu:2", features = "a100|v100" })
check("--constraint='a100|v100': alternatives", ch and rec(ch).gm == "a100|v100")
ch = submit({ tres_per_node = "gres:gpu:2", features = "bigmem" })
check("--constraint of another feature: no model (Slurm's)", ch and rec(ch).gm == nil)
ch, msg = submit({ tres_per_node = "gres:gpu:2", features = "a100|bigmem" })
check("--constraint mixing a model and a feature refused", ch == nil and msg:find("constraint"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:a100:2", features = "v100" })
check("--gres model and another --constraint model refused", ch == nil and msg:find("once"), msg)
ch = submit({ tres_per_node = "gres:gpu:a100:2", features = "a100" })
check("--gres model and the same --constraint", ch and rec(ch).gm == "a100")
ch, msg = submit({ tres_per_node = "gres:gpu:v100:1", comment = "ds:mem=20000" })
check("mem= bounded by the model's memory", ch == nil and msg:find("16384") and msg:find("v100"), msg)
ch = submit({ tres_per_node = "gres:gpu:a100:1", comment = "ds:mem=20000" })
check("... and within the other model's", ch and rec(ch).mem == "20000")
ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:gm=v100" })
check("gm= in --comment refused (the gate writes it)", ch == nil and msg:find("gm"), msg)
check("gm: a model, alternatives, never empty names",
  gate.check_value("gm", "a100") and gate.check_value("gm", "V100M16|V100M32")
    and not gate.check_value("gm", "a100|") and not gate.check_value("gm", "a b"))
ch, msg = submit({ tres_per_node = "gres:gpu:g1:1" })
check("index type refused", ch == nil and msg:find("indices"), msg)
ch, msg = submit({ tres_per_job = "gres:gpu:3" })
check("-G 3 -> 3 on one node", ch and rec(ch).gpus == "3" and rec(ch).n == "1" and msg:find("%-G 3"), msg)
ch = submit({ tres_per_task = "gres:gpu:1", num_tasks = 3 })
check("--gpus-per-task=1 -n 3 -> 3", ch and rec(ch).gpus == "3")
ch = submit({ tres_per_task = "gres:gpu:2", ntasks_per_node = 2, min_nodes = 1, max_nodes = 1 })
check("--gpus-per-task=2 --ntasks-per-node=2 -> 4", ch and rec(ch).gpus == "4")
ch = submit({ tres_per_node = "gres:gpu:4", min_nodes = 2, max_nodes = 2 })
check("-N 2 --gres=gpu:4 -> 8 GPUs on 2 whole nodes", ch and rec(ch).gpus == "8" and rec(ch).n == "2" and ch.min_nodes == 2)
ch, msg = submit({ tres_per_node = "gres:gpu:2", min_nodes = 2, max_nodes = 2 })
check("-N 2 --gres=gpu:2 refused (partial nodes)", ch == nil and msg:find("whole nodes") and msg:find("%-N 1 %-%-gres=gpu:4"), msg)
ch, msg = submit({ tres_per_job = "gres:gpu:6" })
check("-G 6 refused (not whole nodes)", ch == nil and msg:find("%-N 2 %-%-gres=gpu:4"), msg)
ch = submit({ tres_per_job = "gres:gpu:8" })
check("-G 8 -> 2 whole nodes", ch and rec(ch).n == "2")
ch, msg = submit({ tres_per_job = "gres:gpu:32" })
check("more than the partition refused", ch == nil and msg:find("has 16"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", tres_per_job = "gres:gpu:2" })
check("two forms refused", ch == nil and msg:find("one way"), msg)
ch, msg = submit({})
check("no GPUs refused", ch == nil and msg:find("gres=gpu:N"), msg)
ch = submit({ comment = "ds:gpus=2;u=40;mem=4000" })
check("comment gpus=2 (old convention)", ch and rec(ch).gpus == "2" and rec(ch).mem == "4000" and rec(ch).u == "40")
ch, msg = submit({ comment = "ds:gpus=2", tres_per_node = "gres:gpu:3" })
check("comment and gres disagree", ch == nil and msg:find("gpus=2"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1,gres:gpushare:1" })
check("gpushare refused", ch == nil and msg:find("gpushare"), msg)
ch, msg = submit({ tres_per_node = "gres:nic:1,gres:gpu:1" })
check("other GRES refused", ch == nil and msg:find("nic"), msg)
ch, msg = submit({ tres_per_socket = "gres:gpu:1" })
check("--gpus-per-socket refused", ch == nil and msg:find("socket"), msg)
ch = submit({ tres_per_node = "gres:gpu:2", mem_per_tres = "gres:gpu:1000", cpus_per_tres = "gres:gpu:3" })
check("--mem-per-gpu/--cpus-per-gpu per node", ch and ch.min_mem_per_node == 2000 and ch.pn_min_cpus == 6 and ch.mem_per_tres == "")
ch, msg = submit({ tres_per_node = "gres:gpu:4", min_nodes = 1, shared = 0 })
check("--exclusive with a whole node", ch ~= nil, msg)
ch, msg = submit({ tres_per_node = "gres:gpu:2", shared = 0 })
check("--exclusive with part of a node refused", ch == nil and msg:find("exclusive"), msg)
ch = submit({ min_nodes = 2, max_nodes = 2, shared = 0 })
check("--exclusive -N 2 without GPUs: whole nodes", ch and rec(ch).gpus == "8")
ch, msg = submit({ tres_per_node = "gres:gpu:4", shared = 2 })
check("--exclusive=user refused with what to write", ch == nil and msg:find("--exclusive=user") and msg:find("-N K"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:4", shared = 3 })
check("--exclusive=mcs refused", ch == nil and msg:find("exclusive"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", reservation = "maint" })
check("--reservation refused", ch == nil and msg:find("--reservation is not supported"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", req_nodes = "node3" })
check("--nodelist refused with what to write", ch == nil and msg:find("--nodelist %(%-w%) is not supported")
  and msg:find("--exclude"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", req_nodes = "" })
check("an empty node list passes", ch ~= nil, msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", shared = 1 })
check("--oversubscribe passes", ch ~= nil, msg)

-- pins and keys in the comment
ch, msg = submit({ tres_per_node = "gres:gpu:4", comment = "ds:r=0;b=0;s=0;g=node4@0,1,2,3;m=100;gpus=4;mem=22000" })
check("forged pin at submit refused", ch == nil and msg:find("b,g,m,r,s") and msg:find("only the scheduler"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:nr=0" })
check("gate keys refused", ch == nil, msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:colour=red" })
check("unknown key refused", ch == nil and msg:find("colour"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:mem=999999" })
check("mem out of range refused", ch == nil and msg:find("mem="), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:u=150" })
check("u out of range refused", ch == nil and msg:find("u="), msg)
ch = submit({ tres_per_node = "gres:gpu:1", comment = "just a note" })
check("a plain comment is kept", ch ~= nil and ch.comment == nil)

-- lifecycle fields
ch, msg = submit({ tres_per_node = "gres:gpu:1", requeue = 0 })
check("--no-requeue -> nr=1 with a message", ch and rec(ch).nr == "1" and msg:find("never on borrowed"), msg)
ch = submit({ tres_per_node = "gres:gpu:1", script = false }) -- (nil in Slurm)
check("interactive -> nr=1", ch and rec(ch).nr == "1")
ch = submit({ tres_per_node = "gres:gpu:1", begin_time = 5000 })
check("--begin kept in the record", ch and rec(ch).begin == "5000" and ch.begin_time == gate.PARK)
ch = submit({ tres_per_node = "gres:gpu:1", begin_time = 10 })
check("a past --begin is dropped", ch and rec(ch).begin == nil)
ch = submit({ tres_per_node = "gres:gpu:1", array_inx = "0-5%2" })
check("arrays pass", ch ~= nil)

-- partitions and accounts
ch = submit({ partition = "gpu2", tres_per_node = "gres:gpu:1" })
check("second DeepShare partition", ch and rec(ch).gpus == "1")
ch, msg = submit({ partition = "batch,other", tres_per_node = "gres:gpu:1" })
check("mixed partitions refused", ch == nil and msg:find("not both"), msg)
ch, msg = submit({ account = false, default_account = false, tres_per_node = "gres:gpu:1" })
check("no association refused", ch == nil and msg:find("sacctmgr"), msg)
ch = submit({ account = false, default_account = "alpha", tres_per_node = "gres:gpu:1" })
check("default account accepted", ch ~= nil)
ch = submit({ partition = "other", tres_per_node = "gres:gpu:a100:2" })
check("other partition: model type dropped", ch and ch.tres_per_node == "gres:gpu:2", ch and ch.tres_per_node)
ch = submit({ partition = "other", tres_per_node = "gres:gpu:2" })
check("other partition: untouched", ch and ch.tres_per_node == "gres:gpu:2" and ch.admin_comment == nil)
ch, msg = submit({ partition = "other", tres_per_node = "gres:gpushare:g1:1" })
check("other partition: gpushare refused", ch == nil and msg:find("gpushare"), msg)
ch, msg = submit({ partition = "other", tres_per_job = "gres:gpu:g0:1" })
check("other partition: index types refused", ch == nil, msg)
ch, msg = submit({ partition = "other", tres_per_node = "gres:gpu:g1" })
check("other partition: an index type without a count (-p other --gres=gpu:g1) refused",
  ch == nil and msg and msg:find("indices"), msg)
ch, msg = submit({ partition = "other", tres_per_node = "gres/gpu:g3" })
check("other partition: gres/gpu:g3 refused", ch == nil, msg)
ch = submit({ partition = "other", tres_per_node = "gres:gpu:a100" })
check("other partition: a model without a count is one GPU", ch and ch.tres_per_node == "gres:gpu:1",
  ch and ch.tres_per_node)

-- heterogeneous jobs: refused in DeepShare partitions, with a message
ch, msg = submit({ tres_per_node = "gres:gpu:1", het_job_offset = 0 })
check("het job component 0 refused", ch == nil and msg:find("heterogeneous") and msg:find("own job"), msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1", het_job_offset = 1 })
check("het job component 1 refused", ch == nil and msg:find("heterogeneous"), msg)
ch = submit({ tres_per_node = "gres:gpu:1", het_job_offset = NO_VAL })
check("NO_VAL offset: not a het job", ch ~= nil)
ch = submit({ partition = "other", tres_per_node = "gres:gpu:1", het_job_offset = 1 })
check("het jobs of other partitions pass", ch ~= nil)

-- one definition of a valid value (gate.KEYS, read by the controller's build too)
for _, bad in ipairs({ "nan", "inf", "-inf", "0x10", "1e3", "", "-1", "1.2.3", "5k" }) do
  ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:mem=" .. bad })
  check("mem='" .. bad .. "' refused (the controller reads plain decimals only)", ch == nil, msg)
  ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:u=" .. bad })
  check("u='" .. bad .. "' refused", ch == nil, msg)
end
ch = submit({ tres_per_node = "gres:gpu:1", comment = "ds:mem=4000.5;u=.5" })
check("plain decimals accepted", ch and rec(ch).mem == "4000.5" and rec(ch).u == ".5")
ch, msg = submit({ tres_per_node = "gres:gpu:1", comment = "ds:gpus=1e0" })
check("gpus=1e0 refused", ch == nil, msg)
ch, msg = submit({ tres_per_node = "gres:gpu:1x" })
check("a count with letters refused", ch == nil, msg)
-- the shared corpus (tests/slurm/record_values.txt): the controller's test reads it too
local corpus = (script:match("^(.*)/deploy/slurm/[^/]*$") or ".") .. "/tests/slurm/record_values.txt"
local cf = io.open(corpus, "r")
check("the value corpus is readable", cf ~= nil, corpus)
local seen = 0
for line in (cf and cf:lines() or function() end) do
  local k, v, want = line:match("^(%S+) '(.-)' (%S+)$")
  if not k then
    k, v, want = line:match("^(%S+) (%S+) (%S+)$")
  end
  if k and not line:match("^#") then
    local got = gate.check_value(k, v)
    check("corpus: " .. k .. "='" .. v .. "' " .. want, (got ~= nil) == (want == "ok"))
    seen = seen + 1
  end
end
check("the corpus has cases", seen > 30, seen)
check("KEYS: every writer known", (function()
  for _, spec in pairs(gate.KEYS) do
    if spec.writer ~= "user" and spec.writer ~= "gate" and spec.writer ~= "pin" then
      return false
    end
  end
  return true
end)())
local nolimit = {}
for k, v in pairs(conf) do
  nolimit[k] = v
end
nolimit.max_gpus = nil
nolimit.gpus_per_node = 8
ch, msg = gate.submit(nolimit, job({ tres_per_job = "gres:gpu:8192" }), parts, 1000)
check("more GPUs than a record may hold refused without max_gpus", ch == nil and msg:find("4096"), msg)

-- modify (non-operators)
local running = { partition = "batch", admin_comment = "ds:v=1;gpus=2;n=1;nr=0;r=0;b=1;s=0;g=node1@0,1;m=100;t=5" }
local function upd(t)
  local d = { min_nodes = NO_VAL, max_nodes = NO_VAL, num_tasks = NO_VAL, ntasks_per_node = NO_VAL16,
              requeue = NO_VAL16, shared = NO_VAL16, begin_time = 0 }
  for k, v in pairs(t) do
    d[k] = v
  end
  return gate.modify(conf, d, running, 1000)
end
local mch, code = upd({ comment = "ds:r=0;b=0;s=0;g=node1@0,1" })
check("forged pin by update refused", mch == nil and code == gate.E.ACCESS_DENIED)
mch = upd({ comment = "a note" })
check("plain comment update allowed", mch ~= nil)
mch, code = upd({ tres_per_node = "gres:gpu:4" })
check("GRES update refused", mch == nil and code == gate.E.INVALID_GRES)
mch, code = upd({ min_nodes = 3 })
check("node count update refused", mch == nil and code == gate.E.INVALID_NODE_COUNT)
mch, code = upd({ req_nodes = "node3" })
check("node list update refused", mch == nil and code == gate.E.ACCESS_DENIED)
mch, code = upd({ partition = "other" })
check("partition change refused", mch == nil and code == gate.E.INVALID_PARTITION)
mch, code = upd({ account = "beta" })
check("account change refused", mch == nil and code == gate.E.INVALID_ACCOUNT)
mch, code = upd({ requeue = 0 })
check("requeue flag change refused", mch == nil and code == gate.E.ACCESS_DENIED)
mch = upd({ begin_time = 7000 })
check("StartTime -> begin in the job's Comment (a user may not write AdminComment), still parked",
  mch and mch.begin_time == gate.PARK and mch.admin_comment == nil and mch.comment == "ds:begin=7000",
  mch and mch.comment)
mch = upd({ begin_time = 10 })
check("StartTime=now -> begin=0 (none)", mch and mch.comment == "ds:begin=0", mch and mch.comment)
running.comment = "ds:mem=4000;u=40"
mch = upd({ begin_time = 7000 })
check("StartTime keeps the Comment's hints", mch and mch.comment == "ds:mem=4000;u=40;begin=7000",
  mch and mch.comment)
running.comment = nil
mch = upd({ priority = 4294967295 })
check("release (user hold) allowed; the job stays parked for DeepShare (Slurm would start a job DeepShare preempted at once)",
  mch ~= nil and mch.begin_time == gate.PARK)
mch = upd({ priority = 0 })
check("a user's hold parks the job too (a parked hold is never DeepShare's own)", mch and mch.begin_time == gate.PARK)
mch = upd({ priority = NO_VAL })
check("no hold or release: nothing parked", mch and mch.begin_time == nil)
mch = upd({ time_limit = 60, dependency = "afterok:5" })
check("time limit and dependency allowed", mch ~= nil and mch.begin_time == nil)
local ungated = { partition = "batch", admin_comment = nil }
mch = gate.modify(conf, { priority = 4294967295, begin_time = 0 }, ungated, 1000)
check("release of a job without DeepShare's record: not parked (Slurm's to run)", mch and mch.begin_time == nil)
mch, code = upd({ min_mem_per_node = 32000 })
check("a memory update refused (the node mask is read once)", mch == nil and code == gate.E.ACCESS_DENIED)
mch, code = upd({ cpus_per_task = 16 })
check("a CPU update refused", mch == nil and code == gate.E.ACCESS_DENIED)
mch, code = upd({ pn_min_tmp_disk = 100000 })
check("a --tmp update refused", mch == nil and code == gate.E.ACCESS_DENIED)
mch = upd({ min_cpus = NO_VAL, cpus_per_task = NO_VAL16, pn_min_cpus = NO_VAL16, pn_min_tmp_disk = NO_VAL })
check("unset memory and CPU fields pass", mch ~= nil)
local other_job = { partition = "other", admin_comment = nil }
mch, code = gate.modify(conf, { partition = "batch", min_nodes = NO_VAL, begin_time = 0 }, other_job, 1000)
check("moving a job into a DeepShare partition refused", mch == nil and code == gate.E.INVALID_PARTITION)
mch = gate.modify(conf, { time_limit = 5, begin_time = 0 }, other_job, 1000)
check("other partition updates pass", mch ~= nil)

-- the entry points: fail closed, operators pass, fields written back
local desc = job({ tres_per_node = "gres:gpu:2" })
messages = {}
check("slurm_job_submit accepts", slurm_job_submit(desc, parts, 1001) == 0)
check("slurm_job_submit writes the record", desc.admin_comment == "ds:v=1;gpus=2;n=1;nr=0" and desc.tres_per_node == "")
desc = job({ tres_per_node = "gres:gpu:h100:1" })
messages = {}
check("slurm_job_submit refuses", slurm_job_submit(desc, parts, 1001) == gate.E.INVALID_GRES)
check("the refusal reaches the user", #messages == 1 and messages[1]:find("^DeepShare: "), messages[1])
local broken = setmetatable({}, { __index = function() error("boom") end })
messages = {}
check("an internal error refuses (fail closed)", slurm_job_submit(broken, parts, 1001) ~= 0)
check("... and says so", messages[1] and messages[1]:find("internal error"), messages[1])
local upd_desc = { tres_per_node = "gres:gpu:g0:1", min_nodes = NO_VAL, begin_time = 0 }
check("operators may update anything", slurm_job_modify(upd_desc, running, parts, 0) == 0)
check("users may not", slurm_job_modify(upd_desc, running, parts, 1001) == gate.E.INVALID_GRES)

os.remove(conf_file)
print(pass .. " passed, " .. fail .. " failed")
os.exit(fail == 0 and 0 or 1)
