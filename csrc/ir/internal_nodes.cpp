#include <ir/internal_nodes.h>

#include <fusion.h>
#include <ir/builder.h>
#include <ir/cloner.h>
#include <ir/dispatch.h>

#include <algorithm>
#include <sstream>

namespace fuser {

namespace {

std::string opLine(
    int indent_size, const Expr* expr, const std::string& op,
    const std::vector<std::string>& extra = {}) {
  std::stringstream ss;
  ss << indent(indent_size);
  for (size_t i = 0; i < expr->outputs().size(); ++i) {
    ss << (i ? ", " : "") << expr->output(i)->toString();
  }
  ss << "\n" << indent(indent_size) << "   = " << op << "(";
  for (size_t i = 0; i < expr->inputs().size(); ++i) {
    ss << (i ? ", " : "") << expr->input(i)->toInlineString();
  }
  for (const auto& e : extra) {
    ss << ", " << e;
  }
  ss << ")\n";
  return ss.str();
}

} // namespace

// ---------------------------------------------------------------- LoadStoreOp
LoadStoreOp::LoadStoreOp(
    LoadStoreOpType op_type, Val* out, Val* in, CacheOp cache_op)
    : op_type_(op_type), cache_op_(cache_op) {
  addOutput(out);
  addInput(in);
}

std::string LoadStoreOp::toString(int indent_size) const {
  std::vector<std::string> extra;
  if (cache_op_ != CacheOp::Unspecified) {
    extra.push_back("cache_op=" + fuser::toString(cache_op_));
  }
  return opLine(indent_size, this, fuser::toString(op_type_), extra);
}

bool LoadStoreOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const LoadStoreOp*>(other);
  return op != nullptr && op->opType() == op_type_ &&
         op->cacheOp() == cache_op_;
}

void LoadStoreOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* LoadStoreOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<LoadStoreOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(in()),
      cache_op_);
}

// ---------------------------------------------------------------- UnaryOp
UnaryOp::UnaryOp(UnaryOpType op_type, Val* out, Val* in) : op_type_(op_type) {
  addOutput(out);
  addInput(in);
}

std::string UnaryOp::toString(int indent_size) const {
  if (op_type_ == UnaryOpType::Cast) {
    return opLine(
        indent_size, this, "cast",
        {"dtype=" + fuser::toString(out()->dtype())});
  }
  return opLine(indent_size, this, fuser::toString(op_type_));
}

std::string UnaryOp::toInlineString() const {
  return fuser::toString(op_type_) + "(" + in()->toInlineString() + ")";
}

bool UnaryOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const UnaryOp*>(other);
  return op != nullptr && op->opType() == op_type_ &&
         op->out()->dtype() == out()->dtype();
}

void UnaryOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* UnaryOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<UnaryOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(in()));
}

// ---------------------------------------------------------------- BinaryOp
BinaryOp::BinaryOp(BinaryOpType op_type, Val* out, Val* lhs, Val* rhs)
    : op_type_(op_type) {
  addOutput(out);
  addInput(lhs);
  addInput(rhs);
}

std::string BinaryOp::toString(int indent_size) const {
  if (out()->isScalar()) {
    return indent(indent_size) + out()->toString() + " = " + toInlineString() +
           "\n";
  }
  return opLine(indent_size, this, fuser::toString(op_type_));
}

std::string BinaryOp::toInlineString() const {
  const std::string a = lhs()->toInlineString();
  const std::string b = rhs()->toInlineString();
  switch (op_type_) {
    case BinaryOpType::Add:
      return "( " + a + " + " + b + " )";
    case BinaryOpType::Sub:
      return "( " + a + " - " + b + " )";
    case BinaryOpType::Mul:
      return "( " + a + " * " + b + " )";
    case BinaryOpType::Div:
      return "( " + a + " / " + b + " )";
    case BinaryOpType::Mod:
      return "( " + a + " % " + b + " )";
    case BinaryOpType::Lt:
      return "( " + a + " < " + b + " )";
    case BinaryOpType::Le:
      return "( " + a + " <= " + b + " )";
    case BinaryOpType::Gt:
      return "( " + a + " > " + b + " )";
    case BinaryOpType::Ge:
      return "( " + a + " >= " + b + " )";
    case BinaryOpType::Eq:
      return "( " + a + " == " + b + " )";
    case BinaryOpType::Ne:
      return "( " + a + " != " + b + " )";
    case BinaryOpType::LogicalAnd:
      return "( " + a + " && " + b + " )";
    case BinaryOpType::LogicalOr:
      return "( " + a + " || " + b + " )";
    default:
      return fuser::toString(op_type_) + "(" + a + ", " + b + ")";
  }
}

