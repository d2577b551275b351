// metal.h on systems without Metal: MPS is never available here.
#include "metal.h"

namespace plait::mps {

bool compiled_with_metal() noexcept { return false; }

Probe probe() noexcept {
  Probe p;
  p.reason = "MPS needs macOS with Metal; plait-backend-mps was built without Metal";
  return p;
}

}  // namespace plait::mps
