// Multi-device fusions on one process (doc/multidevice.md): meshes and
// shardings in the IR, sharding propagation, the communications resharding
// inserts, the rank-local stages, and runs on a mesh of one device (the
// same code path as D devices, D = 1). Runs across processes are in
// tests/python/test_multidevice.py (Gloo on the CPU, and on one GPU).
#include <fusion.h>
#include <ir/all_nodes.h>
#include <multidevice/communication.h>
#include <multidevice/communicator.h>
#include <multidevice/executor.h>
#include <multidevice/propagation.h>
#include <multidevice/resharding.h>
#include <multidevice/sharding.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class MultiDeviceTest : public FuserIrTest {};
class MultiDeviceGpuTest : public FuserTest {};

namespace {

// Splits logical axis `axis` of `tv` across `mesh` in its allocation domain
// only (the seed's sharded input: loop untouched).
void shardAllocation(TensorView* tv, int64_t axis, const DeviceMesh& mesh) {
  tv->setDeviceMesh(mesh);
  std::vector<IterDomain*> ids = tv->getLogicalDomain();
  auto [did, local] = IterDomain::split(
      ids[static_cast<size_t>(axis)],
      IrBuilder::create<Val>(mesh.size(), DataType::Index), false);
  did->parallelize(ParallelType::DIDx);
  ids[static_cast<size_t>(axis)] = local;
  ids.insert(ids.begin() + axis, did);
  tv->setAllocationDomain(ids, true);
}

// Splits loop axis `axis` of `tv` across `mesh` (nvFuser's way).
void shardLoop(TensorView* tv, int64_t axis, const DeviceMesh& mesh) {
  tv->setDeviceMesh(mesh);
  tv->split(axis, mesh.size(), /*inner_split=*/false);
  tv->axis(axis)->parallelize(ParallelType::DIDx);
}

std::vector<CommunicationType> typesOf(const std::vector<Communication>& cs) {
  std::vector<CommunicationType> types;
  for (const Communication& c : cs) {
    types.push_back(c.type);
  }
  return types;
}

std::vector<Communication> insertedCommunications(Fusion* fusion) {
  propagateShardings(fusion);
  insertReshardings(fusion);
  std::vector<Communication> comms;
  for (Expr* expr : fusion->exprs()) {
    if (isResharding(expr)) {
      comms.push_back(communicationOf(expr));
    }
  }
  return comms;
}

// The tensor-parallel MLP of examples/tp_mlp.py in global shapes: x [B, E]
// replicated, w1 [4E, E] and b1 [4E] split on the hidden axis (column
// parallel), w2 [E, 4E] split on its input axis (row parallel); the result
// reduce-scattered over the rows. Returns {x, w1, b1, w2, out}.
std::vector<TensorView*> tpMlp(Fusion* fusion, const DeviceMesh& mesh) {
  FusionGuard fg(fusion);
  TensorView* x = makeSymbolicTensor(2);
  TensorView* w1 = makeSymbolicTensor(2);
  TensorView* b1 = makeSymbolicTensor(1);
  TensorView* w2 = makeSymbolicTensor(2);
  for (TensorView* tv : {x, w1, b1, w2}) {
    fusion->addInput(tv);
    tv->setDeviceMesh(mesh);
  }
  shardLoop(w1, 0, mesh);
  shardLoop(b1, 0, mesh);
  shardAllocation(w2, 1, mesh);
  TensorView* h = linear(x, w1, b1);
  TensorView* g = tanh(h);
  TensorView* y = linear(g, w2);
  TensorView* out = set(y);
  shardLoop(out, 0, mesh);
  fusion->addOutput(out);
  return {x, w1, b1, w2, out};
}

} // namespace