bool BinaryOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const BinaryOp*>(other);
  return op != nullptr && op->opType() == op_type_;
}

void BinaryOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* BinaryOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<BinaryOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(lhs()),
      cloner.clone(rhs()));
}

// ---------------------------------------------------------------- TernaryOp
TernaryOp::TernaryOp(
    TernaryOpType op_type, Val* out, Val* in1, Val* in2, Val* in3)
    : op_type_(op_type) {
  addOutput(out);
  addInput(in1);
  addInput(in2);
  addInput(in3);
}

std::string TernaryOp::toString(int indent_size) const {
  return opLine(indent_size, this, fuser::toString(op_type_));
}

std::string TernaryOp::toInlineString() const {
  return fuser::toString(op_type_) + "(" + input(0)->toInlineString() + ", " +
         input(1)->toInlineString() + ", " + input(2)->toInlineString() + ")";
}

bool TernaryOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const TernaryOp*>(other);
  return op != nullptr && op->opType() == op_type_;
}

void TernaryOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* TernaryOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<TernaryOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(input(0)),
      cloner.clone(input(1)), cloner.clone(input(2)));
}

// ---------------------------------------------------------------- BroadcastOp
BroadcastOp::BroadcastOp(Val* out, Val* in, std::vector<bool> is_broadcast_dims)
    : is_broadcast_dims_(std::move(is_broadcast_dims)) {
  addOutput(out);
  addInput(in);
}

std::string BroadcastOp::toString(int indent_size) const {
  std::stringstream flags;
  flags << "flags={";
  for (size_t i = 0; i < is_broadcast_dims_.size(); ++i) {
    flags << (i ? ", " : "") << (is_broadcast_dims_[i] ? "true" : "false");
  }
  flags << "}";
  return opLine(indent_size, this, "broadcast", {flags.str()});
}

std::vector<std::pair<size_t, size_t>> BroadcastOp::mappedAxes(
    const TensorView* producer) const {
  const size_t rank =
      TensorDomain::noReductions(producer->getLogicalDomain()).size();
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t c = 0; c < is_broadcast_dims_.size(); ++c) {
    if (!is_broadcast_dims_[c]) {
      pairs.emplace_back(pairs.size(), c);
    }
  }
  FUSER_INTERNAL_ASSERT(
      pairs.size() == rank, "rank mismatch between ", producer->toString(),
      " and ", out()->toString());
  return pairs;
}

bool BroadcastOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const BroadcastOp*>(other);
  return op != nullptr && op->getBroadcastDimFlags() == is_broadcast_dims_;
}

void BroadcastOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* BroadcastOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<BroadcastOp>(
      cloner.target(), cloner.clone(out()), cloner.clone(in()),
      is_broadcast_dims_);
}

// ------------------------------------------------------------------- ExpandOp
ExpandOp::ExpandOp(Val* out, Val* in) {
  addOutput(out);
  addInput(in);
}

std::vector<int64_t> ExpandOp::expandedAxes() const {
  const auto in_ids =
      TensorDomain::noReductions(in()->as<TensorView>()->getLogicalDomain());
  const auto out_ids =
      TensorDomain::noReductions(out()->as<TensorView>()->getLogicalDomain());
  std::vector<int64_t> axes;
  for (size_t p = 0; p < in_ids.size() && p < out_ids.size(); ++p) {
    if (in_ids[p]->isBroadcast() && !out_ids[p]->isBroadcast()) {
      axes.push_back(static_cast<int64_t>(p));
    }
  }
  return axes;
}

std::string ExpandOp::toString(int indent_size) const {
  return opLine(indent_size, this, "expand", {});
}

bool ExpandOp::attributesMatch(const Expr* other) const {
  return other->isA<ExpandOp>();
}

void ExpandOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ExpandOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<ExpandOp>(
      cloner.target(), cloner.clone(out()), cloner.clone(in()));
}

