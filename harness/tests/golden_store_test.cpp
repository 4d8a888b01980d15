// The golden store: bit-exact round trips, content addressing, versioning, corruption detection,
// frozen releases, gc, read-only use and concurrent readers.
#include "gauntlet/golden/golden_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <torch/version.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "gauntlet/base/case_key.h"
#include "gauntlet/golden/golden.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;
using State = GoldenLookup::State;

constexpr const char* kRef = "torch-test+netlib";
constexpr const char* kMm = "op/mm/f32/17x31,31x8/contig/eager-bwd";

class GoldenStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet_golden_store_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    store_dir_ = (dir_ / "store").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::unique_ptr<GoldenStore> rw() { return GoldenStore::open(store_dir_, GoldenStore::Mode::ReadWrite); }
  std::unique_ptr<GoldenStore> ro() { return GoldenStore::open(store_dir_, GoldenStore::Mode::ReadOnly); }
  std::vector<fs::path> object_files() const {
    std::vector<fs::path> out;
    for (const auto& f : fs::recursive_directory_iterator(fs::path(store_dir_) / "objects")) {
      if (f.is_regular_file()) out.push_back(f.path());
    }
    return out;
  }
  fs::path object_file(const GoldenEntry& e) const {
    return fs::path(store_dir_) / "objects" / e.object.substr(0, 2) / (e.object + ".zst");
  }
  fs::path dir_;
  std::string store_dir_;
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write_bytes(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// Same names, dtypes, shapes and bytes (NaN payloads and -0.0 included).
::testing::AssertionResult BitExact(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << a.size() << " outputs vs " << b.size();
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const at::Tensor x = a[i].value.contiguous(), y = b[i].value.contiguous();
    if (a[i].name != b[i].name) return ::testing::AssertionFailure() << a[i].name << " vs " << b[i].name;
    if (x.scalar_type() != y.scalar_type()) return ::testing::AssertionFailure() << a[i].name << ": dtype";
    if (x.sizes() != y.sizes()) return ::testing::AssertionFailure() << a[i].name << ": shape";
    if (y.device() != at::kCPU) return ::testing::AssertionFailure() << a[i].name << ": not on the CPU";
    const std::size_t n = x.numel() * x.element_size();
    if (n > 0 && std::memcmp(x.data_ptr(), y.data_ptr(), n) != 0) {
      return ::testing::AssertionFailure() << a[i].name << ": bytes differ";
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<NamedTensor> mixed_outputs() {
  at::Tensor f = at::randn({5, 7}, at::kDouble);
  f[0][0] = std::numeric_limits<double>::quiet_NaN();
  f[0][1] = -0.0;
  f[0][2] = std::numeric_limits<double>::infinity();
  f[0][3] = std::numeric_limits<double>::denorm_min();
  at::Tensor i = at::arange(-6, 6, at::kLong).reshape({3, 4});
  i[0][0] = std::numeric_limits<std::int64_t>::min();
  i[0][1] = std::numeric_limits<std::int64_t>::max();
  return {{"out0", f},
          {"out1", i},
          {"out2", at::rand({4, 3}) > 0.5},
          {"scalar", at::scalar_tensor(3.25, at::kDouble)},
          {"empty", at::empty({0, 4}, at::kFloat)},
          {"grad.self", at::randn({2, 3, 2}, at::kDouble).transpose(0, 2)}};  // non-contiguous
}

std::vector<NamedTensor> mm_golden() {
  const CaseKey k = CaseKey::parse(kMm);
  const OpDef* def = find_op_def(k.target);
  EXPECT_NE(def, nullptr);
  return compute_golden(*def, k, make_inputs(k, def->spec));
}

std::vector<NamedTensor> filled(double v) {
  return {{"out0", at::full({64, 16}, v, at::kDouble)},
          {"out1", at::full({8}, static_cast<std::int64_t>(v), at::kLong)}};
}

TEST(GoldenStoreIdentity, ReferenceIdentity) {
  const std::string id = reference_identity();
  EXPECT_EQ(id.rfind("torch-" TORCH_VERSION "+", 0), 0u) << id;
  EXPECT_GT(id.size(), std::string("torch-" TORCH_VERSION "+").size()) << id;
  EXPECT_EQ(id.find('/'), std::string::npos) << id;
  std::cout << "reference identity: " << id << "\n";
}

TEST_F(GoldenStoreTest, RoundTripBitExact) {
  auto store = rw();
  EXPECT_TRUE(fs::exists(fs::path(store_dir_) / "index.sqlite"));
  EXPECT_TRUE(fs::is_directory(fs::path(store_dir_) / "manifests"));
  const auto outs = mixed_outputs();
  const GoldenEntry e = store->put("op/x/f64/5x7/contig/eager", 1, kRef, outs);
  EXPECT_EQ(e.key, "op/x/f64/5x7/contig/eager");
  EXPECT_EQ(e.case_id, key_id(e.key));
  EXPECT_EQ(e.object.size(), 32u);
  EXPECT_GT(e.bytes, 0);
  EXPECT_EQ(static_cast<std::uintmax_t>(e.bytes), fs::file_size(object_file(e)));

  GoldenLookup got = store->get(e.key, 1, kRef);
  ASSERT_EQ(got.state, State::Hit) << got.problem;
  EXPECT_TRUE(BitExact(outs, got.outputs));
  EXPECT_EQ(got.entry.object, e.object);
  EXPECT_EQ(got.entry.reference, kRef);
  EXPECT_TRUE(store->contains_valid(e.key, 1, kRef));
  EXPECT_EQ(store->check(e), std::nullopt);
  EXPECT_TRUE(BitExact(outs, store->load(e)));

  // The real compute path, read back by a second (read-only) instance.
  const auto mm = mm_golden();
  ASSERT_GE(mm.size(), 3u);  // out0, grad.self, grad.mat2
  store->put(kMm, kGoldenMethodVersion, kRef, mm);
  auto reader = ro();
  got = reader->get(kMm, kGoldenMethodVersion, kRef);
  ASSERT_EQ(got.state, State::Hit) << got.problem;
  EXPECT_TRUE(BitExact(mm, got.outputs));
  ASSERT_EQ(reader->entries().size(), 2u);
  EXPECT_EQ(reader->entries()[0].key, kMm);  // sorted by key

  // No outputs at all is a valid (if odd) golden too.
  store->put("op/none/f32/1/contig/eager", 1, kRef, {});
  got = store->get("op/none/f32/1/contig/eager", 1, kRef);
  ASSERT_EQ(got.state, State::Hit) << got.problem;
  EXPECT_TRUE(got.outputs.empty());
}

TEST_F(GoldenStoreTest, ContentAddressed) {
  auto store = rw();
  const auto outs = mixed_outputs();
  const GoldenEntry a = store->put("op/a/f64/5x7/contig/eager", 1, kRef, outs);
  const GoldenEntry b = store->put("op/b/f64/5x7/contig/eager", 1, kRef, outs);
  EXPECT_EQ(a.object, b.object);
  ASSERT_EQ(object_files().size(), 1u);
  EXPECT_EQ(object_files()[0], object_file(a));
  // Putting it again rewrites nothing.
  const auto mtime = fs::last_write_time(object_file(a));
  store->put("op/a/f64/5x7/contig/eager", 1, kRef, outs);
  EXPECT_EQ(fs::last_write_time(object_file(a)), mtime);
  // Different values, another object; both keys still read back.
  const GoldenEntry c = store->put("op/c/f64/5x7/contig/eager", 1, kRef, filled(2));
  EXPECT_NE(c.object, a.object);
  EXPECT_EQ(object_files().size(), 2u);
  EXPECT_TRUE(BitExact(outs, store->get("op/b/f64/5x7/contig/eager", 1, kRef).outputs));
  EXPECT_EQ(store->entries().size(), 3u);
  // No temporary files are left behind.
  for (const auto& f : object_files()) EXPECT_EQ(f.extension(), ".zst") << f;
}

TEST_F(GoldenStoreTest, OtherMethodVersionOrReferenceIsAMiss) {
  auto store = rw();
  store->put(kMm, 1, kRef, filled(1));
  EXPECT_EQ(store->get(kMm, 2, kRef).state, State::Missing);
  EXPECT_EQ(store->get(kMm, 1, "torch-1.13.0+openblas-pthread").state, State::Missing);
  EXPECT_EQ(store->get("op/mm/f32/17x31,31x8/contig/eager", 1, kRef).state, State::Missing);
  EXPECT_FALSE(store->contains_valid(kMm, 2, kRef));
  EXPECT_FALSE(store->contains_valid(kMm, 1, "torch-1.13.0+openblas-pthread"));

  // A store built with another golden method version: entries live side by side, never mixed.
  store->put(kMm, 2, kRef, filled(2));
  store->put(kMm, 1, "other-ref", filled(3));
  EXPECT_TRUE(BitExact(filled(1), store->get(kMm, 1, kRef).outputs));
  EXPECT_TRUE(BitExact(filled(2), store->get(kMm, 2, kRef).outputs));
  EXPECT_TRUE(BitExact(filled(3), store->get(kMm, 1, "other-ref").outputs));
  EXPECT_EQ(store->entries().size(), 3u);

  // An index row pointing at an object made by another method version is corrupt, not a hit.
  const GoldenEntry v2 = store->get(kMm, 2, kRef).entry;
  GoldenEntry forged = v2;
  forged.method_version = 1;
  EXPECT_NE(store->check(forged), std::nullopt);
}

TEST_F(GoldenStoreTest, FlippedByteIsCorrupt) {
  auto store = rw();
  const auto outs = mm_golden();
  const GoldenEntry e = store->put(kMm, 1, kRef, outs);
  const fs::path file = object_file(e);
  const std::string good = read_bytes(file);
  ASSERT_GT(good.size(), 16u);
  // Every position, one bit flipped: never a hit, always a problem.
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 << (i % 8)));
    write_bytes(file, bad);
    const GoldenLookup got = store->get(kMm, 1, kRef);
    ASSERT_EQ(got.state, State::Corrupt) << "byte " << i << " of " << good.size();
    EXPECT_FALSE(got.problem.empty());
    EXPECT_TRUE(got.outputs.empty());
    EXPECT_EQ(got.entry.object, e.object);
  }
  std::string bad = good;
  bad[bad.size() / 2] = static_cast<char>(~bad[bad.size() / 2]);
  write_bytes(file, bad);
  const auto problem = store->check(e);
  ASSERT_NE(problem, std::nullopt);
  EXPECT_NE(problem->find(file.string()), std::string::npos) << *problem;
  EXPECT_FALSE(store->contains_valid(kMm, 1, kRef));
  EXPECT_THROW(store->load(e), GoldenStoreError);

  // Putting the same golden again heals the object.
  store->put(kMm, 1, kRef, outs);
  EXPECT_EQ(read_bytes(file), good);
  EXPECT_EQ(store->get(kMm, 1, kRef).state, State::Hit);
}