TEST_F(MultiDeviceTest, DeviceMeshListsDistinctRanks) {
  DeviceMesh mesh({2, 0, 1});
  EXPECT_EQ(mesh.size(), 3);
  EXPECT_EQ(mesh.idxOf(0), 1);
  EXPECT_EQ(mesh.idxOf(5), -1);
  EXPECT_EQ(mesh.toString(), "DeviceMesh{2 0 1}");
  EXPECT_EQ(DeviceMesh::createForNumDevices(2), DeviceMesh({0, 1}));
  EXPECT_THAT(
      [] {
        DeviceMesh({0, 0});
      },
      ThrowsMessage<UserError>(HasSubstr("lists device 0 twice")));
  EXPECT_THAT(
      [] { DeviceMesh({-1}); },
      ThrowsMessage<UserError>(HasSubstr("is negative")));
  EXPECT_THAT(
      [] { DeviceMesh(std::vector<int64_t>{}); },
      ThrowsMessage<UserError>(HasSubstr("at least one device")));
}

TEST_F(MultiDeviceTest, ShardingIsReadFromAllocationOrLoop) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  const DeviceMesh mesh({0, 1});
  TensorView* a = makeSymbolicTensor(2);
  TensorView* b = makeSymbolicTensor(2);
  TensorView* c = makeSymbolicTensor(2);
  fusion.addInput(a);
  fusion.addInput(b);
  shardAllocation(a, 0, mesh);
  shardLoop(b, 1, mesh);
  c->setDeviceMesh(mesh);
  EXPECT_EQ(shardingOf(a), (Sharding{mesh, 0, false}));
  EXPECT_EQ(shardingOf(b), (Sharding{mesh, 1, false}));
  EXPECT_EQ(shardingOf(c), (Sharding{mesh, -1, false}));

  // shard() completes the loop of an allocation-only sharding and the
  // allocation of a loop-only one, reusing their IDs.
  shard(a, shardingOf(a));
  shard(b, shardingOf(b));
  EXPECT_EQ(a->getLoopDomain().size(), 3u);
  EXPECT_EQ(a->getLoopDomain()[0], a->getAllocationDomain()[0]);
  ASSERT_EQ(b->getAllocationDomain().size(), 3u);
  EXPECT_EQ(b->getAllocationDomain()[1], b->axis(1));
  EXPECT_EQ(b->getAllocationDomain()[1]->getParallelType(), ParallelType::DIDx);

  // The rank-local form drops the mesh and the device split.
  unshard(b);
  EXPECT_FALSE(b->hasDeviceMesh());
  EXPECT_EQ(b->getLoopDomain(), b->getLogicalDomain());
  EXPECT_EQ(b->getMaybeAllocationDomain(), b->getLogicalDomain());
  EXPECT_EQ(shardingOf(b), Sharding{});
}

TEST_F(MultiDeviceTest, BadShardingsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* no_mesh = makeSymbolicTensor(2);
  no_mesh->split(0, 2, false);
  no_mesh->axis(0)->parallelize(ParallelType::DIDx);
  EXPECT_THAT(
      [&] { shardingOf(no_mesh); },
      ThrowsMessage<UserError>(HasSubstr("but no device mesh")));

  TensorView* wrong_factor = makeSymbolicTensor(2);
  wrong_factor->setDeviceMesh(DeviceMesh({0, 1}));
  wrong_factor->split(0, 4, false);
  wrong_factor->axis(0)->parallelize(ParallelType::DIDx);
  EXPECT_THAT(
      [&] { shardingOf(wrong_factor); },
      ThrowsMessage<UserError>(HasSubstr("split by the mesh size")));

  TensorView* inner = makeSymbolicTensor(2);
  inner->setDeviceMesh(DeviceMesh({0, 1}));
  inner->split(0, 2, /*inner_split=*/true);
  inner->axis(1)->parallelize(ParallelType::DIDx);
  EXPECT_THAT(
      [&] { shardingOf(inner); },
      ThrowsMessage<UserError>(HasSubstr("outer part of an outer split")));
}

