#include <device_lower/kir_mma.h>

#include <ir/builder.h>
#include <ir/dispatch.h>

#include <sstream>

namespace fuser::kir {

std::string MmaPipelineInit::toString(int indent_size) const {
  return indent(indent_size) + "MMA_PIPELINE_INIT\n";
}

void MmaPipelineInit::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* MmaPipelineInit::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

std::string MmaRoleStart::toString(int indent_size) const {
  return indent(indent_size) + "MMA_ROLE " +
         (producer_ ? "producer" : "consumer") + "\n";
}

void MmaRoleStart::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* MmaRoleStart::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

MmaTile::MmaTile(
    Role role, TensorView* acc, Val* m0, Val* n0, std::vector<Val*> batch,
    Val* k_tiles, Val* valid)
    : role_(role),
      acc_(acc),
      m0_(m0),
      n0_(n0),
      batch_(std::move(batch)),
      k_tiles_(k_tiles),
      valid_(valid) {}

MmaTile* MmaTile::withRole(Role role) const {
  return IrBuilder::create<MmaTile>(
      role, acc_, m0_, n0_, batch_, k_tiles_, valid_);
}

std::string MmaTile::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << "MMA_TILE "
     << (role_ == Role::Load ? "load"
                             : "compute T" + std::to_string(acc_->name()))
     << " at (" << m0_->toInlineString() << ", " << n0_->toInlineString();
  for (Val* b : batch_) {
    ss << ", " << b->toInlineString();
  }
  ss << "), " << k_tiles_->toInlineString() << " k-steps, if "
     << valid_->toInlineString() << "\n";
  return ss.str();
}

void MmaTile::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* MmaTile::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

} // namespace fuser::kir
