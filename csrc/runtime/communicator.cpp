#include <runtime/communicator.h>

#include <base/exceptions.h>

#include <ATen/ATen.h>

#include <cstdlib>
#include <exception>

namespace fuser {

Communicator& Communicator::getInstance() {
  // Never destroyed: a group it owns is not released among the static
  // destructors at exit.
  static Communicator* communicator = new Communicator;
  return *communicator;
}

void Communicator::setProcessGroup(
    c10::intrusive_ptr<c10d::ProcessGroup> group, bool own) {
  std::lock_guard<std::mutex> lock(mutex_);
  owned_.reset();
  watched_.reset();
  if (!group.defined()) {
    return;
  }
  if (own) {
    owned_ = std::move(group);
  } else {
    watched_.emplace(group);
  }
}

c10::intrusive_ptr<c10d::ProcessGroup> Communicator::groupLocked() const {
  if (owned_.defined()) {
    return owned_;
  }
  return watched_.has_value() ? watched_->lock()
                              : c10::intrusive_ptr<c10d::ProcessGroup>();
}

bool Communicator::hasProcessGroup() const {
  return processGroup().defined();
}

c10::intrusive_ptr<c10d::ProcessGroup> Communicator::processGroup() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return groupLocked();
}

int64_t Communicator::deviceId() const {
  auto group = processGroup();
  return group.defined() ? group->getRank() : 0;
}

int64_t Communicator::size() const {
  auto group = processGroup();
  return group.defined() ? group->getSize() : 1;
}

int64_t Communicator::local_rank() const {
  if (const char* local = std::getenv("LOCAL_RANK")) {
    return std::atoll(local);
  }
  return deviceId();
}

std::string Communicator::backend() const {
  auto group = processGroup();
  return group.defined() ? group->getBackendName() : std::string();
}

std::chrono::milliseconds Communicator::timeout() const {
  int64_t seconds = 300;
  if (const char* value = std::getenv("FUSER_COMM_TIMEOUT_S")) {
    seconds = std::max<int64_t>(1, std::atoll(value));
  }
  return std::chrono::milliseconds(seconds * 1000);
}

std::vector<std::vector<int64_t>> Communicator::allgatherValues(
    const std::vector<int64_t>& values) const {
  auto group = processGroup();
  if (!group.defined() || group->getSize() == 1) {
    return {values};
  }
  // NCCL moves only device tensors; Gloo takes host tensors.
  const bool device = group->getBackendName() == "nccl";
  auto options = at::TensorOptions().dtype(at::kLong);
  at::Tensor mine = at::tensor(values, options);
  if (device) {
    mine = mine.to(at::Device(at::kCUDA, local_rank()));
  }
  std::vector<at::Tensor> inputs{mine};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int i = 0; i < group->getSize(); ++i) {
    outputs[0].push_back(at::empty_like(mine));
  }
  waitFor(
      group->allgather(outputs, inputs), "exchanging a check between ranks");
  std::vector<std::vector<int64_t>> all;
  for (const at::Tensor& t : outputs[0]) {
    at::Tensor host = t.cpu();
    all.emplace_back(
        host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
  }
  return all;
}

void waitFor(
    const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) {
  const auto timeout = Communicator::getInstance().timeout();
  bool done = false;
  try {
    done = work->wait(timeout);
  } catch (const std::exception& e) {
    FUSER_CHECK(
        false, "A collective (", what, ") failed: ", e.what(),
        ". Every rank must run the same fusions on shards of matching sizes; "
        "a rank that stopped or ran something else leaves the others "
        "waiting until the timeout (FUSER_COMM_TIMEOUT_S).");
  }
  FUSER_CHECK(
      done, "A collective (", what, ") did not complete within ",
      timeout.count() / 1000,
      " s (FUSER_COMM_TIMEOUT_S): another rank did not take part.");
}

} // namespace fuser
