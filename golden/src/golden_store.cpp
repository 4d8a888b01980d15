// The golden store: see Note [Golden store] in golden_store.h.
//
// Object payload (before zstd):
//   "GLDN1\n"
//   {"method_version":..., "reference":..., "outputs":[{"name","dtype","shape"}, ...]}\n
//   the outputs' contiguous CPU bytes, in order
// The object's name is the XXH3-128 of that payload (32 lowercase hex digits). Every read
// decompresses, rehashes and compares with the name, then checks the header against the entry
// and the byte count against the shapes: any mismatch makes the entry Corrupt.
//
// The header does not name the case key: objects are content-addressed, so two cases with
// identical goldens (same method, reference, output names, dtypes, shapes and bytes) share one
// object (docs/golden.md). The entry row and the manifest name the key.
#include "gauntlet/golden/golden_store.h"

#include <dlfcn.h>
#include <link.h>
#include <sqlite3.h>
#include <unistd.h>
#include <zstd.h>

#include "gauntlet/base/host.h"
#include "gauntlet/base/sqlite.h"

#define XXH_INLINE_ALL
#include <ATen/Context.h>
#include <torch/version.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "gauntlet/base/case_key.h"

namespace gauntlet {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kApplication = "gauntlet-golden-store";
constexpr int kLayoutVersion = 1;
constexpr int kBusyTimeoutMs = 10000;  // the writer holds the lock briefly at each commit
constexpr std::string_view kMagic = "GLDN1\n";
constexpr int kZstdLevel = 3;

// Note [Golden store layout versions]: kMigrations[v] takes an index from layout version v to
// v + 1 (PRAGMA user_version, mirrored in meta.layout_version). Never edit a released step:
// append one and bump kLayoutVersion.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the first layout.
    R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES('application', 'gauntlet-golden-store');

CREATE TABLE entries(
  case_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  method_version INTEGER NOT NULL,
  reference TEXT NOT NULL,
  object TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  compute_us REAL NOT NULL DEFAULT 0,
  raw_bytes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(case_id, method_version, reference)
);
CREATE INDEX entries_by_object ON entries(object);

CREATE TABLE manifests(
  release TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  method_version INTEGER NOT NULL,
  reference TEXT NOT NULL,
  count INTEGER NOT NULL
);

CREATE TABLE manifest_entries(
  release TEXT NOT NULL REFERENCES manifests(release),
  key TEXT NOT NULL,
  object TEXT NOT NULL,
  PRIMARY KEY(release, key)
);
CREATE INDEX manifest_entries_by_object ON manifest_entries(object);
)sql",
};
static_assert(std::size(kMigrations) == static_cast<std::size_t>(kLayoutVersion),
              "one migration step per layout version");

// ---- Errors and SQLite helpers (gauntlet/base/sqlite.h), raising GoldenStoreError

void raise(const std::string& message, int exit_code = kExitBadInput) { throw GoldenStoreError(message, exit_code); }

// Every error is one line that starts with the file name.
[[noreturn]] void fail(const std::string& path, const std::string& what) { sqlite::fail(raise, path, what); }
[[noreturn]] void fail_sqlite(sqlite3* db, const std::string& path, const std::string& what) {
  sqlite::fail(raise, db, path, what);
}

class Stmt : public sqlite::Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, std::string_view sql) : sqlite::Stmt(raise, db, path, sql) {}
};

class Transaction : public sqlite::Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path) : sqlite::Transaction(raise, db, path) {}
};

using sqlite::as_signed;
using sqlite::as_unsigned;

std::string index_path(const std::string& dir) { return (fs::path(dir) / "index.sqlite").string(); }

// "file:" URI of a path: '%', '?' and '#' would otherwise be read as URI syntax.
std::string file_uri(const std::string& path, std::string_view query) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri + "?" + std::string(query);
}

