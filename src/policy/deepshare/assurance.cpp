#include "policy/deepshare/assurance.hpp"

#include <algorithm>
#include <cmath>

namespace ds::deepshare {

double raw_assurance(const AssuranceInputs& in, const Config& c) {
  const std::int64_t entitled = std::min<std::int64_t>(in.quota, in.demand);
  const double share = entitled <= 0 ? 1.0 : std::min(1.0, static_cast<double>(in.held) / entitled);
  const double delay =
      in.slo <= 0 ? 1.0 : std::clamp(1.0 - static_cast<double>(in.oldest_wait) / in.slo, 0.0, 1.0);
  const double outlook =
      in.quota <= 0 ? 1.0 : std::clamp(1.0 - in.lent * (1.0 - in.lent_back) / in.quota, 0.0, 1.0);
  const double w = c.weight_share + c.weight_delay + c.weight_outlook;
  return (c.weight_share * share + c.weight_delay * delay + c.weight_outlook * outlook) / w;
}

AssuranceSignal::AssuranceSignal(std::size_t tenants, const Config& c)
    : c_(&c),
      value_(tenants, 1.0),
      at_risk_(tenants, false),
      last_(tenants, 0),
      started_(tenants, 0) {}

void AssuranceSignal::update(Time now, std::span<const AssuranceInputs> inputs) {
  for (std::size_t t = 0; t < inputs.size(); ++t) update(t, now, inputs[t]);
}

void AssuranceSignal::update(std::size_t t, Time now, const AssuranceInputs& in) {
  const double alpha =
      !started_[t] || c_->ewma_tau <= 0 ? 1.0 : decay_.alpha(now - last_[t], c_->ewma_tau);
  value_[t] += alpha * (raw_assurance(in, *c_) - value_[t]);
  if (value_[t] < c_->at_risk_below) at_risk_[t] = true;
  if (value_[t] > c_->healthy_above) at_risk_[t] = false;
  started_[t] = 1;
  last_[t] = now;
}

}  // namespace ds::deepshare
