#include "baselines/queue_greedy.hpp"

#include <algorithm>
#include <functional>

namespace ds {

PreemptiveQueues::PreemptiveQueues(const PolicyContext& ctx, Scope scope)
    : parts_(ctx.cluster, ctx.tenants.size(), scope),
      free_(parts_.size()),
      parts_state_(parts_.size()),
      waiting_(parts_.size(), 0),
      where_(Where::None),
      restate_slot_(-1),
      changed_(parts_.size(), 0),
      stale_(parts_.size(), 1) {}

void PreemptiveQueues::touch(std::size_t p) {
  stale_[p] = 1;
  if (changed_[p]) return;
  changed_[p] = 1;
  changed_list_.push_back(static_cast<std::uint32_t>(p));
}

PreemptiveQueues::Class& PreemptiveQueues::class_for(Part& part, int gpus) {
  for (Class& c : part.pending)
    if (c.gpus == gpus) return c;
  part.pending.push_back(Class{gpus, {}});
  return part.pending.back();
}

void PreemptiveQueues::set_restate(std::size_t p, JobId id, bool on) {
  auto& list = parts_state_[p].restate;
  const std::int32_t k = restate_slot_[id];
  if (on == (k >= 0)) return;
  if (on) {
    restate_slot_[id] = static_cast<std::int32_t>(list.size());
    list.push_back(id);
    return;
  }
  list[static_cast<std::size_t>(k)] = list.back();
  restate_slot_[list[static_cast<std::size_t>(k)]] = k;
  list.pop_back();
  restate_slot_[id] = -1;
}

void PreemptiveQueues::unfile(const ClusterSnapshot& s, JobId id) {
  const JobSpec& j = s.jobs[id.index()];
  const std::size_t p = parts_.of(j);
  Part& part = parts_state_[p];
  switch (where_[id]) {
    case Where::Running:
      drop_run(part, key_[id]);
      break;
    case Where::Pending:
      class_for(part, j.gpus).jobs.erase({key_[id], id});
      --waiting_[p];
      set_restate(p, id, false);
      break;
    case Where::Limbo:
      if (limbo_waits_[id]) --waiting_[p];
      limbo_waits_[id] = 0;
      break;
    case Where::None:
      break;
  }
  where_[id] = Where::None;
}

void PreemptiveQueues::limbo(std::size_t p, JobId id, bool waits) {
  where_[id] = Where::Limbo;
  limbo_waits_[id] = waits ? 1 : 0;
  if (waits) ++waiting_[p];
  limbo_.push_back(id);
}

void PreemptiveQueues::file(const ClusterSnapshot& s, JobId id, Keys& keys,
                            std::optional<WaitReason> stated) {
  unfile(s, id);
  const JobSpec& j = s.jobs[id.index()];
  const JobRuntime& r = s.runtime[id.index()];
  const std::size_t p = parts_.of(j);
  Part& part = parts_state_[p];
  if (r.status == JobStatus::Running) {
    key_[id] = keys.running(s, id);
    add_run(part, {key_[id], j.gpus, id});
    where_[id] = Where::Running;
  } else if (r.status == JobStatus::Pending) {
    key_[id] = keys.pending(s, id);
    class_for(part, j.gpus).jobs.emplace(key_[id], id);
    where_[id] = Where::Pending;
    ++waiting_[p];
    set_restate(p, id, stated.value_or(r.wait) != WaitReason::Priority);
  }
}

void PreemptiveQueues::drop(const ClusterSnapshot& s, JobId id) {
  if (!known_[id]) return;
  unfile(s, id);
  known_[id] = 0;
  touch(parts_.of(s.jobs[id.index()]));
}

void PreemptiveQueues::intake(const ClusterSnapshot& s, Decisions& out, Keys& keys) {
  for (std::uint32_t p : changed_list_) changed_[p] = 0;
  changed_list_.clear();
  free_.sync(s, parts_);
  restaled_.clear();
  for (std::uint32_t p : free_.take_changed()) {
    stale_[p] = 1;
    restaled_.push_back(p);
  }
  // The jobs the last cycle started or preempted, and requeued ones, as the snapshot shows them.
  for (JobId id : limbo_)
    if (where_[id] == Where::Limbo) file(s, id, keys, std::nullopt);
  limbo_.clear();
  for (JobId id : s.requeued)
    if (known_[id]) file(s, id, keys, std::nullopt);
  for (const auto& f : s.finished) drop(s, f.job);
  for (JobId id : s.withdrawn) drop(s, id);
  for (JobId id : s.adopted) {  // running, started by an earlier policy object
    drop(s, id);
    known_[id] = 1;
    entry_[id] = next_entry_++;
    file(s, id, keys, std::nullopt);
    touch(parts_.of(s.jobs[id.index()]));
  }
  for (JobId id : s.arrived) {
    const JobSpec& j = s.jobs[id.index()];
    if (auto r = parts_.too_large(s, j)) {
      out.reject.push_back(std::move(*r));
      continue;
    }
    where_[id] = Where::None;  // a driver may reuse the id of a job that left
    known_[id] = 1;
    entry_[id] = next_entry_++;
    file(s, id, keys, WaitReason::Priority);
    touch(parts_.of(j));
    note_wait(out, id, WaitReason::Priority);
  }
  std::sort(changed_list_.begin(), changed_list_.end());
}

void PreemptiveQueues::stated(const ClusterSnapshot& s, JobId id, WaitReason r) {
  if (where_[id] == Where::Pending)
    set_restate(parts_.of(s.jobs[id.index()]), id, r != WaitReason::Priority);
}

void PreemptiveQueues::rekey_running(const ClusterSnapshot& s, JobId id, const WalkKey& key) {
  if (where_[id] != Where::Running) return;
  Part& part = parts_state_[parts_.of(s.jobs[id.index()])];
  drop_run(part, key_[id]);
  key_[id] = key;
  add_run(part, {key, s.jobs[id.index()].gpus, id});
}

namespace {
bool run_before(const PreemptiveQueues::Run& x, const WalkKey& k) {
  return x.key < k;
}
}  // namespace

void PreemptiveQueues::add_run(Part& part, const Run& r) {
  auto it = std::lower_bound(part.running.begin(), part.running.end(), r.key, run_before);
  part.running.insert(it, r);
  part.run_sums.clear();
}

void PreemptiveQueues::drop_run(Part& part, const WalkKey& key) {
  auto it = std::lower_bound(part.running.begin(), part.running.end(), key, run_before);
  if (it != part.running.end() && it->key == key) part.running.erase(it);
  part.run_sums.clear();
}

// Step 1 as a merge: the running jobs in order, and the first job of each GPU count that
// still fits the budget (a GPU count that no longer fits never does again in this walk).
void PreemptiveQueues::select(std::size_t p, std::int64_t shift) {
  preempt_.clear();
  prerun_.clear();
  heap_.clear();
  Part& part = parts_state_[p];
  const auto& run = part.running;
  auto& sums = part.run_sums;
  if (sums.size() != run.size() + 1) {
    sums.assign(run.size() + 1, 0);
    for (std::size_t k = 0; k < run.size(); ++k) sums[k + 1] = sums[k] + run[k].gpus;
  }
  int budget = parts_.capacity(p);
  for (std::uint32_t c = 0; c < part.pending.size(); ++c)
    if (!part.pending[c].jobs.empty() && part.pending[c].gpus <= budget)
      heap_.push_back({*part.pending[c].jobs.begin(), c});
  const auto later = [](const auto& x, const auto& y) { return y.first < x.first; };
  std::make_heap(heap_.begin(), heap_.end(), later);
  std::size_t i = 0;  // the next running job
  for (;;) {
    while (!heap_.empty() && part.pending[heap_.front().second].gpus > budget) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
    }
    // The running jobs before the next pending one (a running key is read as a - shift).
    std::size_t j = run.size();
    if (!heap_.empty()) {
      WalkKey next = heap_.front().first.first;
      next.a += shift;
      j = static_cast<std::size_t>(std::lower_bound(run.begin() + static_cast<std::ptrdiff_t>(i),
                                                    run.end(), next, run_before) -
                                   run.begin());
    }
    for (; i < j; ++i) {
      if (sums[j] - sums[i] <= budget) {  // the rest of them fit: all kept
        budget -= sums[j] - sums[i];
        i = j;
        break;
      }
      if (run[i].gpus <= budget)
        budget -= run[i].gpus;
      else
        preempt_.push_back(run[i].id);
    }
    if (heap_.empty()) break;
    if (part.pending[heap_.front().second].gpus > budget) continue;  // no longer fits
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const auto [entry, c] = heap_.back();
    heap_.pop_back();
    prerun_.push_back(entry.second);
    selected_[entry.second] = walk_;
    const Class& cls = part.pending[c];
    budget -= cls.gpus;
    if (auto after = cls.jobs.upper_bound(entry); after != cls.jobs.end()) {
      heap_.push_back({*after, c});
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
}

void PreemptiveQueues::place(std::size_t p, const ClusterSnapshot& s, FreeMap& free,
                             Decisions& out) {
  // Left out of the budget: Priority, for the jobs whose reason last stated was another.
  behind_.clear();
  for (JobId id : parts_state_[p].restate)
    if (selected_[id] != walk_) behind_.emplace_back(key_[id], id);
  std::sort(behind_.begin(), behind_.end());
  for (const auto& [key, id] : behind_) {
    note_wait(out, id, WaitReason::Priority);
    set_restate(p, id, false);
  }
  for (JobId id : prerun_) {
    const JobSpec& j = s.jobs[id.index()];
    if (try_start(j, free, free_.set(p), out)) {
      entry_[id] = next_entry_++;
      unfile(s, id);
      limbo(p, id, false);
    } else {
      note_wait(out, id, room_reason(free.set_free_gpus(free_.set(p)), j));
      set_restate(p, id, true);
    }
  }
}

}  // namespace ds