TEST_F(GoldenStoreTest, TruncatedOrMissingObjectIsCorrupt) {
  auto store = rw();
  const GoldenEntry e = store->put(kMm, 1, kRef, mixed_outputs());
  const GoldenEntry other = store->put("op/other/f64/1/contig/eager", 1, kRef, filled(7));
  const fs::path file = object_file(e);
  const std::string good = read_bytes(file);
  for (std::size_t n = 0; n < good.size(); ++n) {
    write_bytes(file, good.substr(0, n));
    const GoldenLookup got = store->get(kMm, 1, kRef);
    ASSERT_EQ(got.state, State::Corrupt) << n << " bytes";
    EXPECT_FALSE(got.problem.empty());
    EXPECT_TRUE(got.outputs.empty());
  }
  write_bytes(file, good + "x");  // trailing garbage
  EXPECT_EQ(store->get(kMm, 1, kRef).state, State::Corrupt);

  fs::remove(file);
  const GoldenLookup got = store->get(kMm, 1, kRef);
  ASSERT_EQ(got.state, State::Corrupt);
  EXPECT_NE(got.problem.find("missing"), std::string::npos) << got.problem;

  // check() over every entry finds exactly the damaged one.
  int bad = 0;
  for (const GoldenEntry& entry : store->entries()) {
    if (auto p = store->check(entry)) {
      ++bad;
      EXPECT_EQ(entry.key, kMm) << *p;
    }
  }
  EXPECT_EQ(bad, 1);
  EXPECT_EQ(store->check(other), std::nullopt);
}