TEST_F(MultiDeviceTest, PropagationFollowsAxesAndMakesSumsPartial) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  const DeviceMesh mesh({0, 1});
  TensorView* x = makeSymbolicTensor(2);
  fusion.addInput(x);
  shardAllocation(x, 0, mesh);
  TensorView* t = transpose(relu(x), 0, 1); // [N, M]: split on axis 1
  TensorView* rows = sum(t, {0});           // [rN, M]: split on axis 1
  TensorView* total = sum(t, {1});          // [N, rM]: partial
  TensorView* peak = max(t, {1});           // a max is not partial
  fusion.addOutput(rows);
  fusion.addOutput(total);
  fusion.addOutput(peak);
  propagateShardings(&fusion);
  EXPECT_EQ(shardingOf(t), (Sharding{mesh, 1, false}));
  EXPECT_EQ(shardingOf(rows), (Sharding{mesh, 1, false}));
  EXPECT_EQ(shardingOf(total), (Sharding{mesh, -1, true}));
  EXPECT_EQ(shardingOf(peak), (Sharding{mesh, -1, false}));
  // An allocation-only input gets its loop split too; computed tensors get
  // no allocation domain (a scheduler cannot cache a reduction that has
  // one).
  EXPECT_EQ(x->axis(0)->getParallelType(), ParallelType::DIDx);
  for (TensorView* tv : {t, rows, total, peak}) {
    EXPECT_FALSE(tv->hasAllocation()) << tv->toString();
  }
}

TEST_F(MultiDeviceTest, ReshardingInsertsTheCollectives) {
  const DeviceMesh mesh({0, 1});
  {
    // split -> whole: the user's set is the allgather.
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeSymbolicTensor(2);
    fusion.addInput(x);
    shardLoop(x, 1, mesh);
    TensorView* out = set(x);
    out->setDeviceMesh(mesh);
    fusion.addOutput(out);
    auto comms = insertedCommunications(&fusion);
    ASSERT_EQ(comms.size(), 1u);
    EXPECT_EQ(comms[0].type, CommunicationType::Allgather);
    EXPECT_EQ(comms[0].in_axis, 1);
  }
  {
    // A whole tensor meeting a split one is cut locally (scatter); a
    // partial sum used elementwise is completed (allreduce).
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeSymbolicTensor(2);
    TensorView* y = makeSymbolicTensor(2);
    fusion.addInput(x);
    fusion.addInput(y);
    shardLoop(x, 0, mesh);
    y->setDeviceMesh(mesh);
    TensorView* z = add(x, y);
    TensorView* s = sum(z, {0});
    TensorView* out = mul(s, IrBuilder::create<Val>(2.0));
    fusion.addOutput(z);
    fusion.addOutput(out);
    auto comms = insertedCommunications(&fusion);
    EXPECT_EQ(
        typesOf(comms),
        (std::vector<CommunicationType>{
            CommunicationType::Scatter, CommunicationType::Allreduce}));
    EXPECT_EQ(comms[0].out_axis, 0);
    EXPECT_EQ(shardingOf(out), (Sharding{mesh, -1, false}));
  }
  {
    // Column- then row-parallel linear: the only collective is the
    // reduce-scatter of the row-parallel product's partial sums.
    Fusion fusion;
    auto tvs = tpMlp(&fusion, mesh);
    auto comms = insertedCommunications(&fusion);
    EXPECT_EQ(
        typesOf(comms),
        (std::vector<CommunicationType>{CommunicationType::ReduceScatter}));
    EXPECT_EQ(comms[0].out_axis, 0);
  }
  {
    // split on one axis -> split on another.
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeSymbolicTensor(2);
    fusion.addInput(x);
    shardLoop(x, 0, mesh);
    TensorView* out = set(x);
    shardLoop(out, 1, mesh);
    fusion.addOutput(out);
    auto comms = insertedCommunications(&fusion);
    ASSERT_EQ(comms.size(), 1u);
    EXPECT_EQ(comms[0].type, CommunicationType::AllToAll);
  }
  {
    // One device's tensor to every device.
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeSymbolicTensor(1);
    fusion.addInput(x);
    x->setDeviceMesh(DeviceMesh({1}));
    TensorView* out = set(x);
    out->setDeviceMesh(mesh);
    fusion.addOutput(out);
    auto comms = insertedCommunications(&fusion);
    ASSERT_EQ(comms.size(), 1u);
    EXPECT_EQ(comms[0].type, CommunicationType::Broadcast);
    EXPECT_EQ(comms[0].root, 1);
  }
}

