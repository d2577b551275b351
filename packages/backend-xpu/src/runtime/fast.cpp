// Prepared kernel launches (fast.h).
#include "fast.h"

#include <stdexcept>
#include <utility>

namespace plait::xpu {

Launch::Launch(std::shared_ptr<Kernel> kernel, std::vector<Slot> slots, unsigned inputs,
               std::vector<size_t> global, std::vector<size_t> local, size_t per_item)
    : kernel_(std::move(kernel)),
      slots_(std::move(slots)),
      inputs_(inputs),
      global_(std::move(global)),
      local_(std::move(local)),
      per_item_(per_item ? per_item : 1) {
  for (const Slot& s : slots_) {
    if (s.operand > inputs_) throw std::invalid_argument("a launch slot names a missing operand");
  }
}

std::unique_ptr<Buffer> Launch::run(const Location* inputs, size_t numel, size_t out_nbytes,
                                    double scalar) const {
  const int index = device();
  for (unsigned k = 0; k < inputs_; ++k) {
    if (inputs[k].device != index) return nullptr;
  }
  auto out = std::make_unique<Buffer>(out_nbytes, index);
  if (numel == 0) return out;
  enqueue(Location{out->mem(), index, 0}, inputs, numel, scalar);
  return out;
}

bool Launch::run_into(const Location& out, const Location* inputs, size_t numel,
                      double scalar) const {
  const int index = device();
  if (out.device != index) return false;
  for (unsigned k = 0; k < inputs_; ++k) {
    if (inputs[k].device != index) return false;
  }
  if (numel != 0) enqueue(out, inputs, numel, scalar);
  return true;
}

void Launch::enqueue(const Location& out, const Location* inputs, size_t numel,
                     double scalar) const {
  Kernel& k = *kernel_;
  unsigned arg = 0;
  for (const Slot& s : slots_) {
    const Location& operand = s.operand == 0 ? out : inputs[s.operand - 1];
    switch (s.kind) {
      case Slot::kBuffer: {
        cl::cl_mem mem = operand.mem;
        k.set_arg(arg, sizeof(mem), &mem);
        break;
      }
      case Slot::kOffset: {
        const int64_t offset = static_cast<int64_t>(operand.offset / s.size);
        k.set_arg(arg, sizeof(offset), &offset);
        break;
      }
      case Slot::kCount: {
        const int64_t n = static_cast<int64_t>(numel);
        k.set_arg(arg, sizeof(n), &n);
        break;
      }
      case Slot::kScalar: {
        if (s.size == sizeof(float)) {
          const float v = static_cast<float>(scalar);
          k.set_arg(arg, sizeof(v), &v);
        } else {
          k.set_arg(arg, sizeof(scalar), &scalar);
        }
        break;
      }
      case Slot::kFixed:
        k.set_arg(arg, s.size, &s.value);  // (little-endian: the low bytes come first)
        break;
    }
    ++arg;
  }
  if (!global_.empty()) {
    k.enqueue(static_cast<unsigned>(global_.size()), global_.data(),
              local_.empty() ? nullptr : local_.data());
  } else {
    const size_t group = local_.empty() ? 1 : local_[0];
    const size_t items = (numel + per_item_ - 1) / per_item_;
    const size_t global = (items + group - 1) / group * group;
    k.enqueue(1, &global, local_.empty() ? nullptr : local_.data());
  }
}

}  // namespace plait::xpu
