// FIFO baselines that prove the engine.
//
// fifo-isolated — Lucid's FIFO (Lucid artifact, simulation/policy/fifo.py, with
// placer/consolidate.py), the policy of the DeepShare paper's "FIFO" rows:
//  1. Each tenant schedules only on the nodes of its own virtual cluster.
//  2. Its queue is ordered by submit time, ties in trace order (Lucid's stable list sort).
//  3. Each cycle, start queued jobs in order with consolidate placement and stop at the
//     first that does not fit (head-of-line blocking, no backfill).
//  Deliberate differences: a job larger than its tenant's whole virtual cluster is
//  rejected at arrival (Lucid would block that VC forever and never terminate); a
//  cluster where no node belongs to a tenant (no virtual clusters, e.g. Alibaba openb)
//  is one queue over all nodes, still head-of-line.
//  Both profiles are the shared ordered queue + start loop of queue.hpp.
//
// fifo-pooled — one shared pool, FIFO order with greedy backfill:
//  1. One queue for all tenants, ordered by submit time.
//  2. Each cycle, try every queued job in order on all nodes (consolidate placement) and
//     start each that fits now; a job that does not fit does not block later ones.
//  Options: backfill=off turns it into strict FIFO on the pool. There is no reservation
//  for the queue head (EASY backfill needs run-time estimates, which FIFO has not), so a
//  large job can wait while smaller ones pass it: the known cost of greedy backfill.
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace ds {

std::unique_ptr<Policy> make_fifo_isolated(const PolicyContext& ctx);
std::unique_ptr<Policy> make_fifo_pooled(const PolicyContext& ctx);

}  // namespace ds
