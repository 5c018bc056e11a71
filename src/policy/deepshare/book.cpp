#include "policy/deepshare/book.hpp"

#include <algorithm>
#include <cmath>

#include "model/execution.hpp"

namespace ds::deepshare {

Book::Book(const Config& c, std::size_t tenants)
    : c_(c), tenants_(tenants), assurance_marks_(tenants), lending_marks_(tenants) {}

void Book::subtree_use(std::vector<std::int64_t>& out) const {
  std::vector<std::int64_t> own(tenants_.size());
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    own[t] = std::int64_t{tenants_[t].guaranteed} + tenants_[t].borrowed;
  tree_.subtree_sums(own, out);
}

void Book::grow(std::size_t jobs) {
  if (job_.size() < jobs) job_.resize(jobs);
}

double Book::order(const JobSpec& j) const {
  const double gpus = static_cast<double>(share(j)) / kMilliPerGpu;
  return c_.prediction ? to_seconds(job_[j.id.index()].predicted) * gpus
                       : static_cast<double>(j.submit);  // FIFO
}

double Book::key(const JobSpec& j, Time attained) const {
  const double gpus = static_cast<double>(share(j)) / kMilliPerGpu;
  const bool fresh = !c_.time_slicing || to_seconds(attained) * gpus < c_.fresh_gpu_s;
  return (fresh ? 0.0 : kLongRun) + order(j);
}

void Book::repredict(const JobSpec& j, Time predicted) {
  JobState& js = job_[j.id.index()];
  js.predicted = predicted;
  if (!js.queued || js.entitled) return;  // entitled jobs wait in submit order
  TenantBook& t = tenants_[j.tenant.index()];
  t.others.erase({js.key, j.submit, j.id});
  js.key = (js.key >= kLongRun ? kLongRun : 0.0) + order(j);
  t.others.insert({js.key, j.submit, j.id});
  ++t.queue_epoch;
  touch(j.tenant.index());
}

void Book::enqueue(const JobSpec& j, Time now, Time attained) {
  TenantBook& t = tenants_[j.tenant.index()];
  JobState& js = job_[j.id.index()];
  js.key = key(j, attained);
  js.queued = true;
  ++t.queue_epoch;
  touch(j.tenant.index());
  js.queued_since = now;
  t.pending_gpus += share(j);
  if (js.submit_entitled) t.queued_submit_entitled += share(j);  // as ClusterState counts them
  if (js.entitled) {
    t.entitled.insert({j.submit, j.id});
    t.queued_entitled += share(j);
    entitled_tenants_.insert(j.tenant.index());
  } else {
    t.others.insert({js.key, j.submit, j.id});
    t.waiting.insert({now, j.id});
    other_tenants_.insert(j.tenant.index());
  }
}

void Book::dequeue(const JobSpec& j) {
  TenantBook& t = tenants_[j.tenant.index()];
  JobState& js = job_[j.id.index()];
  js.queued = false;
  ++t.queue_epoch;
  touch(j.tenant.index());
  t.pending_gpus -= share(j);
  if (js.submit_entitled) t.queued_submit_entitled -= share(j);
  if (js.entitled) {
    t.entitled.erase({j.submit, j.id});
    t.queued_entitled -= share(j);
    if (t.entitled.empty()) entitled_tenants_.erase(j.tenant.index());
  } else {
    t.others.erase({js.key, j.submit, j.id});
    t.waiting.erase({js.queued_since, j.id});
    if (t.others.empty()) other_tenants_.erase(j.tenant.index());
  }
}

bool Book::entitled_at_submit(const ClusterSnapshot& s, const JobSpec& j) const {
  const TenantBook& t = tenants_[j.tenant.index()];
  return ds::entitled_at_submit(t.guaranteed, t.queued_submit_entitled, share(j),
                                quota(s, j.tenant.index()));
}

void EndIndex::add(Time end, int share) {
  if (end < mark_)
    overdue_ += share;
  else
    ends_[end] += share;
}

void EndIndex::remove(Time end, int share) {
  if (end < mark_) {
    overdue_ -= share;
    return;
  }
  auto it = ends_.find(end);
  if (it != ends_.end() && (it->second -= share) == 0) ends_.erase(it);
}

int EndIndex::within(Time now, Time horizon) {
  while (!ends_.empty() && ends_.begin()->first < now) {
    overdue_ += ends_.begin()->second;
    ends_.erase(ends_.begin());
  }
  mark_ = std::max(mark_, now);
  int sum = overdue_;
  for (auto it = ends_.begin(); it != ends_.end() && it->first <= now + horizon; ++it)
    sum += it->second;
  return sum;
}

void Book::add_borrowed(const ClusterSnapshot& s, JobId id) {
  JobState& js = job_[id.index()];
  const JobSpec& j = s.jobs[id.index()];
  tenants_[j.tenant.index()].borrowed += share(j);
  borrowed_sum_ += share(j);
  borrowed_running_.insert(id);
  if (js.borrow_pos == kNoPos) {
    js.borrow_pos = static_cast<std::uint32_t>(borrowed_runs_.size());
    borrowed_runs_.push_back({id, j.gpus, js.predicted});
  }
  ++borrowed_version_;
  touch(j.tenant.index());
  js.borrow_end = js.started_at + std::max<Time>(0, js.predicted - js.attained0);
  ends_.add(js.borrow_end, share(j));
}

void Book::remove_borrowed(const ClusterSnapshot& s, JobId id) {
  const JobSpec& j = s.jobs[id.index()];
  tenants_[j.tenant.index()].borrowed -= share(j);
  borrowed_sum_ -= share(j);
  borrowed_running_.erase(id);
  if (const std::uint32_t pos = job_[id.index()].borrow_pos; pos != kNoPos) {
    borrowed_runs_[pos] = borrowed_runs_.back();
    job_[borrowed_runs_[pos].id.index()].borrow_pos = pos;
    borrowed_runs_.pop_back();
    job_[id.index()].borrow_pos = kNoPos;
  }
  ++borrowed_version_;
  ends_.remove(job_[id.index()].borrow_end, share(j));
}

void Book::set_away(JobId id, bool away) {
  if (away)
    away_running_.insert(id);
  else
    away_running_.erase(id);
}

double Book::progress(const ClusterSnapshot& s, JobId id) const {
  const JobState& js = job_[id.index()];
  if (s.runtime[id.index()].status != JobStatus::Running) return js.prog;
  return js.prog + static_cast<double>(s.now - js.prog_at) * js.prog_speed;
}

void Book::settle(JobId id, Time now, double speed) {
  JobState& js = job_[id.index()];
  js.prog += static_cast<double>(now - js.prog_at) * js.prog_speed;
  js.prog_at = now;
  js.prog_speed = speed;
}

Time Book::lost_now(const ClusterSnapshot& s, JobId id) const {
  const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
  const double done = progress(s, id);
  if (interval <= 0 || done <= 0) return 0;
  return static_cast<Time>(std::llround(done - checkpoint_kept(done, interval)));
}

// Wall time at which the running job's progress reaches its next checkpoint at or after
// `from` (at its current rate).
Time Book::next_checkpoint(const ClusterSnapshot& s, JobId id, Time from) const {
  const JobRuntime& r = s.runtime[id.index()];
  const JobState& js = job_[id.index()];
  from = std::max(from, s.now);
  const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
  if (interval <= 0 || r.status != JobStatus::Running || js.prog_speed <= 0) return from;
  const double done = progress(s, id) + static_cast<double>(from - s.now) * js.prog_speed;
  const double next = (std::floor(std::max(0.0, done) / interval) + 1) * interval;
  return from + static_cast<Time>(std::ceil((next - done) / js.prog_speed));
}

double Book::cost_of(const ClusterSnapshot& s, JobId id) const {
  const JobSpec& v = s.jobs[id.index()];
  return to_seconds(lost_now(s, id) + restart_overhead(v.gpus)) * v.gpus;
}

Time Book::remaining(const JobRuntime& r, Time now, Time predicted) {
  const Time ran = r.attained + (now - r.last_start);
  return std::max<Time>(kMinute, predicted - ran);
}

}  // namespace ds::deepshare