// ---------------------------------------------------------------- ReductionOp
ReductionOp::ReductionOp(ReductionOpType op_type, Val* init, Val* out, Val* in)
    : op_type_(op_type), init_(init) {
  addOutput(out);
  addInput(in);
}

std::string ReductionOp::toString(int indent_size) const {
  return opLine(
      indent_size, this, "reduction",
      {"op=" + fuser::toString(op_type_), "initial=" + init_->toString()});
}

std::vector<std::pair<size_t, size_t>> ReductionOp::mappedAxes(
    const TensorView* producer) const {
  const auto in_ids = TensorDomain::noReductions(producer->getLogicalDomain());
  const auto& out_ids = out()->as<TensorView>()->getMaybeRootDomain();
  std::vector<std::pair<size_t, size_t>> pairs;
  for (auto [p, c] : Expr::mappedAxes(producer)) {
    if (!in_ids.at(p)->isBroadcast() || !out_ids.at(c)->isReduction()) {
      pairs.emplace_back(p, c);
    }
  }
  return pairs;
}

bool ReductionOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const ReductionOp*>(other);
  return op != nullptr && op->opType() == op_type_ && op->init()->sameAs(init_);
}

void ReductionOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ReductionOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<ReductionOp>(
      cloner.target(), op_type_, cloner.clone(init_), cloner.clone(out()),
      cloner.clone(in()));
}

// ---------------------------------------------------------------- ViewOp
ViewOp::ViewOp(Val* out, Val* in, const std::vector<Val*>& sizes) {
  addOutput(out);
  addInput(in);
  for (Val* size : sizes) {
    addInput(size);
  }
}

std::string ViewOp::toString(int indent_size) const {
  return opLine(indent_size, this, "view");
}

void ViewOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ViewOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<ViewOp>(
      cloner.target(), cloner.clone(out()), cloner.clone(in()),
      cloner.clone(sizes()));
}

// ---------------------------------------------------------------- FullOp
FullOp::FullOp(Val* out, Val* fill_value) {
  addOutput(out);
  addInput(fill_value);
  // The extents, so that a traversal from the output reaches the scalars
  // they are made of.
  for (IterDomain* id : out->as<TensorView>()->getLogicalDomain()) {
    addInput(id->extent());
  }
}

std::string FullOp::toString(int indent_size) const {
  return opLine(indent_size, this, "full");
}

void FullOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* FullOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<FullOp>(
      cloner.target(), cloner.clone(out()), cloner.clone(fillValue()));
}

// ---------------------------------------------------------------- IotaOp
IotaOp::IotaOp(Val* out, Val* length, Val* start, Val* step) {
  addOutput(out);
  addInput(length);
  addInput(start);
  addInput(step);
}

std::string IotaOp::toString(int indent_size) const {
  return opLine(indent_size, this, "iota");
}

void IotaOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* IotaOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<IotaOp>(
      cloner.target(), cloner.clone(out()), cloner.clone(length()),
      cloner.clone(start()), cloner.clone(step()));
}

// ---------------------------------------------------------------- RNGOp
RNGOp::RNGOp(
    RNGOpType op_type, Val* out, Val* seed, Val* offset, Val* a, Val* b,
    const std::vector<Val*>& extra)
    : op_type_(op_type) {
  addOutput(out);
  for (Val* v : {seed, offset, a, b}) {
    addInput(v);
  }
  for (Val* v : extra) {
    addInput(v);
  }
}

std::string RNGOp::toString(int indent_size) const {
  return opLine(indent_size, this, fuser::toString(op_type_));
}

bool RNGOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const RNGOp*>(other);
  return op != nullptr && op->opType() == op_type_;
}

void RNGOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* RNGOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<RNGOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(seed()),
      cloner.clone(offset()), cloner.clone(a()), cloner.clone(b()),
      cloner.clone(extra()));
}

// ---------------------------------------------------------------- ScanOp
ScanOp::ScanOp(ScanOpType op_type, Val* out, Val* in, int64_t dim)
    : op_type_(op_type), dim_(dim) {
  addOutput(out);
  addInput(in);
}

std::string ScanOp::toString(int indent_size) const {
  return opLine(
      indent_size, this, fuser::toString(op_type_),
      {"dim=" + std::to_string(dim_)});
}

