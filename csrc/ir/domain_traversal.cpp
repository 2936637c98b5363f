#include <ir/domain_traversal.h>

#include <ir/all_nodes.h>

#include <algorithm>
#include <sstream>
#include <unordered_set>

namespace fuser {

std::string idsToString(const std::vector<IterDomain*>& ids) {
  std::stringstream ss;
  ss << "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    ss << (i ? ", " : "") << ids[i]->toString();
  }
  ss << "]";
  return ss.str();
}

namespace {

// Post-order walk from `to` back to `from`. Collects the exprs in
// topological order and the IDs that have no path back to `from`.
void walkBack(
    const std::vector<IterDomain*>& from, const std::vector<IterDomain*>& to,
    std::vector<Expr*>& exprs, std::vector<IterDomain*>& underived) {
  std::unordered_set<const Val*> from_set(from.begin(), from.end());
  std::unordered_set<const Statement*> visited;
  std::vector<std::pair<Statement*, bool>> stack;
  for (auto it = to.rbegin(); it != to.rend(); ++it) {
    stack.emplace_back(*it, false);
  }
  while (!stack.empty()) {
    auto [stmt, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      exprs.push_back(static_cast<Expr*>(stmt));
      continue;
    }
    if (!visited.insert(stmt).second) {
      continue;
    }
    if (stmt->isExpr()) {
      stack.emplace_back(stmt, true);
      const auto& inputs = static_cast<Expr*>(stmt)->inputs();
      for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
        stack.emplace_back(*it, false);
      }
      continue;
    }
    auto* id = static_cast<IterDomain*>(stmt);
    if (from_set.count(id)) {
      continue;
    }
    if (id->definition() == nullptr) {
      underived.push_back(id);
      continue;
    }
    stack.emplace_back(id->definition(), false);
  }
}

} // namespace

std::vector<Expr*> getExprsBetween(
    const std::vector<IterDomain*>& from, const std::vector<IterDomain*>& to) {
  std::vector<Expr*> exprs;
  std::vector<IterDomain*> underived;
  walkBack(from, to, exprs, underived);
  return exprs;
}

std::vector<IterDomain*> applyExprsToFrontier(
    const std::vector<IterDomain*>& ids, const std::vector<Expr*>& exprs) {
  std::vector<IterDomain*> frontier = ids;
  for (Expr* expr : exprs) {
    auto first = std::find(
        frontier.begin(), frontier.end(), expr->input(0)->as<IterDomain>());
    if (first == frontier.end()) {
      continue;
    }
    auto at = first - frontier.begin();
    for (size_t i = 1; i < expr->inputs().size(); ++i) {
      auto it = std::find(
          frontier.begin(), frontier.end(), expr->input(i)->as<IterDomain>());
      if (it != frontier.end()) {
        if (it - frontier.begin() < at) {
          --at;
        }
        frontier.erase(it);
      }
    }
    frontier.erase(frontier.begin() + at);
    std::vector<IterDomain*> outputs;
    for (Val* out : expr->outputs()) {
      outputs.push_back(out->as<IterDomain>());
    }
    frontier.insert(frontier.begin() + at, outputs.begin(), outputs.end());
  }
  return frontier;
}

void validateDomainEquivalence(
    const std::vector<IterDomain*>& from, const std::vector<IterDomain*>& to,
    const std::string& tensor_name, const std::string& what) {
  const std::string context = "Invalid " + what + " " + idsToString(to) +
                              " for " + tensor_name + " (logical domain " +
                              idsToString(from) + "): ";
  const std::string fix =
      " Build it with IterDomain::split/merge (or TensorView::split/merge) "
      "from this tensor's own logical IDs, using each exactly once.";

  for (IterDomain* id : to) {
    FUSER_CHECK(id != nullptr, context, "it contains a null ID.");
  }
  std::unordered_set<IterDomain*> to_set;
  for (IterDomain* id : to) {
    FUSER_CHECK(
        to_set.insert(id).second, context, id->toString(),
        " appears more than once.", fix);
  }

  std::vector<Expr*> exprs;
  std::vector<IterDomain*> underived;
  walkBack(from, to, exprs, underived);
  if (!underived.empty()) {
    std::stringstream ss;
    ss << context << idsToString(underived)
       << " is not derived from the logical domain of " << tensor_name
       << " (an ID of another tensor, or one created independently).";
    FUSER_CHECK(false, ss.str(), fix);
  }

  // Replay the exprs over the logical IDs; an input that is no longer in
  // the frontier was already consumed by another expr.
  std::vector<IterDomain*> frontier(from.begin(), from.end());
  auto erase = [&](IterDomain* id) {
    auto it = std::find(frontier.begin(), frontier.end(), id);
    if (it == frontier.end()) {
      return false;
    }
    frontier.erase(it);
    return true;
  };
  for (Expr* expr : exprs) {
    for (Val* input : expr->inputs()) {
      auto* id = input->as<IterDomain>();
      FUSER_CHECK(
          erase(id), context, id->toString(),
          " is used more than once (it feeds several IDs of the list).", fix);
    }
    for (Val* output : expr->outputs()) {
      frontier.push_back(output->as<IterDomain>());
    }
  }
  std::vector<IterDomain*> missing;
  for (IterDomain* id : frontier) {
    if (!to_set.count(id)) {
      missing.push_back(id);
    }
  }
  if (!missing.empty()) {
    std::stringstream ss;
    ss << context << "it does not cover the logical domain; missing "
       << idsToString(missing) << ".";
    FUSER_CHECK(false, ss.str(), fix);
  }
  // An ID of `to` that is also split or merged into other IDs of `to`
  // covers part of the logical domain twice.
  for (IterDomain* id : to) {
    FUSER_CHECK(
        std::find(frontier.begin(), frontier.end(), id) != frontier.end(),
        context, id->toString(),
        " is used more than once (it appears together with IDs derived from "
        "it).",
        fix);
  }
}

} // namespace fuser
