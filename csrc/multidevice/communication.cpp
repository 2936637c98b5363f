#include <multidevice/communication.h>

#include <ir/all_nodes.h>
#include <multidevice/sharding.h>

#include <algorithm>
#include <sstream>

namespace fuser {

namespace {

bool isPlainSet(const Expr* expr) {
  auto* op = dynamic_cast<const LoadStoreOp*>(expr);
  return op != nullptr && op->opType() == LoadStoreOpType::Set &&
         op->in()->isA<TensorView>() && op->out()->isA<TensorView>();
}

} // namespace

std::string toString(CommunicationType type) {
  switch (type) {
    case CommunicationType::Allgather:
      return "Allgather";
    case CommunicationType::Allreduce:
      return "Allreduce";
    case CommunicationType::ReduceScatter:
      return "ReduceScatter";
    case CommunicationType::Scatter:
      return "Scatter";
    case CommunicationType::AllToAll:
      return "AllToAll";
    case CommunicationType::Broadcast:
      return "Broadcast";
  }
  return "?";
}

std::string Communication::toString() const {
  std::stringstream ss;
  ss << fuser::toString(type) << " on " << mesh.toString();
  if (in_axis >= 0) {
    ss << ", input axis " << in_axis;
  }
  if (out_axis >= 0) {
    ss << ", output axis " << out_axis;
  }
  if (root >= 0) {
    ss << ", root " << root;
  }
  return ss.str();
}

bool isResharding(const Expr* expr) {
  if (!isPlainSet(expr)) {
    return false;
  }
  const auto* in = expr->input(0)->as<TensorView>();
  const auto* out = expr->output(0)->as<TensorView>();
  if (!in->hasDeviceMesh() || !out->hasDeviceMesh()) {
    return false;
  }
  const Sharding from = shardingOf(in);
  const Sharding to = shardingOf(out);
  if (from.mesh != to.mesh || from.partial != to.partial) {
    return true;
  }
  if (from.isSplit() != to.isSplit()) {
    return true;
  }
  return from.isSplit() && tensorDim(in, from.axis) != tensorDim(out, to.axis);
}

Communication communicationOf(const Expr* expr) {
  FUSER_INTERNAL_ASSERT(
      isResharding(expr), expr->toString(), " is not a resharding set");
  const auto* in = expr->input(0)->as<TensorView>();
  const auto* out = expr->output(0)->as<TensorView>();
  const Sharding from = shardingOf(in);
  const Sharding to = shardingOf(out);
  Communication comm;
  comm.mesh = to.mesh;
  if (from.mesh != to.mesh) {
    FUSER_CHECK(
        from.mesh.size() == 1 && !from.isSplit() && !to.isSplit(), "Moving ",
        in->toString(), " (", from.toString(), ") to ", out->toString(), " (",
        to.toString(),
        ") is not supported: between different meshes only a whole tensor on "
        "one device can be broadcast to every device of another mesh. Place "
        "both on the same mesh.");
    comm.type = CommunicationType::Broadcast;
    comm.root = from.mesh.vector().front();
    return comm;
  }
  if (from.partial) {
    comm.type = to.isSplit() ? CommunicationType::ReduceScatter
                             : CommunicationType::Allreduce;
  } else if (from.isSplit()) {
    comm.type = to.isSplit() ? CommunicationType::AllToAll
                             : CommunicationType::Allgather;
    comm.in_axis = tensorDim(in, from.axis);
  } else {
    comm.type = CommunicationType::Scatter;
  }
  if (to.isSplit()) {
    comm.out_axis = tensorDim(out, to.axis);
  }
  return comm;
}

} // namespace fuser