bool valid_object_name(std::string_view s) {
  return s.size() == 32 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool valid_release_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

std::string hash_hex(const void* data, std::size_t size) {
  const XXH128_hash_t h = XXH3_128bits(data, size);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

// ---- Opening

int user_version(sqlite3* db, const std::string& path) { return sqlite::user_version(raise, db, path); }

void check_not_newer(const std::string& path, int version) {
  sqlite::check_not_newer(raise, path, version, kLayoutVersion, "golden store layout");
}

enum class Contents { Empty, Ours };

// What the index holds, found by reading only: never write into a database that is not ours.
Contents inspect(sqlite3* db, const std::string& path) {
  if (sqlite::is_empty(raise, db, path, "not a golden store (index is not a SQLite database)")) {
    return Contents::Empty;
  }
  const std::string application = sqlite::application_of(db);
  if (application != kApplication) {
    fail(path, "not a golden store (meta has no application '" + std::string(kApplication) + "')");
  }
  return Contents::Ours;
}

void migrate(sqlite3* db, const std::string& path) {
  sqlite::migrate(raise, db, path, kMigrations, kLayoutVersion, "layout_version", "golden store layout");
}

// ---- Objects

std::optional<at::ScalarType> scalar_type_named(const std::string& name) {
  for (int i = 0; i < static_cast<int>(at::ScalarType::NumOptions); ++i) {
    const auto t = static_cast<at::ScalarType>(i);
    if (c10::isQIntType(t)) {
      continue;
    }
    if (name == c10::toString(t)) {
      return t;
    }
  }
  return std::nullopt;
}

std::string read_file(const std::string& path, std::string* problem) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) {
    std::error_code ec;
    *problem = fs::exists(path, ec) ? "cannot read object file (" + std::string(std::strerror(errno)) + ")"
                                    : "object file is missing";
    return {};
  }
  // One read of the whole file (objects are megabytes: no per-character stream copies).
  std::string data;
  char chunk[1 << 16];
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!ec) data.reserve(static_cast<std::size_t>(size));
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0) data.append(chunk, n);
  if (std::ferror(f.get())) *problem = "cannot read object file";
  return data;
}

