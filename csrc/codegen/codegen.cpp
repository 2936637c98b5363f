#include <codegen/codegen.h>

#include <device_lower/analysis/vectorization.h>
#include <fuser_embedded_runtime.h>

#include <base/options.h>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

namespace fuser::codegen {

namespace {

std::string literal(const Val* v) {
  const ScalarValue& value = v->value();
  if (v->dtype() == DataType::Bool) {
    return value.asBool() ? "true" : "false";
  }
  if (isIntegralType(v->dtype())) {
    const int64_t x = value.asInt();
    // INT64_MIN has no literal form.
    if (x == std::numeric_limits<int64_t>::min()) {
      return "(-9223372036854775807LL - 1)";
    }
    return std::to_string(x) + (x > INT32_MAX || x < INT32_MIN ? "LL" : "");
  }
  const double d = value.asDouble();
  if (std::isinf(d)) {
    return d > 0 ? "CUDART_INF" : "(-CUDART_INF)";
  }
  if (std::isnan(d)) {
    return "CUDART_NAN";
  }
  std::ostringstream ss;
  ss << std::setprecision(17) << d;
  std::string s = ss.str();
  if (s.find_first_of(".e") == std::string::npos) {
    s += ".0";
  }
  return v->dtype() == DataType::Float ? s + "f" : s;
}

class CudaPrinter {
 public:
  explicit CudaPrinter(const LoweredKernel& kernel) : kernel_(kernel) {}

  std::string print() {
    os_ << "extern \"C\" __global__ void " << kernel_.kernel_name << "(";
    for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
      os_ << (i ? ", " : "") << parameter(kernel_.parameters[i]);
    }
    os_ << ") {\n";
    block(kernel_.exprs, 1);
    os_ << "}\n";
    return os_.str();
  }

 private:
  static std::string parameter(Val* param) {
    if (auto* tv = dynamic_cast<TensorView*>(param)) {
      const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
      const auto alloc =
          TensorDomain::noReductions(tv->getMaybeAllocationDomain());
      std::stringstream ss;
      ss << "Tensor<" << cudaTypeName(tv->dtype()) << ", " << logical.size()
         << ", " << alloc.size() << "> T" << tv->name();
      return ss.str();
    }
    return cudaTypeName(param->dtype()) + " " + param->toString();
  }

  std::string gen(Val* v) {
    if (auto* ti = dynamic_cast<kir::TensorIndex*>(v)) {
      return "T" + std::to_string(ti->view()->name()) + "[" + gen(ti->index()) +
             "]";
    }
    if (auto* named = dynamic_cast<kir::NamedScalar*>(v)) {
      return named->scalarName();
    }
    if (v->isConst()) {
      return literal(v);
    }
    if (Expr* def = v->definition(); def != nullptr && v->isScalar()) {
      return inlineExpr(def);
    }
    return v->toString();
  }

  // `v` as an operand of arithmetic in `dtype`.
  std::string operand(Val* v, DataType dtype) {
    if (v->isScalar() && !v->isA<kir::TensorIndex>() && v->dtype() != dtype &&
        !(isIntegralType(v->dtype()) && isIntegralType(dtype))) {
      if (v->isConst() && isFloatingPointType(dtype) &&
          (dtype == DataType::Float || dtype == DataType::Double)) {
        Val tmp(ScalarValue(v->value().asDouble()), dtype);
        return literal(&tmp);
      }
      return "castTo<" + cudaTypeName(dtype) + ">(" + gen(v) + ")";
    }
    return gen(v);
  }

  std::string binary(
      BinaryOpType op, const std::string& a, const std::string& b,
      DataType dtype) {
    switch (op) {
      case BinaryOpType::Add:
        return "(" + a + " + " + b + ")";
      case BinaryOpType::Sub:
        return "(" + a + " - " + b + ")";
      case BinaryOpType::Mul:
        return "(" + a + " * " + b + ")";
      case BinaryOpType::Div:
        return "(" + a + " / " + b + ")";
      case BinaryOpType::CeilDiv:
        return "ceilDiv(" + a + ", " + b + ")";
      case BinaryOpType::Mod:
        return isFloatingPointType(dtype) ? "fmod(" + a + ", " + b + ")"
                                          : "(" + a + " % " + b + ")";
      case BinaryOpType::Pow:
        return "pow(" + a + ", " + b + ")";
      case BinaryOpType::Max:
        return "fuserMax(" + a + ", " + b + ")";
      case BinaryOpType::Min:
        return "fuserMin(" + a + ", " + b + ")";
      case BinaryOpType::Eq:
        return "(" + a + " == " + b + ")";
      case BinaryOpType::Ne:
        return "(" + a + " != " + b + ")";
      case BinaryOpType::Lt:
        return "(" + a + " < " + b + ")";
      case BinaryOpType::Le:
        return "(" + a + " <= " + b + ")";
      case BinaryOpType::Gt:
        return "(" + a + " > " + b + ")";
      case BinaryOpType::Ge:
        return "(" + a + " >= " + b + ")";
      case BinaryOpType::LogicalAnd:
        return "(" + a + " && " + b + ")";
      case BinaryOpType::LogicalOr:
        return "(" + a + " || " + b + ")";
    }
    FUSER_ERROR("unknown binary op");
  }

