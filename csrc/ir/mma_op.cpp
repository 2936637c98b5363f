#include <ir/mma_op.h>

#include <fusion.h>
#include <ir/builder.h>
#include <ir/cloner.h>
#include <ir/dispatch.h>
#include <ir/internal_nodes.h>

#include <algorithm>
#include <sstream>

namespace fuser {

std::string toString(MmaRole role) {
  switch (role) {
    case MmaRole::Batch:
      return "batch";
    case MmaRole::M:
      return "M";
    case MmaRole::N:
      return "N";
    case MmaRole::K:
      return "K";
  }
  return "?";
}

std::string MmaTileConfig::toString() const {
  std::stringstream ss;
  ss << m << " x " << n << " x " << k << ", " << stages << " stages";
  if (cluster > 1) {
    ss << ", clusters of " << cluster << " sharing B";
  }
  return ss.str();
}

MmaOp::MmaOp(
    Val* out, Val* a, Val* b, std::vector<MmaRole> a_roles,
    std::vector<MmaRole> b_roles)
    : a_roles_(std::move(a_roles)), b_roles_(std::move(b_roles)) {
  addOutput(out);
  addInput(a);
  addInput(b);
}

const std::vector<MmaRole>& MmaOp::roles(const TensorView* operand) const {
  FUSER_INTERNAL_ASSERT(
      operand == a() || operand == b(), operand->toString(),
      " is no operand of ", toString());
  return operand == a() ? a_roles_ : b_roles_;
}

std::vector<std::pair<size_t, size_t>> MmaOp::mappedAxes(
    const TensorView* producer) const {
  const std::vector<int64_t> positions = outputPositions(producer);
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t p = 0; p < positions.size(); ++p) {
    pairs.emplace_back(p, static_cast<size_t>(positions[p]));
  }
  return pairs;
}

std::vector<int64_t> MmaOp::outputPositions(const TensorView* operand) const {
  const std::vector<MmaRole>& roles_of = roles(operand);
  int64_t batches = 0;
  int64_t ms = 0;
  for (MmaRole role : a_roles_) {
    batches += role == MmaRole::Batch ? 1 : 0;
    ms += role == MmaRole::M ? 1 : 0;
  }
  int64_t ns = 0;
  for (MmaRole role : b_roles_) {
    ns += role == MmaRole::N ? 1 : 0;
  }
  // [Batch..., M..., N..., rK]
  int64_t batch = 0, m = 0, n = 0;
  std::vector<int64_t> positions;
  for (MmaRole role : roles_of) {
    switch (role) {
      case MmaRole::Batch:
        positions.push_back(batch++);
        break;
      case MmaRole::M:
        positions.push_back(batches + m++);
        break;
      case MmaRole::N:
        positions.push_back(batches + ms + n++);
        break;
      case MmaRole::K:
        positions.push_back(batches + ms + ns);
        break;
    }
  }
  return positions;
}

std::vector<IterDomain*> MmaOp::outputAxes(MmaRole role) const {
  const auto& logical = out()->getLogicalDomain();
  std::vector<IterDomain*> axes;
  auto collect = [&](const TensorView* operand) {
    const auto positions = outputPositions(operand);
    const auto& roles_of = roles(operand);
    for (size_t i = 0; i < roles_of.size(); ++i) {
      IterDomain* id = logical[static_cast<size_t>(positions[i])];
      if (roles_of[i] == role &&
          std::find(axes.begin(), axes.end(), id) == axes.end()) {
        axes.push_back(id);
      }
    }
  };
  collect(a());
  collect(b());
  return axes;
}

std::string MmaOp::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << out()->toString() << "\n"
     << indent(indent_size) << "   = mma(" << a()->toInlineString() << ", "
     << b()->toInlineString() << ", roles=";
  for (const auto* roles_of : {&a_roles_, &b_roles_}) {
    ss << "[";
    for (size_t i = 0; i < roles_of->size(); ++i) {
      ss << (i ? " " : "") << fuser::toString((*roles_of)[i]);
    }
    ss << "]";
  }
  if (tile_config_.has_value()) {
    ss << ", tile=" << tile_config_->toString();
  }
  ss << ")\n";
  return ss.str();
}

bool MmaOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const MmaOp*>(other);
  return op != nullptr && op->a_roles_ == a_roles_ &&
         op->b_roles_ == b_roles_ && op->tile_config_ == tile_config_;
}

void MmaOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* MmaOp::cloneWith(IrCloner& cloner) const {
  auto* copy = IrBuilder::createInContainer<MmaOp>(
      cloner.target(), cloner.clone(output(0)), cloner.clone(input(0)),
      cloner.clone(input(1)), a_roles_, b_roles_);
  if (tile_config_.has_value()) {
    copy->setTileConfig(*tile_config_);
  }
  return copy;
}

UnaryOp* onlyNarrowingCast(const MmaOp* mma) {
  const DataType operand = mma->a()->dtype();
  const auto& uses = mma->out()->uses();
  if ((operand != DataType::BFloat16 && operand != DataType::Half) ||
      uses.size() != 1 || mma->out()->isFusionOutput()) {
    return nullptr;
  }
  auto* cast = dynamic_cast<UnaryOp*>(uses.front());
  const bool narrows = cast != nullptr && cast->opType() == UnaryOpType::Cast &&
                       cast->out()->dtype() == operand;
  return narrows ? cast : nullptr;
}

Expr* onlyResultExpr(const MmaOp* mma) {
  if (UnaryOp* cast = onlyNarrowingCast(mma)) {
    return cast;
  }
  const auto& uses = mma->out()->uses();
  if (uses.size() != 1 || mma->out()->isFusionOutput()) {
    return nullptr;
  }
  auto* copy = dynamic_cast<LoadStoreOp*>(uses.front());
  auto* out =
      copy == nullptr ? nullptr : dynamic_cast<TensorView*>(copy->out());
  const bool plain_copy =
      out != nullptr && copy->opType() == LoadStoreOpType::Set &&
      !out->hasRoot() && out->dtype() == mma->out()->dtype();
  return plain_copy ? copy : nullptr;
}

} // namespace fuser
