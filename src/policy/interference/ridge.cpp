#include "policy/interference/ridge.hpp"

#include <cmath>
#include <stdexcept>

namespace ds {

RidgeProblem::RidgeProblem(std::size_t columns)
    : p_(columns), xtx_(columns * columns, 0.0), xty_(columns, 0.0) {}

void RidgeProblem::add(const std::vector<double>& x, double y, double weight) {
  for (std::size_t i = 0; i < p_; ++i) {
    if (x[i] == 0) continue;  // one-hot columns are mostly zero
    const double wxi = weight * x[i];
    for (std::size_t j = 0; j < p_; ++j) xtx_[i * p_ + j] += wxi * x[j];
    xty_[i] += wxi * y;
  }
}

std::vector<double> RidgeProblem::solve(const std::vector<double>& penalty) const {
  std::vector<double> a = xtx_;
  for (std::size_t i = 0; i < p_; ++i) {
    a[i * p_ + i] += penalty[i];
    // An empty unpenalized column (e.g. a category absent from a fold): pin it to 0.
    if (a[i * p_ + i] == 0) a[i * p_ + i] = 1;
  }
  // Cholesky: a = L L' (L stored in the lower triangle of a).
  for (std::size_t j = 0; j < p_; ++j) {
    double d = a[j * p_ + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * p_ + k] * a[j * p_ + k];
    if (!(d > 1e-12)) throw std::logic_error("ridge: normal equations are singular");
    const double l = std::sqrt(d);
    a[j * p_ + j] = l;
    for (std::size_t i = j + 1; i < p_; ++i) {
      double s = a[i * p_ + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * p_ + k] * a[j * p_ + k];
      a[i * p_ + j] = s / l;
    }
  }
  std::vector<double> z(p_);
  for (std::size_t i = 0; i < p_; ++i) {
    double s = xty_[i];
    for (std::size_t k = 0; k < i; ++k) s -= a[i * p_ + k] * z[k];
    z[i] = s / a[i * p_ + i];
  }
  std::vector<double> b(p_);
  for (std::size_t i = p_; i-- > 0;) {
    double s = z[i];
    for (std::size_t k = i + 1; k < p_; ++k) s -= a[k * p_ + i] * b[k];
    b[i] = s / a[i * p_ + i];
  }
  return b;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace ds