  std::string unary(
      UnaryOpType op, const std::string& x, DataType in_type,
      DataType out_type) {
    switch (op) {
      case UnaryOpType::Neg:
        return "(-" + x + ")";
      case UnaryOpType::Abs:
        return isFloatingPointType(in_type) ? "fabs(" + x + ")"
                                            : "abs(" + x + ")";
      case UnaryOpType::Exp:
        return "exp(" + x + ")";
      case UnaryOpType::Log:
        return "log(" + x + ")";
      case UnaryOpType::Sqrt:
        return "sqrt(" + x + ")";
      case UnaryOpType::Rsqrt:
        return "rsqrt(" + x + ")";
      case UnaryOpType::Reciprocal:
        return "reciprocal(" + x + ")";
      case UnaryOpType::Relu:
        return "relu(" + x + ")";
      case UnaryOpType::Sigmoid:
        return "sigmoid(" + x + ")";
      case UnaryOpType::Tanh:
        return "tanh(" + x + ")";
      case UnaryOpType::Gelu:
        return "gelu(" + x + ")";
      case UnaryOpType::Silu:
        return "silu(" + x + ")";
      case UnaryOpType::Sin:
        return "sin(" + x + ")";
      case UnaryOpType::Cos:
        return "cos(" + x + ")";
      case UnaryOpType::LogicalNot:
        return "(!" + x + ")";
      case UnaryOpType::Cast:
        return "castTo<" + cudaTypeName(out_type) + ">(" + x + ")";
    }
    FUSER_ERROR("unknown unary op");
  }

  std::string inlineExpr(Expr* def) {
    if (auto* bop = dynamic_cast<BinaryOp*>(def)) {
      return binary(
          bop->opType(), gen(bop->lhs()), gen(bop->rhs()), bop->out()->dtype());
    }
    if (auto* uop = dynamic_cast<UnaryOp*>(def)) {
      return unary(
          uop->opType(), gen(uop->in()), uop->in()->dtype(),
          uop->out()->dtype());
    }
    if (auto* top = dynamic_cast<TernaryOp*>(def)) {
      return "(" + gen(top->input(0)) + " ? " + gen(top->input(1)) + " : " +
             gen(top->input(2)) + ")";
    }
    FUSER_ERROR("cannot print ", def->toString(), " inline");
  }

  void line(int depth, const std::string& text) {
    os_ << std::string(static_cast<size_t>(depth) * 2, ' ') << text << "\n";
  }

  void block(const std::vector<Expr*>& exprs, int depth) {
    for (Expr* expr : exprs) {
      statement(expr, depth);
    }
  }

  // The copy inside a vectorized loop, as one vector access.
  void vectorizedCopy(const kir::ForLoop* loop, int depth) {
    Expr* expr = loop->body().exprs()[0];
    int inner = depth;
    auto* branch = dynamic_cast<kir::IfThenElse*>(expr);
    if (branch != nullptr) {
      line(depth, "if (" + gen(branch->predicate()) + ") {");
      expr = branch->thenBody().exprs()[0];
      inner = depth + 1;
    }
    auto* copy = expr->as<LoadStoreOp>();
    line(
        inner, "vectorizedCopy<" + cudaTypeName(copy->out()->dtype()) + ", " +
                   std::to_string(loop->stop()->constIntValue()) + ">(&" +
                   gen(copy->out()) + ", &" + gen(copy->in()) + ");");
    if (branch != nullptr) {
      line(depth, "}");
    }
  }

