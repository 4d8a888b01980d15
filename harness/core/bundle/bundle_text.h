// The fixed text of a bundle's programs (Note [Bundles] in harness/core/bundle/bundle.cpp), embedded at
// configure time from harness/core/bundle/ (bundle_text.cpp.in): {{CALL}}, {{DATA}} and {{KEY}}
// mark what write_bundle fills in.
#pragma once

namespace gauntlet::bundle_text {

extern const char* const kReproPy;     // repro.py
extern const char* const kReproCpp;    // repro.cpp.in
extern const char* const kCMakeLists;  // CMakeLists.txt.in

}  // namespace gauntlet::bundle_text