// Decompresses, checks and parses an object. Returns the problem, or nullopt with `outputs`
// filled when `outputs` is given.
std::optional<std::string> read_object(const std::string& path, const GoldenEntry& e,
                                       std::vector<NamedTensor>* outputs) {
  std::string problem;
  const std::string compressed = read_file(path, &problem);
  if (!problem.empty()) {
    return problem;
  }
  if (compressed.empty()) {
    return "object file is empty";
  }
  const unsigned long long size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) {
    return "not a zstd frame (" + std::to_string(compressed.size()) + " bytes)";
  }
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return "zstd frame has no content size";
  }
  // Frame header descriptor: bit 4 is unused and bit 3 reserved. A decoder ignores them, but a
  // file that differs from what was written is damaged even where its payload survived.
  if (compressed.size() > 4 && (static_cast<unsigned char>(compressed[4]) & 0x18) != 0) {
    return "zstd frame header has unused bits set";
  }
  const std::size_t frame = ZSTD_findFrameCompressedSize(compressed.data(), compressed.size());
  if (ZSTD_isError(frame)) {
    return std::string("truncated or damaged zstd frame (") + ZSTD_getErrorName(frame) + ", " +
           std::to_string(compressed.size()) + " bytes)";
  }
  if (frame != compressed.size()) {
    return std::to_string(compressed.size() - frame) + " bytes after the zstd frame";
  }
  // A zstd block of at most 128 KiB costs at least 3 bytes: a larger claim is a damaged header.
  if (size > static_cast<unsigned long long>(compressed.size()) * 65536ULL) {
    return "zstd frame claims " + std::to_string(size) + " bytes, more than " + std::to_string(compressed.size()) +
           " compressed bytes can hold";
  }
  std::string payload(static_cast<std::size_t>(size), '\0');
  // One decompression context per thread: ZSTD_decompress would allocate one per call.
  thread_local std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  const std::size_t got =
      ZSTD_decompressDCtx(dctx.get(), payload.data(), payload.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(got)) {
    return std::string("cannot decompress: ") + ZSTD_getErrorName(got);
  }
  if (got != payload.size()) {
    return "decompressed " + std::to_string(got) + " bytes, frame says " + std::to_string(size);
  }

  const std::string hash = hash_hex(payload.data(), payload.size());
  if (hash != e.object) {
    return "checksum mismatch: content hashes to " + hash + ", expected " + e.object;
  }

  if (payload.compare(0, kMagic.size(), kMagic) != 0) {
    return "bad magic (not a GLDN1 object)";
  }
  const std::size_t eol = payload.find('\n', kMagic.size());
  if (eol == std::string::npos) {
    return "header line is not terminated";
  }
  const json header = json::parse(payload.begin() + static_cast<std::ptrdiff_t>(kMagic.size()),
                                  payload.begin() + static_cast<std::ptrdiff_t>(eol), nullptr, false);
  if (header.is_discarded() || !header.is_object()) {
    return "header is not a JSON object";
  }
  const auto str_field = [&](const char* name) -> std::optional<std::string> {
    auto it = header.find(name);
    if (it == header.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const auto reference = str_field("reference");
  const auto mv = header.find("method_version");
  const auto outs = header.find("outputs");
  if (!reference || mv == header.end() || !mv->is_number_integer() || outs == header.end() || !outs->is_array()) {
    return "header lacks method_version, reference or outputs";
  }
  if (mv->get<std::int64_t>() != e.method_version || *reference != e.reference) {
    return "object was made by method version " + std::to_string(mv->get<std::int64_t>()) + " on " + *reference +
           ", entry says method version " + std::to_string(e.method_version) + " on " + e.reference;
  }

  struct Out {
    std::string name;
    at::ScalarType dtype;
    std::vector<std::int64_t> shape;
    std::size_t bytes;
  };
  std::vector<Out> parsed;
  std::size_t total = 0;
  for (const json& o : *outs) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string() || !o.contains("dtype") ||
        !o["dtype"].is_string() || !o.contains("shape") || !o["shape"].is_array()) {
      return "output " + std::to_string(parsed.size()) + " lacks name, dtype or shape";
    }
    Out out{o["name"].get<std::string>(), at::kFloat, {}, 0};
    const auto dtype = scalar_type_named(o["dtype"].get<std::string>());
    if (!dtype) {
      return "output " + out.name + " has unknown dtype '" + o["dtype"].get<std::string>() + "'";
    }
    out.dtype = *dtype;
    std::size_t bytes = c10::elementSize(out.dtype);
    for (const json& d : o["shape"]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0) {
        return "output " + out.name + " has a bad shape";
      }
      const auto n = d.get<std::int64_t>();
      out.shape.push_back(n);
      if (__builtin_mul_overflow(bytes, static_cast<std::size_t>(n), &bytes)) {
        return "output " + out.name + " is too large";
      }
    }
    out.bytes = bytes;
    if (__builtin_add_overflow(total, bytes, &total)) {
      return "outputs are too large";
    }
    parsed.push_back(std::move(out));
  }
  const std::size_t data = payload.size() - eol - 1;
  if (total != data) {
    return "outputs' shapes need " + std::to_string(total) + " bytes, object holds " + std::to_string(data);
  }
  if (outputs) {
    outputs->clear();
    const char* p = payload.data() + eol + 1;
    for (const Out& o : parsed) {
      at::Tensor t = at::empty(o.shape, at::TensorOptions().dtype(o.dtype));
      if (o.bytes > 0) {
        std::memcpy(t.data_ptr(), p, o.bytes);
      }
      p += o.bytes;
      outputs->push_back({o.name, std::move(t)});
    }
  }
  return std::nullopt;
}

// Atomically replaces `path` with `data`: a temporary file in the same folder, then rename().
void write_atomically(const std::string& path, const std::string& data) {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ (static_cast<std::uint64_t>(::getpid()) << 32)};
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "%08llx", static_cast<unsigned long long>(rng() & 0xffffffffULL));
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + suffix;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      fail(tmp, std::string("cannot create (") + std::strerror(errno) + ")");
    }
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      fail(tmp, "cannot write");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ec;
    fs::remove(tmp, ec);
    fail(path, "cannot rename " + tmp + " into place (" + why + ")");
  }
}

