#include "gauntlet/base/stage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "gauntlet/base/error.h"

namespace gauntlet {

namespace {

// The page's layout: byte 0 the stage, bytes 1.. the fallback op, NUL-terminated.
constexpr std::size_t kPageBytes = 128;
constexpr std::size_t kOpBytes = kPageBytes - 2;

struct Page {
  volatile std::uint8_t stage;
  volatile char op[kPageBytes - 1];
};

Page g_local{};
Page* g_page = &g_local;

constexpr std::string_view kNames[] = {"",        "golden", "inputs",  "op",      "outputs",
                                       "compare", "trace",  "compile", "compiled"};
constexpr std::string_view kTexts[] = {"",
                                       "preparing inputs and the golden on the CPU",
                                       "moving inputs to the device",
                                       "running on the device",
                                       "copying outputs to the host",
                                       "comparing with the golden",
                                       "tracing the graph",
                                       "compiling",
                                       "running compiled code"};

}  // namespace

std::string_view stage_name(Stage s) {
  const auto i = static_cast<std::size_t>(s);
  return i < std::size(kNames) ? kNames[i] : "";
}

std::string stage_text(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i] == name) return std::string(kTexts[i]);
  }
  return std::string(name);
}

void enter_stage(Stage s) noexcept { g_page->stage = static_cast<std::uint8_t>(s); }

Stage current_stage() noexcept {
  const std::uint8_t v = g_page->stage;
  return v < std::size(kNames) ? static_cast<Stage>(v) : Stage::None;
}

void begin_case_stage() noexcept {
  g_page->op[0] = '\0';
  enter_stage(Stage::Golden);
}

void note_fallback_entered(std::string_view op) noexcept {
  if (g_page->op[0] != '\0' || op.empty()) return;
  // The first character last: a reader sees no op or the whole of it.
  const std::size_t n = std::min(op.size(), kOpBytes);
  for (std::size_t i = 1; i < n; ++i) g_page->op[i] = op[i];
  g_page->op[n] = '\0';
  g_page->op[0] = op[0];
}

std::string fallback_entered() {
  std::string op;
  for (std::size_t i = 0; i < kOpBytes && g_page->op[i] != '\0'; ++i) op += g_page->op[i];
  return op;
}

void share_stage(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path + ": cannot create the stage file: " + std::strerror(errno));
  if (::ftruncate(fd, kPageBytes) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(path + ": cannot size the stage file: " + std::strerror(e));
  }
  void* p = ::mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) throw Error(path + ": cannot map the stage file: " + std::strerror(e));
  Page* shared = static_cast<Page*>(p);
  shared->stage = g_page->stage;
  for (std::size_t i = 0; i < sizeof(shared->op); ++i) shared->op[i] = g_page->op[i];
  g_page = shared;
}

void share_stage_from_env() {
  if (const char* path = std::getenv(kStageFileEnv); path != nullptr && *path != '\0') share_stage(path);
}

SharedStage read_shared_stage(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SharedStage s;
  if (bytes.empty()) return s;
  const auto v = static_cast<std::uint8_t>(bytes[0]);
  if (v < std::size(kNames)) s.stage = static_cast<Stage>(v);
  for (std::size_t i = 1; i < bytes.size() && bytes[i] != '\0'; ++i) s.fallback_op += bytes[i];
  return s;
}

}  // namespace gauntlet