bool ScanOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const ScanOp*>(other);
  return op != nullptr && op->opType() == op_type_ && op->dim() == dim_;
}

void ScanOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ScanOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<ScanOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(in()), dim_);
}

// ---------------------------------------------------------------- IndexOp
IndexOp::IndexOp(
    IndexOpType op_type, Val* out, Val* in, Val* index, int64_t dim, Val* src)
    : op_type_(op_type), dim_(dim) {
  addOutput(out);
  addInput(in);
  addInput(index);
  if (src != nullptr) {
    addInput(src);
  }
}

std::vector<std::pair<size_t, size_t>> IndexOp::mappedAxes(
    const TensorView* producer) const {
  const auto rank =
      TensorDomain::noReductions(producer->getLogicalDomain()).size();
  const auto dim = static_cast<size_t>(dim_);
  std::vector<std::pair<size_t, size_t>> pairs;
  if (producer == in()) {
    switch (op_type_) {
      case IndexOpType::Select:
        for (size_t p = 0; p < rank; ++p) {
          if (p != dim) {
            pairs.emplace_back(p, p < dim ? p : p - 1);
          }
        }
        break;
      case IndexOpType::IndexSelect:
        for (size_t p = 0; p < rank; ++p) {
          if (p != dim) {
            pairs.emplace_back(p, p);
          }
        }
        break;
      case IndexOpType::Gather:
        break; // the index's shape, not the input's
      case IndexOpType::Scatter:
        for (size_t p = 0; p < rank; ++p) {
          pairs.emplace_back(p, p);
        }
        break;
    }
  } else if (producer == index()) {
    if (op_type_ == IndexOpType::IndexSelect) {
      pairs.emplace_back(0, dim);
    } else if (op_type_ == IndexOpType::Gather) {
      for (size_t p = 0; p < rank; ++p) {
        pairs.emplace_back(p, p);
      }
    }
  }
  return pairs;
}

std::string IndexOp::toString(int indent_size) const {
  return opLine(
      indent_size, this, fuser::toString(op_type_),
      {"dim=" + std::to_string(dim_)});
}

bool IndexOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const IndexOp*>(other);
  return op != nullptr && op->opType() == op_type_ && op->dim() == dim_;
}

void IndexOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* IndexOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<IndexOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(in()),
      cloner.clone(index()), dim_,
      src() == nullptr ? nullptr : cloner.clone(src()));
}

// ---------------------------------------------------------------- ResizeOp
ResizeOp::ResizeOp(
    ResizeOpType op_type, Val* out, const std::vector<Val*>& tensors,
    const std::vector<Val*>& scalars, std::vector<bool> resized, int64_t dim)
    : op_type_(op_type),
      resized_(std::move(resized)),
      dim_(dim),
      num_tensors_(static_cast<std::ptrdiff_t>(tensors.size())) {
  addOutput(out);
  for (Val* v : tensors) {
    addInput(v);
  }
  for (Val* v : scalars) {
    addInput(v);
  }
}

std::vector<std::pair<size_t, size_t>> ResizeOp::mappedAxes(
    const TensorView* producer) const {
  std::vector<std::pair<size_t, size_t>> pairs;
  const std::vector<Val*> ins = tensors();
  if (std::find(ins.begin(), ins.end(), producer) == ins.end()) {
    return pairs;
  }
  for (size_t i = 0; i < resized_.size(); ++i) {
    if (!resized_[i]) {
      pairs.emplace_back(i, i);
    }
  }
  return pairs;
}

std::string ResizeOp::toString(int indent_size) const {
  return opLine(
      indent_size, this, fuser::toString(op_type_),
      {"dim=" + std::to_string(dim_)});
}

bool ResizeOp::attributesMatch(const Expr* other) const {
  auto* op = dynamic_cast<const ResizeOp*>(other);
  return op != nullptr && op->opType() == op_type_ &&
         op->resized() == resized_ && op->dim() == dim_;
}

void ResizeOp::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ResizeOp::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<ResizeOp>(
      cloner.target(), op_type_, cloner.clone(out()), cloner.clone(tensors()),
      cloner.clone(scalars()), resized_, dim_);
}

} // namespace fuser