// The payload of an object and the CPU tensors it was made of.
std::string make_payload(const std::string& key, int method_version, const std::string& reference,
                         const std::vector<NamedTensor>& outputs) {
  json header;
  header["method_version"] = method_version;
  header["reference"] = reference;
  header["outputs"] = json::array();
  std::vector<at::Tensor> cpu;
  for (const NamedTensor& o : outputs) {
    if (!o.value.defined()) {
      throw GoldenStoreError("golden of " + key + ": output " + o.name + " is undefined");
    }
    if (o.value.layout() != at::kStrided || o.value.is_quantized()) {
      throw GoldenStoreError("golden of " + key + ": output " + o.name + " is not a dense, unquantized tensor");
    }
    at::Tensor t = o.value.detach().to(at::kCPU).resolve_conj().resolve_neg().contiguous();
    header["outputs"].push_back(
        {{"name", o.name}, {"dtype", c10::toString(t.scalar_type())}, {"shape", t.sizes().vec()}});
    cpu.push_back(std::move(t));
  }
  std::string payload(kMagic);
  payload += header.dump(-1, ' ', false, json::error_handler_t::replace);
  payload += '\n';
  for (const at::Tensor& t : cpu) {
    const std::size_t n = t.numel() * t.element_size();
    if (n > 0) {
      payload.append(static_cast<const char*>(t.data_ptr()), n);
    }
  }
  return payload;
}

GoldenEntry read_entry(sqlite::Stmt& s) {  // kEntryColumns, in order
  GoldenEntry e;
  e.case_id = as_unsigned(s.int64());
  e.key = s.text();
  e.method_version = static_cast<int>(s.int64());
  e.reference = s.text();
  e.object = s.text();
  e.bytes = s.int64();
  e.created_at = s.text();
  e.compute_us = s.real();
  e.raw_bytes = s.int64();
  return e;
}

constexpr std::string_view kEntryColumns =
    "case_id, key, method_version, reference, object, bytes, created_at, compute_us, raw_bytes";

std::optional<GoldenEntry> find_entry(sqlite3* db, const std::string& path, const std::string& key, int method_version,
                                      const std::string& reference) {
  Stmt s(db, path,
         "SELECT " + std::string(kEntryColumns) +
             " FROM entries WHERE case_id = ? AND method_version = ? AND reference = ?");
  s.bind(as_signed(key_id(key)), method_version, reference);
  if (!s.step()) {
    return std::nullopt;
  }
  GoldenEntry e = read_entry(s);
  if (e.key != key) {  // another key with the same 64-bit id: not ours
    return std::nullopt;
  }
  return e;
}

}  // namespace

// ---- Reference identity

namespace {

std::string compute_reference_identity() {
  const std::string found = loaded_blas_path();
  // The PyPI wheels link MKL into libtorch_cpu: no BLAS library of its own is loaded then.
  std::string blas = at::hasMKL() ? "mkl" : "none";
  if (!found.empty()) {
    const fs::path p(found);
    const std::string dir = p.parent_path().filename().string();
    if (dir == "blas") {
      blas = "netlib";  // Debian's reference BLAS: /usr/lib/<triplet>/blas/libblas.so.3
    } else if (!dir.empty() && dir != "lib" && dir != "lib64" && dir.find("-linux-") == std::string::npos) {
      blas = dir;  // Debian alternatives: /usr/lib/<triplet>/openblas-pthread/libblas.so.3
    } else {
      // A library directly in a lib folder: libopenblas.so.0 -> openblas, libmkl_rt.so -> mkl_rt.
      std::string file = p.filename().string();
      file = file.substr(0, file.find(".so"));
      if (file.rfind("lib", 0) == 0) file = file.substr(3);
      blas = file.empty() ? "unknown" : file;
    }
  }
  return std::string("torch-") + TORCH_VERSION + "+" + blas;
}

}  // namespace

