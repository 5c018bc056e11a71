// Tenant names that a person would read as one: equal after Unicode NFKC case folding
// (ICU's NFKC_Casefold), with surrounding white space removed. "teamA", "TEAMA", "teamA "
// and "team\u0041" (a decomposed or compatibility form) all fold to one key.
//
// Why: the cluster file used to accept "teamA" and "teama" as two tenants, and a trace's
// "teamA " then matched neither silently-meant one. Now a cluster file refuses two tenants
// whose names fold alike, and a name with leading or trailing white space; an unknown
// tenant's message names the defined tenant it folds like ("did you mean 'teamA'?").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ds {

// The folded key of `name`; nullopt when `name` is not valid UTF-8.
std::optional<std::string> fold_name(std::string_view name);

// Whether `name` starts or ends with white space (any Unicode white space).
bool has_outer_space(std::string_view name);

}  // namespace ds