TEST_F(MultiDeviceTest, StagesAreRankLocalFusionsBetweenCollectives) {
  auto fusion = std::make_unique<Fusion>();
  tpMlp(fusion.get(), DeviceMesh({0}));
  MultiDeviceExecutor executor(fusion.get());
  const auto& stages = executor.stages();
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].type(), SchedulerType::ExprEval);
  EXPECT_EQ(stages[1].type(), SchedulerType::Communication);
  // The local fusion has no mesh and no device axis, and only inputs have
  // an allocation domain.
  Fusion* local = stages[0].cache->fusion();
  for (Val* val : local->vals()) {
    if (auto* tv = dynamic_cast<TensorView*>(val)) {
      EXPECT_FALSE(tv->hasDeviceMesh()) << tv->toString();
      EXPECT_TRUE(tv->isFusionInput() || !tv->hasAllocation())
          << tv->toString();
      for (IterDomain* id : tv->getLoopDomain()) {
        EXPECT_FALSE(id->isDeviceDim()) << tv->toString();
      }
    }
  }
  EXPECT_THAT(executor.toString(), HasSubstr("ReduceScatter on DeviceMesh{0}"));
  // The executor interface makes communication executors too.
  EXPECT_NE(
      dynamic_cast<CommunicationExecutor*>(
          makeExecutor(SchedulerType::Communication).get()),
      nullptr);
}

// A mesh of one device runs every multi-device fusion in this process: the
// same stages and collectives as on D devices, with D = 1. Host tensors
// run through ATen.
TEST_F(MultiDeviceTest, OneDeviceMeshMatchesTheUnshardedResult) {
  auto fusion = std::make_unique<Fusion>();
  tpMlp(fusion.get(), DeviceMesh({0}));
  FusionExecutorCache fec(std::move(fusion));
  at::manual_seed(0);
  at::Tensor x = at::randn({8, 16});
  at::Tensor w1 = at::randn({32, 16});
  at::Tensor b1 = at::randn({32});
  at::Tensor w2 = at::randn({16, 32});
  auto outputs = fec.runFusionWithInputs({x, w1, b1, w2});
  ASSERT_EQ(outputs.size(), 1u);
  auto d = [](const at::Tensor& t) { return t.to(at::kDouble); };
  at::Tensor expected =
      at::linear(at::tanh(at::linear(d(x), d(w1), d(b1))), d(w2));
  EXPECT_TRUE(at::allclose(d(outputs[0]), expected, 1e-4, 1e-4));
  ASSERT_NE(fec.multiDeviceExecutor(), nullptr);
  EXPECT_EQ(
      typesOf(fec.multiDeviceExecutor()->communications()),
      (std::vector<CommunicationType>{CommunicationType::ReduceScatter}));
}

TEST_F(MultiDeviceTest, CommunicationOnlyFusionsOnOneDevice) {
  const DeviceMesh mesh({0});
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeSymbolicTensor(2);
    fusion->addInput(x);
    shardAllocation(x, 0, mesh);
    TensorView* gathered = set(x);
    gathered->setDeviceMesh(mesh);
    TensorView* total = sum(x, {0});
    fusion->addOutput(gathered);
    fusion->addOutput(total);
  }
  FusionExecutorCache fec(std::move(fusion));
  at::Tensor x = at::randn({4, 3});
  auto outputs = fec.runFusionWithInputs({x});
  EXPECT_TRUE(at::equal(outputs[0], x));
  EXPECT_TRUE(at::allclose(outputs[1], x.sum(0)));
}

TEST_F(MultiDeviceTest, MeshLargerThanTheProcessGroupIsAUserError) {
  auto fusion = std::make_unique<Fusion>();
  tpMlp(fusion.get(), DeviceMesh({0, 1}));
  FusionExecutorCache fec(std::move(fusion));
  at::Tensor x = at::randn({8, 16});
  EXPECT_THAT(
      [&] {
        fec.runFusionWithInputs(
            {x, at::randn({16, 16}), at::randn({16}), at::randn({16, 16})});
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("placed on DeviceMesh{0 1}"),
          HasSubstr("the process group has 1 rank(s)"),
          HasSubstr("torchrun --nproc-per-node=2"))));
}