TEST_F(GoldenStoreTest, FreezeIsImmutable) {
  auto store = rw();
  const auto a_old = mm_golden();
  store->put(kMm, 1, kRef, a_old);
  store->put("op/b/f64/1/contig/eager", 1, kRef, filled(1));
  store->put("op/c/f64/1/contig/eager", 2, kRef, filled(2));  // another method version

  EXPECT_EQ(store->freeze("2.4", {kMm, "op/b/f64/1/contig/eager"}, 1, kRef), 2u);
  EXPECT_EQ(store->releases(), std::vector<std::string>{"2.4"});

  const fs::path manifest = fs::path(store_dir_) / "manifests" / "2.4.json";
  ASSERT_TRUE(fs::exists(manifest));
  const auto j = nlohmann::json::parse(read_bytes(manifest));
  EXPECT_EQ(j["release"], "2.4");
  EXPECT_EQ(j["method_version"], 1);
  EXPECT_EQ(j["reference"], kRef);
  EXPECT_FALSE(j["created_at"].get<std::string>().empty());
  ASSERT_EQ(j["entries"].size(), 2u);
  EXPECT_EQ(j["entries"][0]["key"], kMm);
  EXPECT_EQ(j["entries"][0]["object"], store->get(kMm, 1, kRef).entry.object);

  // Immutable.
  try {
    store->freeze("2.4", {kMm}, 1, kRef);
    FAIL() << "froze 2.4 twice";
  } catch (const GoldenStoreError& e) {
    EXPECT_NE(std::string(e.what()).find("release 2.4 is already frozen (manifests are immutable)"), std::string::npos)
        << e.what();
  }
  // A key without an entry of this method version and reference.
  try {
    store->freeze("2.5", {kMm, "op/c/f64/1/contig/eager", "op/d/f64/1/contig/eager"}, 1, kRef);
    FAIL() << "froze missing keys";
  } catch (const GoldenStoreError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("op/c/f64/1/contig/eager"), std::string::npos) << what;
    EXPECT_NE(what.find("2 of 3"), std::string::npos) << what;
  }
  EXPECT_EQ(store->releases().size(), 1u);  // the failed freeze left nothing behind
  EXPECT_FALSE(fs::exists(fs::path(store_dir_) / "manifests" / "2.5.json"));
  EXPECT_THROW(store->freeze("../evil", {kMm}, 1, kRef), GoldenStoreError);
  EXPECT_THROW(store->freeze("", {kMm}, 1, kRef), GoldenStoreError);

  // The entry is replaced; the release still sees what it froze, whatever is asked for.
  store->put(kMm, 1, kRef, filled(9));
  EXPECT_TRUE(BitExact(filled(9), store->get(kMm, 1, kRef).outputs));
  GoldenLookup frozen = store->get(kMm, 7, "whatever", "2.4");
  ASSERT_EQ(frozen.state, State::Hit) << frozen.problem;
  EXPECT_TRUE(BitExact(a_old, frozen.outputs));
  EXPECT_EQ(frozen.entry.method_version, 1);
  EXPECT_EQ(frozen.entry.reference, kRef);
  EXPECT_EQ(frozen.entry.key, kMm);
  EXPECT_GT(frozen.entry.bytes, 0);
  EXPECT_EQ(store->get("op/c/f64/1/contig/eager", 2, kRef, "2.4").state, State::Missing);
  EXPECT_EQ(store->get(kMm, 1, kRef, "9.9").state, State::Missing);

  // A read-only copy of the folder serves the release too.
  const fs::path copy = dir_ / "copy";
  fs::copy(store_dir_, copy, fs::copy_options::recursive);
  store.reset();
  auto reader = GoldenStore::open(copy.string(), GoldenStore::Mode::ReadOnly);
  EXPECT_TRUE(BitExact(a_old, reader->get(kMm, 1, kRef, "2.4").outputs));
}

