// Fuzz targets: the parsers that take text a user (or a crashed worker) wrote.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// Note [Fuzz targets]: each target is a function of the bytes of one input, defined with
// GAUNTLET_FUZZ_TARGET(name). A target feeds the bytes to one parser and checks what the parser
// promises: it either returns or throws its documented error (gauntlet::Error, or
// std::invalid_argument for the small parsers), every error is one line, and what it returns
// prints back to a text that parses to the same thing. Anything else (another exception, a
// crash, a sanitizer report, a hang) is a finding.
// Built two ways from the same sources (harness/fuzz/CMakeLists.txt):
//  - with -DGAUNTLET_FUZZ=ON (clang): gauntlet_fuzz_<name>, a libFuzzer binary under ASan and
//    UBSan whose LLVMFuzzerTestOneInput (support.cpp) calls the target named by
//    GAUNTLET_FUZZ_ENTRY; run by ci/fuzz.sh;
//  - always: gauntlet_fuzz_replay, every target in one program that runs the files of a corpus
//    through its target; ctest replays harness/fuzz/corpus/<name>/ (FuzzReplay.<name>), so every
//    input that once found a bug stays a regression test.
namespace gauntlet::fuzz {

using Target = void (*)(std::string_view data);

struct Register {
  Register(const char* name, Target target);
};
Target find(const std::string& name);

// Aborts (a finding) with `what` unless `ok`.
void require(bool ok, const std::string& what);
// Aborts unless `message` is one line (no control character).
void require_one_line(const std::string& message);
// A file holding `data`, private to this process, rewritten on each call: for parsers that read
// files. Its name ends in `suffix`.
std::string write_temp(std::string_view data, const std::string& suffix);

}  // namespace gauntlet::fuzz

#define GAUNTLET_FUZZ_TARGET(name)                                             \
  static void fuzz_##name(std::string_view data);                              \
  static const ::gauntlet::fuzz::Register register_##name(#name, fuzz_##name); \
  static void fuzz_##name(std::string_view data)