std::string reference_identity() {
  static const std::string identity = compute_reference_identity();  // the BLAS is loaded once
  return identity;
}

// ---- GoldenStore

GoldenStore::GoldenStore(std::string dir, sqlite3* db, Mode mode) : dir_(std::move(dir)), db_(db), mode_(mode) {}

GoldenStore::~GoldenStore() { sqlite3_close_v2(db_); }

std::unique_ptr<GoldenStore> GoldenStore::open(const std::string& dir, Mode mode) {
  const bool writable = mode == Mode::ReadWrite;
  const std::string index = index_path(dir);
  std::error_code ec;
  if (!writable) {
    if (!fs::exists(dir, ec)) {
      fail(dir, "no such golden store");
    }
    if (!fs::is_directory(dir, ec)) {
      fail(dir, "not a golden store (not a folder)");
    }
    if (!fs::exists(index, ec)) {
      fail(dir, "not a golden store (no index.sqlite)");
    }
  } else {
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
      fail(dir, "not a golden store (not a folder)");
    }
    // Never turn a folder with other contents into a store (a mistyped path, a home folder).
    if (fs::exists(dir, ec) && !fs::exists(index, ec)) {
      for (const auto& item : fs::directory_iterator(dir, ec)) {
        const std::string name = item.path().filename().string();
        if (name != "objects" && name != "manifests") {
          fail(dir, "not a golden store (no index.sqlite) and not empty");
        }
      }
    }
    for (const char* sub : {"objects", "manifests"}) {
      fs::create_directories(fs::path(dir) / sub, ec);
      if (ec) {
        fail(dir, "cannot create " + std::string(sub) + "/ (" + ec.message() + ")");
      }
    }
  }

  sqlite3* db = nullptr;
  const int flags =
      writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI : SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  const std::string uri = file_uri(index, writable ? "mode=rwc" : "mode=ro");
  const int rc = sqlite3_open_v2(uri.c_str(), &db, flags, nullptr);
  std::unique_ptr<GoldenStore> store(new GoldenStore(dir, db, mode));  // closes db on every way out
  if (rc != SQLITE_OK) {
    fail_sqlite(db, index, "cannot open golden store index");
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);

  const Contents contents = inspect(db, index);
  if (!writable && contents == Contents::Empty) {
    fail(index, "not a golden store (empty index)");
  }
  const int version = user_version(db, index);
  check_not_newer(index, version);
  if (writable) {
    // The rollback journal, not WAL: a store copied, synced or shared read-only needs no
    // -shm/-wal files, and readers on read-only media work.
    {
      Stmt journal(db, index, "PRAGMA journal_mode = DELETE");
      if (!journal.step() || journal.text() != "delete") {
        fail(index, "cannot switch the index to journal_mode=DELETE");
      }
    }
    migrate(db, index);
  } else if (version < kLayoutVersion) {
    fail(index, "golden store layout version " + std::to_string(version) + " is older than this gauntlet (" +
                    std::to_string(kLayoutVersion) + "); open it for writing to migrate");
  }
  return store;
}

std::string GoldenStore::object_path(const std::string& object) const {
  return (fs::path(dir_) / "objects" / object.substr(0, 2) / (object + ".zst")).string();
}

