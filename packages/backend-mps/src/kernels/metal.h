// Metal device discovery as plait-backend-mps uses it, behind a header without Objective-C.
//
// Two implementations: metal.mm (APPLE only, Objective-C++ against Metal.framework) and
// no_metal.cpp (every other system; MLX's no_gpu pattern): the same bindings over a probe
// that answers "unavailable" with the reason.
#pragma once

#include <cstdint>
#include <string>

namespace plait::mps {

struct Probe {
  bool available = false;
  std::string reason;  // why it is unavailable ("" otherwise)
  std::string name;    // the default Metal device's name
  uint64_t recommended_max_working_set_size = 0;
};

bool compiled_with_metal() noexcept;
Probe probe() noexcept;

}  // namespace plait::mps
