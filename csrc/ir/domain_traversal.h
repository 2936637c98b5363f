// Walking the Split/Merge exprs that connect two lists of IterDomains, and
// checking that one list covers another exactly. doc/design.md §1 (invariants).
#pragma once

#include <ir/internal_base_nodes.h>

#include <string>
#include <vector>

namespace fuser {

// The Split/Merge exprs on paths from `from` to `to`, in topological order:
// found by walking definitions backwards from `to` and stopping at IDs of
// `from`. IDs of `to` that are not derived from `from` contribute nothing.
std::vector<Expr*> getExprsBetween(
    const std::vector<IterDomain*>& from, const std::vector<IterDomain*>& to);

// Checks that `to` covers `from` exactly: every ID of `to` is derived from
// `from`, every ID of `from` is reached (none dropped), and no ID is used
// twice. Raises a user error naming `tensor_name`, `what` (e.g. "allocation
// domain") and the offending IDs.
void validateDomainEquivalence(
    const std::vector<IterDomain*>& from, const std::vector<IterDomain*>& to,
    const std::string& tensor_name, const std::string& what);

// `ids` with `exprs` applied in order: each expr's outputs take the place of
// its first input and its other inputs are removed. Exprs whose first input
// is not in the list are ignored.
std::vector<IterDomain*> applyExprsToFrontier(
    const std::vector<IterDomain*>& ids, const std::vector<Expr*>& exprs);

// "[iS0{6}, iS1{4}]"
std::string idsToString(const std::vector<IterDomain*>& ids);

} // namespace fuser
