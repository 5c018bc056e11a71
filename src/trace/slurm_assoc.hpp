// Tenants from Slurm's accounts: `sacctmgr show assoc --parsable2` (optionally
// `format=Cluster,Account,User,Partition,ParentName,Share,GrpTRES,QOS,DefaultQOS` or `tree`)
// and `sacctmgr show qos --parsable2` (docs/formats.md, "slurm").
//
// Assumptions (the controller's own rule, docs/slurm.md §4, extended to trees and QOS):
//  1. A tenant per account, except Slurm's own `root`. Account rows are the rows without a
//     User and without a Partition; user associations and partition-specific ones are not
//     read. One cluster per file (several are an error: dump one with cluster=NAME).
//  2. Quota = the account's GrpTRES gres/gpu; when its own QOS (its default QOS, else the
//     only QOS it may use, when no other account has it as its own) has a GrpTRES gres/gpu,
//     that one: Slurm applies a QOS limit before the association's. No GPU limit: quota 0.
//     Quota > 0: a guaranteed tenant, else best-effort.
//  3. Accounts form a tree (the ParentName column, else the indentation of `tree` output): a
//     parent's limit covers its whole subtree, so its children's quotas are capped by it (and
//     scaled down, largest remainder, when they add up to more) and the parent keeps the
//     rest for the jobs charged to it directly. Each change is noted.
//  4. Weight = the account's Share (Fairshare); "parent" takes the parent's, 0 or empty is 1.
//  5. The other tenant settings (SLO, checkpoint interval, tolerated slowdown) keep the
//     defaults of the cluster file: edit the written cluster.yaml to set them.
#pragma once

#include <string>
#include <vector>

#include "model/tenant.hpp"

namespace ds {

struct SlurmTenants {
  std::vector<Tenant> tenants;     // in file order; ids = index
  std::vector<std::string> notes;  // assumptions made (quota from a QOS, a scaled subtree)
};

// `qos_path` may be empty (no QOS limits known).
SlurmTenants read_slurm_tenants(const std::string& assoc_path, const std::string& qos_path);

}  // namespace ds