TEST_F(MultiDeviceTest, ConstantShardedExtentIsAUserError) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigConcreteTensor({8, 4});
    fusion->addInput(x);
    shardAllocation(x, 0, DeviceMesh({0}));
    fusion->addOutput(relu(x));
  }
  EXPECT_THAT(
      [&] { MultiDeviceExecutor executor(fusion.get()); },
      ThrowsMessage<UserError>(HasSubstr("Give sharded axes symbolic sizes")));
}

TEST_F(MultiDeviceTest, ShardTensorCutsTheRanksPart) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeSymbolicTensor(2);
  shardLoop(x, 1, DeviceMesh({0}));
  at::Tensor t = at::randn({3, 4});
  EXPECT_TRUE(at::equal(shardTensor(t, x), t));
  TensorView* y = makeSymbolicTensor(2);
  y->setDeviceMesh(DeviceMesh({0}));
  EXPECT_TRUE(at::equal(shardTensor(t, y), t));
  EXPECT_EQ(Communicator::getInstance().size(), 1);
  EXPECT_EQ(Communicator::getInstance().deviceId(), 0);
}

// A watched group (Python's: torch.distributed owns it) is given up when
// its owner destroys it; an owned one lives as long as the communicator
// holds it.
TEST_F(MultiDeviceTest, CommunicatorWatchesOrOwnsItsGroup) {
  Communicator& communicator = Communicator::getInstance();
  auto group = c10::make_intrusive<c10d::ProcessGroup>(1, 3);
  communicator.setProcessGroup(group, /*own=*/false);
  EXPECT_EQ(communicator.size(), 3);
  EXPECT_EQ(communicator.deviceId(), 1);
  group.reset();
  EXPECT_FALSE(communicator.hasProcessGroup());
  EXPECT_EQ(communicator.size(), 1);

  communicator.setProcessGroup(
      c10::make_intrusive<c10d::ProcessGroup>(0, 2), /*own=*/true);
  EXPECT_EQ(communicator.size(), 2);
  communicator.setProcessGroup({});
  EXPECT_FALSE(communicator.hasProcessGroup());
  EXPECT_EQ(communicator.deviceId(), 0);
}

TEST_F(MultiDeviceGpuTest, OneDeviceMeshRunsKernelsPerStage) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    const DeviceMesh mesh({0});
    TensorView* x = makeSymbolicTensor(2);
    TensorView* b = makeSymbolicTensor(1);
    fusion->addInput(x);
    fusion->addInput(b);
    shardAllocation(x, 0, mesh);
    b->setDeviceMesh(mesh);
    TensorView* y = relu(add(x, broadcast(b, {true, false})));
    TensorView* rows = sum(y, {1}); // split with x
    TensorView* cols = sum(y, {0}); // partial, then allreduce
    TensorView* scaled = mul(cols, IrBuilder::create<Val>(0.5));
    fusion->addOutput(rows);
    fusion->addOutput(scaled);
  }
  FusionExecutorCache fec(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor x = at::randn({1000, 129}, options);
  at::Tensor b = at::randn({129}, options);
  auto outputs = fec.runFusionWithInputs({x, b});
  at::Tensor y = at::relu(x + b);
  EXPECT_TRUE(at::allclose(outputs[0], y.sum(1), 1e-4, 1e-4));
  EXPECT_TRUE(at::allclose(outputs[1], y.sum(0) * 0.5, 1e-3, 1e-3));
  const auto& stages = fec.multiDeviceExecutor()->stages();
  ASSERT_EQ(stages.size(), 3u);
  EXPECT_EQ(stages[1].type(), SchedulerType::Communication);
  // The rank-local stage ran compiled kernels.
  auto* runtime = stages[0].cache->getMostRecentKernelRuntime();
  ASSERT_NE(runtime, nullptr);
  EXPECT_FALSE(runtime->kernelCode(0).empty());
}

} // namespace fuser
