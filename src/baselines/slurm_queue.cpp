#include "baselines/slurm_queue.hpp"

#include <algorithm>

#include <stdexcept>

namespace ds {

std::size_t SlurmQueue::class_of(const SlurmQueueClass& c) {
  auto [it, fresh] = index_.try_emplace(c, members_.size());
  if (fresh) members_.emplace_back();
  return it->second;
}

void SlurmQueue::list(JobId id, Entry& e, std::uint32_t priority) {
  e.listed = true;
  e.priority = priority;
  listed_.insert(SlurmQueueKey{priority, e.submit, id});
}

void SlurmQueue::add(JobId id, const SlurmQueueClass& c, Time submit) {
  Entry& e = entry_[id];
  if (e.queued) throw std::logic_error("slurm queue: job added twice");
  e = Entry{true, false, false, class_of(c), submit, 0};
  if (reference_)
    list(id, e, priority_(id));
  else
    members_[e.cls].emplace(submit, id);
  ++size_;
}

void SlurmQueue::add_kept(JobId id, const SlurmQueueClass& c, Time submit, std::uint32_t priority) {
  Entry& e = entry_[id];
  if (e.queued) throw std::logic_error("slurm queue: job added twice");
  e = Entry{true, true, false, class_of(c), submit, 0};
  list(id, e, priority);
  ++size_;
}

void SlurmQueue::remove(JobId id) {
  Entry& e = entry_[id];
  if (!e.queued) return;
  if (e.listed)
    listed_.erase(SlurmQueueKey{e.priority, e.submit, id});
  else
    members_[e.cls].erase({e.submit, id});
  e.queued = false;
  --size_;
}

void SlurmQueue::settle() {
  std::set<SlurmQueueKey> was;
  was.swap(listed_);
  for (const SlurmQueueKey& k : was) {
    Entry& e = entry_[k.job];
    e.kept = false;
    e.listed = false;
    if (reference_)
      list(k.job, e, priority_(k.job));
    else
      members_[e.cls].emplace(e.submit, k.job);
  }
}

namespace {
// std::push_heap keeps the largest in front: "larger" here is "earlier in the queue".
template <class H>
bool later(const H& a, const H& b) {
  return b.key < a.key;
}
}  // namespace

SlurmQueue::Walk::Walk(const SlurmQueue& q) : q_(q) {
  for (std::size_t c = 0; c < q_.members_.size(); ++c)
    if (!q_.members_[c].empty()) push(c, q_.members_[c].begin());
}

void SlurmQueue::Walk::push(std::size_t cls, Member it) {
  const JobId id = it->second;
  heap_.push_back(Head{SlurmQueueKey{q_.priority_(id), it->first, id}, cls, it});
  std::push_heap(heap_.begin(), heap_.end(), later<Head>);
}

std::optional<JobId> SlurmQueue::Walk::next() {
  const auto listed = last_ ? q_.listed_.upper_bound(*last_) : q_.listed_.begin();
  if (listed != q_.listed_.end() && (heap_.empty() || *listed < heap_.front().key)) {
    last_ = *listed;
    return listed->job;
  }
  if (heap_.empty()) return std::nullopt;
  std::pop_heap(heap_.begin(), heap_.end(), later<Head>);
  const Head h = heap_.back();
  heap_.pop_back();
  if (auto it = std::next(h.it); it != q_.members_[h.cls].end()) push(h.cls, it);
  last_ = h.key;
  return h.key.job;
}

}  // namespace ds