GoldenLookup GoldenStore::get(const std::string& key, int method_version, const std::string& reference,
                              const std::string& release) const {
  const std::string index = index_path(dir_);
  GoldenLookup r;
  if (release.empty()) {
    auto e = find_entry(db_, index, key, method_version, reference);
    if (!e) {
      return r;
    }
    r.entry = std::move(*e);
  } else {
    {  // statements end before the object is read: a live one holds the index's read lock
      Stmt m(db_, index,
             "SELECT me.object, m.method_version, m.reference, m.created_at FROM manifest_entries "
             "me JOIN manifests m ON m.release = me.release WHERE me.release = ? AND me.key = ?");
      m.bind(release, key);
      if (!m.step()) {
        return r;
      }
      r.entry.key = key;
      r.entry.case_id = key_id(key);
      r.entry.object = m.text();
      r.entry.method_version = static_cast<int>(m.int64());
      r.entry.reference = m.text();
      r.entry.created_at = m.text();
    }
    bool found = false;
    {
      Stmt s(db_, index,
             "SELECT bytes, created_at FROM entries WHERE case_id = ? AND key = ? AND object = ? "
             "LIMIT 1");
      s.bind(as_signed(r.entry.case_id), key, r.entry.object);
      if (s.step()) {
        found = true;
        r.entry.bytes = s.int64();
        r.entry.created_at = s.text();
      }
    }
    if (!found) {
      std::error_code ec;
      const auto size = fs::file_size(object_path(r.entry.object), ec);
      r.entry.bytes = ec ? 0 : static_cast<std::int64_t>(size);
    }
  }
  auto problem = valid_object_name(r.entry.object)
                     ? read_object(object_path(r.entry.object), r.entry, &r.outputs)
                     : std::optional<std::string>("bad object name '" + r.entry.object + "'");
  if (problem) {
    r.outputs.clear();
    r.state = GoldenLookup::State::Corrupt;
    r.problem = object_path(r.entry.object) + ": " + *problem;
  } else {
    r.state = GoldenLookup::State::Hit;
  }
  return r;
}

GoldenEntry GoldenStore::put(const std::string& key, int method_version, const std::string& reference,
                             const std::vector<NamedTensor>& outputs, double compute_us) {
  if (mode_ != Mode::ReadWrite) {
    fail(dir_, "golden store is open read-only (cannot put " + key + ")");
  }
  const std::string payload = make_payload(key, method_version, reference, outputs);
  GoldenEntry e;
  e.key = key;
  e.case_id = key_id(key);
  e.method_version = method_version;
  e.reference = reference;
  e.object = hash_hex(payload.data(), payload.size());
  e.created_at = utc_now();
  e.compute_us = compute_us;
  e.raw_bytes = static_cast<std::int64_t>(payload.size());

  const std::string path = object_path(e.object);
  std::error_code ec;
  // Content-addressed: an intact object of this name already holds these bytes. A damaged
  // one is replaced.
  if (fs::exists(path, ec) && !read_object(path, e, nullptr)) {
    e.bytes = static_cast<std::int64_t>(fs::file_size(path, ec));
  } else {
    std::string compressed(ZSTD_compressBound(payload.size()), '\0');
    const std::size_t n =
        ZSTD_compress(compressed.data(), compressed.size(), payload.data(), payload.size(), kZstdLevel);
    if (ZSTD_isError(n)) {
      fail(path, std::string("cannot compress: ") + ZSTD_getErrorName(n));
    }
    compressed.resize(n);
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec) {
      fail(fs::path(path).parent_path().string(), "cannot create folder (" + ec.message() + ")");
    }
    write_atomically(path, compressed);
    e.bytes = static_cast<std::int64_t>(n);
  }

  const std::string index = index_path(dir_);
  Stmt(db_, index,
       "INSERT OR REPLACE INTO entries(" + std::string(kEntryColumns) + ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(as_signed(e.case_id), e.key, e.method_version, e.reference, e.object, e.bytes, e.created_at, e.compute_us,
            e.raw_bytes)
      .exec();
  return e;
}

