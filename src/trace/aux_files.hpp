// Reads the auxiliary files of a trace folder into AuxData (model/aux_data.hpp).
#pragma once

#include <string>

#include "model/aux_data.hpp"

namespace ds {

// File names inside an aux folder.
inline constexpr const char* kLgbEstimateFile = "Venus_Sept_lgb.csv";
inline constexpr const char* kEbmEstimateFile = "Venus_Sept_ebm_weekly_updated.csv";
inline constexpr const char* kForecastFile = "Venus_throughput_pred.csv";

// Reads every known file present in `dir` (empty `dir`: nothing). Throws InputError
// when `dir` is given but is not a folder, or a present file is malformed.
AuxData load_aux(const std::string& dir);

EstimateFile read_estimate_file(const std::string& path);
ForecastFile read_forecast_file(const std::string& path);

}  // namespace ds