  void statement(Expr* expr, int depth) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      if (isVectorizedCopyLoop(loop)) {
        vectorizedCopy(loop, depth);
        return;
      }
      const bool serial_trivial = loop->index()->isConst();
      if (loop->isThreadParallel() || loop->isDeviceParallel() ||
          serial_trivial) {
        block(loop->body().exprs(), depth);
        return;
      }
      const ParallelType pt = loop->parallelType();
      if (pt == ParallelType::Unroll || pt == ParallelType::Vectorize) {
        line(depth, "#pragma unroll");
      }
      const std::string i = gen(loop->index());
      line(
          depth, "for (nvfuser_index_t " + i + " = " + gen(loop->start()) +
                     "; " + i + " < " + gen(loop->stop()) + "; ++" + i + ") {");
      block(loop->body().exprs(), depth + 1);
      line(depth, "}");
      return;
    }
    if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
      line(depth, "if (" + gen(branch->predicate()) + ") {");
      block(branch->thenBody().exprs(), depth + 1);
      if (!branch->elseBody().empty()) {
        line(depth, "} else {");
        block(branch->elseBody().exprs(), depth + 1);
      }
      line(depth, "}");
      return;
    }
    if (auto* alloc = dynamic_cast<kir::Allocate*>(expr)) {
      FUSER_CHECK(
          alloc->size()->isConstInt(), "The register buffer of ",
          alloc->buffer()->toString(), " has size ",
          alloc->size()->toInlineString(),
          ", which is not a constant. Inline it further (inlineMost) or split "
          "its non-inlined axes by constant factors.");
      line(
          depth,
          std::string(
              alloc->memoryType() == MemoryType::Shared ? "__shared__ " : "") +
              "alignas(16) " + cudaTypeName(alloc->buffer()->dtype()) + " T" +
              std::to_string(alloc->buffer()->name()) + "[" +
              gen(alloc->size()) + "];");
      return;
    }
    if (expr->isA<kir::BlockSync>()) {
      line(depth, "__syncthreads();");
      return;
    }
    Val* out = expr->output(0);
    const DataType dtype = out->dtype();
    if (auto* copy = dynamic_cast<LoadStoreOp*>(expr)) {
      line(depth, gen(out) + " = " + operand(copy->in(), dtype) + ";");
    } else if (auto* uop = dynamic_cast<UnaryOp*>(expr)) {
      const DataType in_type =
          uop->opType() == UnaryOpType::Cast ? uop->in()->dtype() : dtype;
      line(
          depth, gen(out) + " = " +
                     unary(
                         uop->opType(), operand(uop->in(), in_type),
                         uop->in()->dtype(), dtype) +
                     ";");
    } else if (auto* bop = dynamic_cast<BinaryOp*>(expr)) {
      // Comparisons compute in the operands' type, not bool.
      DataType compute = dtype;
      if (isComparisonOp(bop->opType())) {
        compute = bop->lhs()->isA<kir::TensorIndex>() ? bop->lhs()->dtype()
                                                      : bop->rhs()->dtype();
      }
      line(
          depth, gen(out) + " = " +
                     binary(
                         bop->opType(), operand(bop->lhs(), compute),
                         operand(bop->rhs(), compute), compute) +
                     ";");
    } else if (auto* top = dynamic_cast<TernaryOp*>(expr)) {
      line(
          depth, gen(out) + " = " + gen(top->input(0)) + " ? " +
                     operand(top->input(1), dtype) + " : " +
                     operand(top->input(2), dtype) + ";");
    } else if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
      const std::string acc = gen(out);
      const std::string in = operand(rop->in(), dtype);
      switch (rop->opType()) {
        case ReductionOpType::Sum:
          line(depth, acc + " = " + acc + " + " + in + ";");
          break;
        case ReductionOpType::Max:
          line(depth, acc + " = fuserMax(" + acc + ", " + in + ");");
          break;
        case ReductionOpType::Min:
          line(depth, acc + " = fuserMin(" + acc + ", " + in + ");");
          break;
      }
    } else {
      FUSER_ERROR("no CUDA for ", expr->toString());
    }
  }

  const LoweredKernel& kernel_;
  std::stringstream os_;
};

} // namespace

std::string generateKernelFunction(const LoweredKernel& kernel) {
  return CudaPrinter(kernel).print();
}

std::string generateCudaKernel(const LoweredKernel& kernel) {
  std::stringstream ss;
  ss << "// Generated by fuser.\n"
     << "typedef "
     << (kernel.index_type == DataType::Int32 ? "int" : "long long int")
     << " nvfuser_index_t;\n"
     << "typedef long long int int64_t;\n"
     << "#include <cuda_fp16.h>\n"
     << "#include <cuda_bf16.h>\n"
     << "#define CUDART_INF __longlong_as_double(0x7ff0000000000000ULL)\n"
     << "#define CUDART_NAN __longlong_as_double(0xfff8000000000000ULL)\n";
  for (const auto& [name, content] : embeddedRuntimeSources()) {
    ss << "\n// ---- runtime/" << name << "\n" << content;
  }
  ss << "\n// ---- kernel\n" << generateKernelFunction(kernel);
  std::string source = ss.str();
  if (isDebugDumpEnabled(DebugDumpOption::CudaKernel)) {
    std::cout << "[cuda_kernel]\n"
              << generateKernelFunction(kernel) << std::flush;
  }
  return source;
}

} // namespace fuser::codegen

namespace fuser {

std::string Fusion::printKernel(std::ostream& os) const {
  std::string source = generateCudaKernel(this);
  os << source << std::flush;
  return source;
}

} // namespace fuser
