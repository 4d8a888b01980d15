// The worker's loop (gauntlet/core/session/worker_loop.h): Note [Worker protocol]'s order of messages and
// Note [One write per case]'s writes, on streams.
#include "gauntlet/core/session/worker_loop.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gauntlet/run/worker_protocol.h"

using namespace gauntlet;

namespace {

// Keeps what each flush wrote: one chunk per write the worker makes.
class Chunks : public std::stringbuf {
 public:
  std::vector<std::string> chunks;

 protected:
  int sync() override {
    chunks.push_back(str().substr(flushed_));
    flushed_ = str().size();
    return 0;
  }

 private:
  std::size_t flushed_ = 0;
};

Outcome passing(const std::string& key) {
  if (key == "bad") throw std::invalid_argument("bad case key 'bad'");
  Outcome o;
  o.key = key;
  o.status = Status::Pass;
  return o;
}

}  // namespace

TEST(WorkerLoopTest, AResultWaitingForTheNextKeyGoesOutWithItsStartInOneWrite) {
  std::istringstream in("op/a\n\nop/b\n");
  Chunks buf;
  std::ostream out(&buf);
  serve_keys(in, out, passing);
  Outcome a = passing("op/a"), b = passing("op/b");
  ASSERT_EQ(buf.chunks.size(), 3u);
  EXPECT_EQ(buf.chunks[0], start_message("op/a") + "\n") << "start precedes its case, alone";
  EXPECT_EQ(buf.chunks[1], result_message("op/a", a) + "\n" + start_message("op/b") + "\n")
      << "op/b was waiting: op/a's result goes with its start";
  EXPECT_EQ(buf.chunks[2], result_message("op/b", b) + "\n") << "nothing waits: the result goes out alone";
}

TEST(WorkerLoopTest, AKeyThatCannotRunIsAnErrorResultAndTheLoopGoesOn) {
  std::istringstream in("bad\nop/c\n");
  Chunks buf;
  std::ostream out(&buf);
  serve_keys(in, out, passing);
  std::vector<WorkerMessage> messages;
  std::istringstream lines(buf.str());
  for (std::string line; std::getline(lines, line);) messages.push_back(parse_worker_message(line));
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0].kind, WorkerMessageKind::Start);
  ASSERT_EQ(messages[1].kind, WorkerMessageKind::Result);
  EXPECT_EQ(messages[1].outcome.status, Status::Error);
  EXPECT_EQ(messages[1].outcome.error, "invalid case key: bad case key 'bad'");
  EXPECT_EQ(messages[2].kind, WorkerMessageKind::Start);
  EXPECT_EQ(messages[3].kind, WorkerMessageKind::Result);
  EXPECT_EQ(messages[3].outcome.status, Status::Pass);
}
