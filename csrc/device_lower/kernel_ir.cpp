#include <device_lower/kernel_ir.h>

#include <device_lower/kir_mma.h>

#include <ir/cloner.h>
#include <ir/dispatch.h>

#include <sstream>

namespace fuser::kir {

TensorIndex::TensorIndex(TensorView* view, Val* index)
    : Val(view->dtype()), view_(view), index_(index) {}

std::string TensorIndex::toString(int indent_size) const {
  return indent(indent_size) + toInlineString();
}

std::string TensorIndex::toInlineString() const {
  return "T" + std::to_string(view_->name()) + "[" +
         (index_ == nullptr ? std::string("?") : index_->toInlineString()) +
         "]";
}

void TensorIndex::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* TensorIndex::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<TensorIndex>(
      cloner.target(), cloner.clone(view_),
      index_ == nullptr ? nullptr : cloner.clone(index_));
}

NamedScalar::NamedScalar(std::string name, DataType dtype)
    : Val(dtype), name_(std::move(name)) {}

std::string NamedScalar::toString(int indent_size) const {
  return indent(indent_size) + name_;
}

std::string NamedScalar::toInlineString() const {
  return name_;
}

bool NamedScalar::isLaunchVariable() const {
  for (const char* prefix :
       {"threadIdx.", "blockIdx.", "blockDim.", "gridDim."}) {
    if (name_.rfind(prefix, 0) == 0) {
      return true;
    }
  }
  return false;
}

bool NamedScalar::sameAs(const Statement* other) const {
  auto* named = dynamic_cast<const NamedScalar*>(other);
  return named != nullptr && named->scalarName() == name_;
}

void NamedScalar::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* NamedScalar::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<NamedScalar>(
      cloner.target(), name_, dtype());
}

namespace {
std::string parameterFieldName(
    const TensorView* tensor, TensorParameterField::Field field,
    int64_t position) {
  const char* member = field == TensorParameterField::Field::LogicalSize
                           ? ".logical_size["
                           : ".alloc_stride[";
  return "T" + std::to_string(tensor->name()) + member +
         std::to_string(position) + "]";
}
} // namespace

TensorParameterField::TensorParameterField(
    TensorView* tensor, Field field, int64_t position)
    : NamedScalar(parameterFieldName(tensor, field, position), DataType::Index),
      tensor_(tensor),
      field_(field),
      position_(position) {}

Statement* TensorParameterField::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<TensorParameterField>(
      cloner.target(), cloner.clone(tensor_), field_, position_);
}

ForLoop::ForLoop(IterDomain* iter_domain, Val* index, Val* start, Val* stop)
    : ForLoop(iter_domain, iter_domain->getParallelType(), index, start, stop) {
}

ForLoop::ForLoop(
    IterDomain* iter_domain, ParallelType parallel_type, Val* index, Val* start,
    Val* stop)
    : iter_domain_(iter_domain),
      parallel_type_(parallel_type),
      index_(index),
      start_(start),
      stop_(stop) {}

bool ForLoop::isTrivial() const {
  if (isThreadParallel() || isDeviceParallel() ||
      parallel_type_ == ParallelType::Vectorize) {
    return true;
  }
  return stop_->isConstInt() && start_->isConstInt() &&
         stop_->constIntValue() - start_->constIntValue() == 1;
}

namespace {

std::string scopeToString(const Scope& scope, int indent_size) {
  std::stringstream ss;
  for (Expr* expr : scope.exprs()) {
    ss << expr->toString(indent_size);
  }
  return ss.str();
}

} // namespace

std::string ForLoop::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << "FOR " << index_->toInlineString() << " in "
     << iter_domain_->toString();
  if (parallel_type_ != iter_domain_->getParallelType()) {
    ss << " (" << parallel_type_ << ")";
  }
  ss << ":\n" << scopeToString(body_, indent_size + 1);
  return ss.str();
}

void ForLoop::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ForLoop::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

IfThenElse::IfThenElse(Val* predicate) : predicate_(predicate) {}