TEST_F(GoldenStoreTest, GcKeepsLiveAndFrozen) {
  auto store = rw();
  const GoldenEntry live = store->put("op/live/f64/1/contig/eager", 1, kRef, filled(1));
  const GoldenEntry dead = store->put("op/dead/f64/1/contig/eager", 1, kRef, filled(2));
  const GoldenEntry old = store->put("op/live/f64/1/contig/eager", 0, kRef, filled(3));
  const GoldenEntry frozen = store->put("op/frozen/f64/1/contig/eager", 1, kRef, filled(4));
  const GoldenEntry replaced = store->put("op/replaced/f64/1/contig/eager", 1, kRef, filled(5));
  store->freeze("1.0", {"op/frozen/f64/1/contig/eager", "op/replaced/f64/1/contig/eager"}, 1, kRef);
  store->put("op/replaced/f64/1/contig/eager", 1, kRef, filled(6));  // the frozen object is now only in the manifest
  // A stray temporary file from a writer that died long ago.
  const fs::path stale = object_file(live).string() + ".tmp.1.dead";
  write_bytes(stale, "x");
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  ASSERT_EQ(object_files().size(), 7u);

  const auto [entries, objects] = store->gc({"op/live/f64/1/contig/eager", "op/replaced/f64/1/contig/eager"}, 1);
  EXPECT_EQ(entries, 2u);  // dead, and live at method version 0
  EXPECT_EQ(objects, 2u);
  EXPECT_FALSE(fs::exists(object_file(dead)));
  EXPECT_FALSE(fs::exists(object_file(old)));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(object_file(live)));
  EXPECT_TRUE(fs::exists(object_file(frozen)));
  EXPECT_TRUE(fs::exists(object_file(replaced)));
  EXPECT_EQ(store->get("op/dead/f64/1/contig/eager", 1, kRef).state, State::Missing);
  EXPECT_EQ(store->get("op/live/f64/1/contig/eager", 0, kRef).state, State::Missing);
  EXPECT_EQ(store->get("op/live/f64/1/contig/eager", 1, kRef).state, State::Hit);
  EXPECT_EQ(store->get("op/frozen/f64/1/contig/eager", 1, kRef).state, State::Hit);  // manifest keeps it
  EXPECT_TRUE(BitExact(filled(5), store->get("op/replaced/f64/1/contig/eager", 1, kRef, "1.0").outputs));
  EXPECT_TRUE(BitExact(filled(6), store->get("op/replaced/f64/1/contig/eager", 1, kRef).outputs));

  // Nothing more to do the second time.
  EXPECT_EQ(store->gc({"op/live/f64/1/contig/eager", "op/replaced/f64/1/contig/eager"}, 1),
            std::make_pair(std::size_t{0}, std::size_t{0}));
}

