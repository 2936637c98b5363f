#include <runtime/communication_executor.h>

#include <ir/all_nodes.h>
#include <runtime/communicator.h>

#include <ATen/ATen.h>

#include <iostream>
#include <mutex>

namespace fuser {

namespace {

int64_t myIndex(const DeviceMesh& mesh) {
  const int64_t rank = Communicator::getInstance().deviceId();
  const int64_t index = mesh.idxOf(rank);
  FUSER_CHECK(
      index >= 0, "Rank ", rank, " is not in ", mesh.toString(),
      ": every rank of the process group runs the fusion, so every rank must "
      "be a device of the meshes that split tensors.");
  return index;
}

// The size of each of the mesh's D equal parts of `t` along `axis`.
int64_t partSize(const at::Tensor& t, int64_t axis, const DeviceMesh& mesh) {
  FUSER_CHECK(
      t.size(axis) % mesh.size() == 0, "Cannot split axis ", axis, " of size ",
      t.size(axis), " evenly across ", mesh.toString(),
      ": sharded axes must be multiples of the mesh size.");
  return t.size(axis) / mesh.size();
}

// This rank's part of `t` along `axis` (of D equal parts).
at::Tensor part(const at::Tensor& t, int64_t axis, const DeviceMesh& mesh) {
  const int64_t n = partSize(t, axis, mesh);
  return t.narrow(axis, myIndex(mesh) * n, n).contiguous();
}

// Whether the process group moves `t` for this collective itself.
bool takesTensor(const at::Tensor& t, CommunicationType type) {
  const std::string backend = Communicator::getInstance().backend();
  if (!t.is_cuda() || backend != "gloo") {
    return true;
  }
  return type == CommunicationType::Allreduce ||
         type == CommunicationType::Broadcast;
}

at::Tensor staged(const at::Tensor& t) {
  static std::once_flag warned;
  std::call_once(warned, [] {
    std::cerr << "fuser warning: the process group (gloo) cannot move CUDA "
                 "tensors for allgather and reduce-scatter; they are staged "
                 "through pinned host memory (correct, slow). Use NCCL for "
                 "speed.\n";
  });
  at::Tensor host =
      at::empty(t.sizes(), t.options().device(at::kCPU).pinned_memory(true));
  host.copy_(t);
  return host;
}

// Shards are in mesh order; the process group's lists in rank order.
at::Tensor allgather(
    const at::Tensor& t, int64_t axis, const DeviceMesh& mesh) {
  auto group = Communicator::getInstance().processGroup();
  std::vector<at::Tensor> inputs{t.contiguous()};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int i = 0; i < group->getSize(); ++i) {
    outputs[0].push_back(at::empty_like(inputs[0]));
  }
  waitFor(group->allgather(outputs, inputs), "allgather");
  std::vector<at::Tensor> shards;
  for (int64_t device : mesh.vector()) {
    shards.push_back(outputs[0].at(static_cast<size_t>(device)));
  }
  return at::cat(shards, axis);
}

at::Tensor allreduce(const at::Tensor& t) {
  auto group = Communicator::getInstance().processGroup();
  std::vector<at::Tensor> tensors{t.contiguous().clone()};
  waitFor(group->allreduce(tensors), "allreduce");
  return tensors[0];
}

at::Tensor reduceScatter(
    const at::Tensor& t, int64_t axis, const DeviceMesh& mesh) {
  auto group = Communicator::getInstance().processGroup();
  if (group->getBackendName() != "nccl") {
    // Gloo has no reduce-scatter of its own: the sum everywhere, then the
    // rank's part.
    return part(allreduce(t), axis, mesh);
  }
  partSize(t, axis, mesh);
  const std::vector<at::Tensor> chunks = t.chunk(mesh.size(), axis);
  std::vector<std::vector<at::Tensor>> inputs(1);
  for (int64_t rank = 0; rank < mesh.size(); ++rank) {
    inputs[0].push_back(
        chunks.at(static_cast<size_t>(mesh.idxOf(rank))).contiguous());
  }
  std::vector<at::Tensor> outputs{at::empty_like(inputs[0][0])};
  waitFor(group->reduce_scatter(outputs, inputs), "reduce-scatter");
  return outputs[0];
}

at::Tensor broadcast(const at::Tensor& t, int64_t root) {
  auto group = Communicator::getInstance().processGroup();
  std::vector<at::Tensor> tensors{t.contiguous().clone()};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  waitFor(group->broadcast(tensors, options), "broadcast");
  return tensors[0];
}

} // namespace

at::Tensor communicate(const Communication& comm, const at::Tensor& shard) {
  auto& communicator = Communicator::getInstance();
  FUSER_CHECK(
      comm.mesh.size() <= communicator.size(), comm.mesh.toString(), " has ",
      comm.mesh.size(), " devices but the process group has ",
      communicator.size(),
      " ranks: start one process per device (torchrun --nproc-per-node=",
      comm.mesh.size(), ") or use a smaller mesh.");
  myIndex(comm.mesh);
  if (comm.type == CommunicationType::Scatter) {
    return part(shard, comm.out_axis, comm.mesh);
  }
  if (comm.mesh.size() == 1 || !communicator.hasProcessGroup()) {
    // One device: every collective leaves the data as it is.
    return shard.clone();
  }
  FUSER_CHECK(
      communicator.size() == comm.mesh.size(), comm.toString(), ": the mesh ",
      "must hold every rank of the process group (", communicator.size(),
      " ranks); sub-meshes are not supported.");
  const bool direct = takesTensor(shard, comm.type);
  const at::Tensor in = direct ? shard : staged(shard);
  at::Tensor out;
  switch (comm.type) {
    case CommunicationType::Allgather:
      out = allgather(in, comm.in_axis, comm.mesh);
      break;
    case CommunicationType::Allreduce:
      out = allreduce(in);
      break;
    case CommunicationType::ReduceScatter:
      out = reduceScatter(in, comm.out_axis, comm.mesh);
      break;
    case CommunicationType::AllToAll:
      out = part(
          allgather(in, comm.in_axis, comm.mesh), comm.out_axis, comm.mesh);
      break;
    case CommunicationType::Broadcast:
      out = broadcast(in, comm.root);
      break;
    case CommunicationType::Scatter:
      break;
  }
  return direct ? out : out.to(shard.device());
}

void CommunicationExecutor::compile(
    const Fusion* fusion, const std::vector<c10::IValue>&,
    const KnownLayouts&) {
  const auto exprs = fusion->exprs();
  FUSER_INTERNAL_ASSERT(
      exprs.size() == 1 && isResharding(exprs.front()),
      "a communication segment is one resharding set");
  communication_ = communicationOf(exprs.front());
}

std::vector<at::Tensor> CommunicationExecutor::run(
    const std::vector<c10::IValue>& inputs) {
  FUSER_INTERNAL_ASSERT(
      inputs.size() == 1 && inputs[0].isTensor(),
      "a communication takes one tensor");
  return {communicate(communication_, inputs[0].toTensor())};
}

} // namespace fuser
