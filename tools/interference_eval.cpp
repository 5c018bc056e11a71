// interference_eval: fits the interference model on Lucid's measured pairs and prints
// its cross-validated error beside the trivial baseline (docs/interference.md).
//
// Usage: interference_eval [AUX_DIR] [--ridge X] [--folds K] [--seed S] [--coefficients]
// AUX_DIR defaults to $DEEPSHARE_SHARED_DIR/traces/venus-sept/aux; exits 0 with a
// message when the data is absent (it is never copied into the project).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "policy/interference/interference.hpp"

int main(int argc, char** argv) {
  std::string aux = std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept/aux";
  ds::InterferenceOptions opt;
  bool coefficients = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ridge" && i + 1 < argc) {
      opt.ridge = std::atof(argv[++i]);
    } else if (a == "--folds" && i + 1 < argc) {
      opt.folds = static_cast<std::size_t>(std::atol(argv[++i]));
    } else if (a == "--seed" && i + 1 < argc) {
      opt.seed = static_cast<std::uint64_t>(std::atoll(argv[++i]));
    } else if (a == "--coefficients") {
      coefficients = true;
    } else if (!a.empty() && a[0] != '-') {
      aux = a;
    } else {
      std::fprintf(stderr,
                   "usage: %s [AUX_DIR] [--ridge X] [--folds K] [--seed S] [--coefficients]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!ds::ColocationTable::available(aux)) {
    std::printf("skipped: no colocate_info.csv and single_data.csv in %s\n", aux.c_str());
    return 0;
  }
  try {
    const auto table = ds::ColocationTable::load(aux);
    const auto fit = ds::fit_interference(&table, opt);
    std::printf("pairs %zu (%zu speeds), %zu-fold CV (seed %llu), ridge %g\n", fit.pairs,
                2 * fit.pairs, fit.folds, static_cast<unsigned long long>(opt.seed), opt.ridge);
    std::printf("| predictor | held-out pairs: MAE of speed |\n|---|---|\n");
    std::printf("| mean speed (trivial) | %.4f |\n", fit.cv_mae_mean);
    std::printf("| util/memory model (fallback) | %.4f |\n", fit.cv_mae_util_only);
    std::printf("| profile model | %.4f |\n", fit.cv_mae);
    std::printf("leave-one-model-family-out: util/memory fallback %.4f, mean speed %.4f\n",
                fit.cv_mae_unseen_model, fit.cv_mae_unseen_model_mean);
    if (coefficients) {
      std::printf("util/memory coefficients:");
      for (double c : fit.util_coefficients) std::printf(" %.6f", c);
      std::printf("\n");
    }
  } catch (const ds::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