TEST_F(GoldenStoreTest, ReadOnly) {
  try {
    ro();
    FAIL() << "opened a missing store";
  } catch (const GoldenStoreError& e) {
    EXPECT_EQ(std::string(e.what()), store_dir_ + ": no such golden store");
  }
  EXPECT_FALSE(fs::exists(store_dir_));  // read-only never creates

  rw()->put(kMm, 1, kRef, filled(1));
  auto store = ro();
  EXPECT_EQ(store->get(kMm, 1, kRef).state, State::Hit);
  EXPECT_THROW(store->put(kMm, 1, kRef, filled(2)), GoldenStoreError);
  EXPECT_THROW(store->freeze("1.0", {kMm}, 1, kRef), GoldenStoreError);
  EXPECT_THROW(store->gc({}, 1), GoldenStoreError);
  EXPECT_TRUE(BitExact(filled(1), store->get(kMm, 1, kRef).outputs));
  store.reset();
  // No WAL files: the folder can be copied or mounted read-only as it is.
  EXPECT_FALSE(fs::exists(fs::path(store_dir_) / "index.sqlite-wal"));
  EXPECT_FALSE(fs::exists(fs::path(store_dir_) / "index.sqlite-shm"));
}

TEST_F(GoldenStoreTest, NotAStore) {
  const fs::path plain = dir_ / "plain";
  fs::create_directories(plain);
  write_bytes(plain / "notes.txt", "hello");
  try {
    GoldenStore::open(plain.string(), GoldenStore::Mode::ReadOnly);
    FAIL();
  } catch (const GoldenStoreError& e) {
    EXPECT_EQ(std::string(e.what()), plain.string() + ": not a golden store (no index.sqlite)");
  }
  EXPECT_THROW(GoldenStore::open(plain.string(), GoldenStore::Mode::ReadWrite), GoldenStoreError);
  EXPECT_FALSE(fs::exists(plain / "index.sqlite"));

  // Another application's SQLite file.
  const fs::path foreign = dir_ / "foreign";
  fs::create_directories(foreign);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((foreign / "index.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE meta(key TEXT, value TEXT); INSERT INTO meta VALUES('application','gauntlet')",
               nullptr, nullptr, nullptr);
  sqlite3_close(db);
  for (auto mode : {GoldenStore::Mode::ReadOnly, GoldenStore::Mode::ReadWrite}) {
    try {
      GoldenStore::open(foreign.string(), mode);
      FAIL();
    } catch (const GoldenStoreError& e) {
      EXPECT_NE(std::string(e.what()).find("not a golden store"), std::string::npos) << e.what();
    }
  }
  // Not SQLite at all.
  const fs::path junk = dir_ / "junk";
  fs::create_directories(junk);
  write_bytes(junk / "index.sqlite", std::string(4096, 'j'));
  EXPECT_THROW(GoldenStore::open(junk.string(), GoldenStore::Mode::ReadOnly), GoldenStoreError);

  // A newer layout.
  rw();
  ASSERT_EQ(sqlite3_open((fs::path(store_dir_) / "index.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  for (auto mode : {GoldenStore::Mode::ReadOnly, GoldenStore::Mode::ReadWrite}) {
    try {
      GoldenStore::open(store_dir_, mode);
      FAIL();
    } catch (const GoldenStoreError& e) {
      EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    }
  }
}

TEST_F(GoldenStoreTest, ReopenKeepsEntries) {
  rw()->put(kMm, 1, kRef, filled(1));
  auto store = rw();  // a second open migrates nothing and loses nothing
  EXPECT_EQ(store->entries().size(), 1u);
  EXPECT_EQ(store->get(kMm, 1, kRef).state, State::Hit);
}

// One writer replaces an entry over and over with fresh values (a new object each time) while
// two read-only instances read it: every read is a whole, intact golden, old or new.
TEST_F(GoldenStoreTest, ConcurrentReaders) {
  auto writer = rw();
  writer->put(kMm, 1, kRef, filled(0));
  std::atomic<bool> done{false};
  std::atomic<int> written{0};
  std::atomic<int> reads{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      auto store = ro();
      double last = -1;
      while (!done.load()) {
        const GoldenLookup got = store->get(kMm, 1, kRef);
        ++reads;
        if (got.state != State::Hit || got.outputs.size() != 2) {
          ++failures;
          ADD_FAILURE() << "state " << int(got.state) << ": " << got.problem;
          continue;
        }
        const double v = got.outputs[0].value[0][0].item<double>();
        const bool whole = at::equal(got.outputs[0].value, at::full({64, 16}, v, at::kDouble)) &&
                           at::equal(got.outputs[1].value, at::full({8}, std::int64_t(v), at::kLong));
        if (!whole || v < last || v > written.load()) {
          ++failures;
          ADD_FAILURE() << "read " << v << " after " << last;
        }
        last = v;
      }
    });
  }
  // At least 100 new objects, and on until the readers have read a fair number of times.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int i = 0;
  while (i < 100 || (reads.load() < 300 && std::chrono::steady_clock::now() < deadline)) {
    written = ++i;  // before the put: a reader may see it as soon as it is written
    writer->put(kMm, 1, kRef, filled(i));
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads.load(), 0);
  std::cout << reads.load() << " concurrent reads, " << i << " puts\n";
  EXPECT_TRUE(BitExact(filled(i), writer->get(kMm, 1, kRef).outputs));
}

}  // namespace
}  // namespace gauntlet
