#include <ir/external_op.h>

#include <ir/builder.h>
#include <ir/cloner.h>
#include <ir/dispatch.h>

#include <sstream>

namespace fuser {

std::string toString(ExternalOpType type) {
  switch (type) {
    case ExternalOpType::TopK:
      return "topk";
    case ExternalOpType::ArgSort:
      return "argsort";
    case ExternalOpType::GroupedMm:
      return "grouped_mm";
    case ExternalOpType::Embedding:
      return "embedding";
    case ExternalOpType::SdpaFlashForward:
      return "sdpfa_fwd";
    case ExternalOpType::SdpaFlashBackward:
      return "sdpfa_bwd";
  }
  return "?";
}

ExternalOp::ExternalOp(
    ExternalOpType type, const std::vector<Val*>& outputs,
    const std::vector<Val*>& inputs, std::vector<int64_t> attributes)
    : type_(type), attributes_(std::move(attributes)) {
  for (Val* out : outputs) {
    addOutput(out);
  }
  for (Val* in : inputs) {
    addInput(in);
  }
}

int64_t ExternalOp::attribute(size_t i) const {
  FUSER_INTERNAL_ASSERT(
      i < attributes_.size(), fuser::toString(type_), " has ",
      attributes_.size(), " attributes, not ", i + 1);
  return attributes_[i];
}

std::vector<std::pair<size_t, size_t>> ExternalOp::mappedAxes(
    const TensorView*) const {
  return {};
}

std::string ExternalOp::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size);
  for (size_t i = 0; i < outputs().size(); ++i) {
    ss << (i ? ", " : "") << output(i)->toString();
  }
  ss << "\n" << indent(indent_size) << "   = " << fuser::toString(type_) << "(";
  for (size_t i = 0; i < inputs().size(); ++i) {
    ss << (i ? ", " : "") << input(i)->toInlineString();
  }
  if (!attributes_.empty()) {
    ss << ", attributes=[";
    for (size_t i = 0; i < attributes_.size(); ++i) {
      ss << (i ? ", " : "") << attributes_[i];
    }
    ss << "]";
  }
  ss << ")\n";
  return ss.str();
}

bool ExternalOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const ExternalOp*>(other);
  return op != nullptr && op->opType() == type_ &&
         op->attributes() == attributes_;
}

void ExternalOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ExternalOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<ExternalOp>(
      cloner.target(), type_, cloner.clone(outputs()), cloner.clone(inputs()),
      attributes_);
}

} // namespace fuser