std::optional<GoldenEntry> GoldenStore::find(const std::string& key, int method_version,
                                             const std::string& reference) const {
  std::lock_guard<std::mutex> lock(find_mutex_);
  if (mode_ == Mode::ReadOnly) {
    auto [it, fresh] = snapshot_.try_emplace({method_version, reference});
    if (fresh) {
      Stmt all(db_, index_path(dir_),
               "SELECT " + std::string(kEntryColumns) + " FROM entries WHERE method_version = ? AND reference = ?");
      all.bind(method_version, reference);
      while (all.step()) {
        GoldenEntry e = read_entry(all);
        std::string k = e.key;
        it->second.emplace(std::move(k), std::move(e));
      }
    }
    auto hit = it->second.find(key);
    if (hit == it->second.end()) return std::nullopt;
    return hit->second;
  }
  if (!find_stmt_) {
    find_stmt_ =
        std::make_unique<sqlite::Stmt>(raise, db_, index_path(dir_),
                                       "SELECT " + std::string(kEntryColumns) +
                                           " FROM entries WHERE case_id = ? AND method_version = ? AND reference = ?");
  }
  sqlite::Stmt& s = *find_stmt_;
  s.bind(as_signed(key_id(key)), method_version, reference);
  std::optional<GoldenEntry> e;
  if (s.step()) e = read_entry(s);
  s.reset();
  if (e && e->key != key) e.reset();  // another key with the same 64-bit id: not ours
  return e;
}

bool GoldenStore::contains_valid(const std::string& key, int method_version, const std::string& reference) const {
  auto e = find_entry(db_, index_path(dir_), key, method_version, reference);
  return e && !check(*e);
}

std::vector<GoldenEntry> GoldenStore::entries() const {
  Stmt s(db_, index_path(dir_),
         "SELECT " + std::string(kEntryColumns) + " FROM entries ORDER BY key, method_version, reference");
  std::vector<GoldenEntry> out;
  while (s.step()) {
    out.push_back(read_entry(s));
  }
  return out;
}

std::optional<std::string> GoldenStore::check(const GoldenEntry& e) const {
  if (!valid_object_name(e.object)) {
    return "bad object name '" + e.object + "'";
  }
  auto problem = read_object(object_path(e.object), e, nullptr);
  if (problem) {
    return object_path(e.object) + ": " + *problem;
  }
  return std::nullopt;
}

std::vector<NamedTensor> GoldenStore::load(const GoldenEntry& e) const {
  if (!valid_object_name(e.object)) {
    fail(dir_, "golden of " + e.key + ": bad object name '" + e.object + "'");
  }
  std::vector<NamedTensor> outputs;
  if (auto problem = read_object(object_path(e.object), e, &outputs)) {
    fail(object_path(e.object), *problem);
  }
  return outputs;
}