std::string IfThenElse::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << "IF "
     << (predicate_ ? predicate_->toInlineString() : std::string("<pending>"))
     << ":\n"
     << scopeToString(then_body_, indent_size + 1);
  if (!else_body_.empty()) {
    ss << indent(indent_size) << "ELSE:\n"
       << scopeToString(else_body_, indent_size + 1);
  }
  return ss.str();
}

void IfThenElse::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* IfThenElse::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

Allocate::Allocate(TensorView* buffer, MemoryType memory_type, Val* size)
    : buffer_(buffer), memory_type_(memory_type), size_(size) {}

std::string Allocate::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << "ALLOCATE T" << buffer_->name() << " "
     << memory_type_ << " " << buffer_->dtype() << "["
     << size_->toInlineString() << "]\n";
  return ss.str();
}

void Allocate::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* Allocate::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

ParallelReduction::ParallelReduction(
    ReductionOpType op_type, Val* init, Val* out, Val* in, ReducedDims dims,
    Val* last_block, int64_t buffer_index)
    : op_type_(op_type),
      init_(init),
      dims_(dims),
      last_block_(last_block),
      buffer_index_(buffer_index) {
  addOutput(out);
  addInput(in);
}

std::string ParallelReduction::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << out()->toInlineString() << " = "
     << (dims_.anyBlock()
             ? "gridReduce"
             : (result_in_every_thread_ ? "blockAllReduce" : "blockReduce"))
     << "(" << op_type_ << ", " << in()->toInlineString() << " over";
  const char* names[] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    if (dims_.threads[d]) {
      ss << " threadIdx." << names[d];
    }
    if (dims_.blocks[d]) {
      ss << " blockIdx." << names[d];
    }
  }
  if (group_size_ > 1) {
    ss << ", group " << group_size_;
  }
  ss << ", pred "
     << (predicate_ ? predicate_->toInlineString() : std::string("<pending>"))
     << ")\n";
  return ss.str();
}

void ParallelReduction::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* ParallelReduction::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

std::string BlockSync::toString(int indent_size) const {
  return indent(indent_size) + "BLOCKSYNC\n";
}

void BlockSync::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* BlockSync::cloneWith(IrCloner&) const {
  FUSER_ERROR("kernel IR is not cloned");
}

Val* parallelIndex(ParallelType pt) {
  std::string name = toString(pt);
  return IrBuilder::create<NamedScalar>(name, DataType::Index);
}

Val* parallelExtent(ParallelType pt) {
  FUSER_INTERNAL_ASSERT(
      isParallelTypeThreadDim(pt) || isParallelTypeBlockDim(pt),
      "no launch extent for ", pt);
  std::string name = toString(pt);
  // threadIdx.x -> blockDim.x, blockIdx.x -> gridDim.x
  if (isParallelTypeThreadDim(pt)) {
    name = "blockDim" + name.substr(name.find('.'));
  } else {
    name = "gridDim" + name.substr(name.find('.'));
  }
  return IrBuilder::create<NamedScalar>(name, DataType::Index);
}

std::string toString(const std::vector<Expr*>& exprs) {
  std::stringstream ss;
  for (Expr* expr : exprs) {
    ss << expr->toString(0);
  }
  return ss.str();
}

} // namespace fuser::kir

namespace fuser {

// The default handlers of the kernel IR nodes (ir/dispatch.h): their base
// class's.
#define FUSER_DEFINE_KIR_EXPR_HANDLER(T) \
  void OptOutDispatch::handle(T* node) { \
    handle(static_cast<Expr*>(node));    \
  }
FUSER_DISPATCH_FOR_ALL_KIR_EXPRS(FUSER_DEFINE_KIR_EXPR_HANDLER)
#undef FUSER_DEFINE_KIR_EXPR_HANDLER
#define FUSER_DEFINE_KIR_VAL_HANDLER(T)  \
  void OptOutDispatch::handle(T* node) { \
    handle(static_cast<Val*>(node));     \
  }
FUSER_DISPATCH_FOR_ALL_KIR_VALS(FUSER_DEFINE_KIR_VAL_HANDLER)
#undef FUSER_DEFINE_KIR_VAL_HANDLER

} // namespace fuser
