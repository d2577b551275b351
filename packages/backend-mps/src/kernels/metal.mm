// metal.h on macOS: asks Metal for the system's default device.
//
// UNTESTED in this repository's CI (Linux only); compiled only when CMake sees APPLE. Built
// with -fobjc-arc, so Metal objects are released automatically.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include "metal.h"

namespace plait::mps {

bool compiled_with_metal() noexcept { return true; }

Probe probe() noexcept {
  Probe p;
  @autoreleasepool {
    id<MTLDevice> device = MTLCreateSystemDefaultDevice();
    if (device == nil) {
      p.reason = "Metal reports no device (MTLCreateSystemDefaultDevice returned nil)";
      return p;
    }
    p.available = true;
    p.name = std::string([[device name] UTF8String]);
    p.recommended_max_working_set_size = [device recommendedMaxWorkingSetSize];
  }
  return p;
}

}  // namespace plait::mps