std::size_t GoldenStore::freeze(const std::string& release, const std::vector<std::string>& keys, int method_version,
                                const std::string& reference) {
  if (mode_ != Mode::ReadWrite) {
    fail(dir_, "golden store is open read-only (cannot freeze release " + release + ")");
  }
  if (!valid_release_name(release)) {
    fail(dir_, "bad release name '" + release + "' (letters, digits, '.', '_' and '-' only)");
  }
  const std::string index = index_path(dir_);
  Transaction tx(db_, index);
  {
    Stmt s(db_, index, "SELECT 1 FROM manifests WHERE release = ?");
    s.bind(release);
    if (s.step()) {
      fail(dir_, "release " + release + " is already frozen (manifests are immutable)");
    }
  }
  std::vector<std::pair<std::string, std::string>> frozen;  // key, object
  std::set<std::string> seen;
  std::vector<std::string> missing;
  for (const std::string& key : keys) {
    if (!seen.insert(key).second) {
      continue;
    }
    auto e = find_entry(db_, index, key, method_version, reference);
    if (!e) {
      missing.push_back(key);
      continue;
    }
    std::error_code ec;
    if (!valid_object_name(e->object) || !fs::exists(object_path(e->object), ec)) {
      fail(object_path(e->object), "object of " + key + " is missing; cannot freeze release " + release);
    }
    frozen.emplace_back(key, e->object);
  }
  if (!missing.empty()) {
    fail(dir_, "cannot freeze release " + release + ": " + std::to_string(missing.size()) + " of " +
                   std::to_string(seen.size()) + " keys have no golden (method version " +
                   std::to_string(method_version) + ", reference " + reference + "), first: " + missing.front());
  }

  const std::string created_at = utc_now();
  Stmt(db_, index,
       "INSERT INTO manifests(release, created_at, method_version, reference, count) "
       "VALUES(?, ?, ?, ?, ?)")
      .bind(release, created_at, method_version, reference, static_cast<std::int64_t>(frozen.size()))
      .exec();
  Stmt insert(db_, index, "INSERT INTO manifest_entries(release, key, object) VALUES(?, ?, ?)");
  json manifest;
  manifest["release"] = release;
  manifest["created_at"] = created_at;
  manifest["method_version"] = method_version;
  manifest["reference"] = reference;
  manifest["entries"] = json::array();
  for (const auto& [key, object] : frozen) {
    insert.bind(release, key, object).exec();
    manifest["entries"].push_back({{"key", key}, {"object", object}});
  }
  const std::string file = (fs::path(dir_) / "manifests" / (release + ".json")).string();
  write_atomically(file, manifest.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
  try {
    tx.commit();
  } catch (...) {
    std::error_code ec;
    fs::remove(file, ec);
    throw;
  }
  return frozen.size();
}

std::vector<std::string> GoldenStore::releases() const {
  Stmt s(db_, index_path(dir_), "SELECT release FROM manifests ORDER BY created_at, release");
  std::vector<std::string> out;
  while (s.step()) {
    out.push_back(s.text());
  }
  return out;
}

std::pair<std::size_t, std::size_t> GoldenStore::gc(const std::vector<std::string>& live_keys, int method_version) {
  if (mode_ != Mode::ReadWrite) {
    fail(dir_, "golden store is open read-only (cannot gc)");
  }
  const std::string index = index_path(dir_);
  const std::unordered_set<std::string> live(live_keys.begin(), live_keys.end());
  std::size_t dropped = 0;
  {
    Transaction tx(db_, index);
    std::vector<GoldenEntry> dead;
    {
      Stmt s(db_, index,
             "SELECT " + std::string(kEntryColumns) +
                 " FROM entries e WHERE NOT EXISTS (SELECT 1 FROM manifest_entries me "
                 "WHERE me.key = e.key AND me.object = e.object)");
      while (s.step()) {
        GoldenEntry e = read_entry(s);
        if (e.method_version != method_version || live.count(e.key) == 0) {
          dead.push_back(std::move(e));
        }
      }
    }
    Stmt del(db_, index, "DELETE FROM entries WHERE case_id = ? AND method_version = ? AND reference = ?");
    for (const GoldenEntry& e : dead) {
      del.bind(as_signed(e.case_id), e.method_version, e.reference).exec();
    }
    tx.commit();
    dropped = dead.size();
  }

  // Objects: under the write lock, so no put() can start referencing one while it is deleted.
  std::size_t deleted = 0;
  Transaction tx(db_, index);
  std::unordered_set<std::string> referenced;
  {
    Stmt s(db_, index, "SELECT object FROM entries UNION SELECT object FROM manifest_entries");
    while (s.step()) {
      referenced.insert(s.text());
    }
  }
  const fs::path objects = fs::path(dir_) / "objects";
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator(objects, ec)) {
    if (!shard.is_directory(ec)) {
      continue;
    }
    std::vector<fs::path> doomed;
    for (const auto& item : fs::directory_iterator(shard.path(), ec)) {
      const std::string name = item.path().filename().string();
      if (name.size() == 36 && name.compare(32, 4, ".zst") == 0 &&
          valid_object_name(std::string_view(name).substr(0, 32))) {
        if (referenced.count(name.substr(0, 32)) == 0) {
          doomed.push_back(item.path());
          ++deleted;
        }
      } else if (name.find(".zst.tmp.") != std::string::npos && item.last_write_time(ec) < stale) {
        doomed.push_back(item.path());  // left by a writer that died
      }
    }
    for (const fs::path& p : doomed) {
      std::error_code rm;
      if (!fs::remove(p, rm) && rm) {
        fail(p.string(), "cannot delete (" + rm.message() + ")");
      }
    }
  }
  tx.commit();
  return {dropped, deleted};
}

}  // namespace gauntlet
