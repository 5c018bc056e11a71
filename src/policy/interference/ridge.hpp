// Ridge least squares, small and dense: the interference model's only fitting tool.
//
// Solves min_b sum_i (y_i - x_i . b)^2 + sum_k penalty_k * b_k^2 through the normal
// equations (X'X + diag(penalty)) b = X'y and a Cholesky factorization. Problems here
// have at most a few hundred columns, so O(n p^2 + p^3) is instant, and the code stays
// deterministic (fixed summation order) with no external library.
#pragma once

#include <cstddef>
#include <vector>

namespace ds {

class RidgeProblem {
 public:
  explicit RidgeProblem(std::size_t columns);
  // Adds one observation; `x` has columns() entries.
  void add(const std::vector<double>& x, double y, double weight = 1.0);
  [[nodiscard]] std::size_t columns() const { return p_; }
  // Coefficients; a column never seen and unpenalized gets 0. `penalty` has columns()
  // entries (0 for the intercept). Throws std::logic_error if the system is singular.
  [[nodiscard]] std::vector<double> solve(const std::vector<double>& penalty) const;

 private:
  std::size_t p_;
  std::vector<double> xtx_;  // p x p, row-major
  std::vector<double> xty_;
};

double dot(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace ds
