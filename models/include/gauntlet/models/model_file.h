// Note [Model files]: a model written elsewhere, as a TorchScript file (torch.jit.save of a traced
// or scripted nn.Module) and a manifest beside it (<stem>.yaml, docs/models.md "Qualify your own
// model"): the inputs of forward() by name with shapes in named sizes, the size configs, the
// dtypes it runs in, the golden's dtype, the custom-op libraries it needs and, per output, how to
// compare it (Note [Output quality] in harness/core/cases/model_file_case.cpp).
//
// A model file's cases are keyed model/<name>.<hash>/<dtype>/<config>/eager/infer: <hash> is the
// first 8 hex digits of the XXH64 of the .pt archive's records but its debug info (which holds
// the exporting process's paths), so a changed model is a new case history, two models of one
// name never share one, and one model exported in two checkouts is one. Zoo models (Note [Model
// zoo]) have no '.' in their name.
//
// Where a process finds them (Note [Model file registry]): $GAUNTLET_MODEL_FILES, a ':'-separated
// list of manifests, .pt files and folders of them. `run --model FILE` and a suite's `model_files:`
// group add to it before any worker starts, so workers inherit it and the run records it with the
// environment (Note [Repro from the record]): repro finds the same files.
//
// Weightless files (Note [Weightless model files]): the corpus exported here (models/real/)
// replaces every parameter and batch-norm running statistic by an expanded 0-d tensor and lists
// them, with their shape and the mean and standard deviation of their initialisation, in the
// file's extra file gauntlet/weightless.json; loading refills them from the case's seed. A user's
// file with real weights has no such list and keeps its weights.
#pragma once

#include <torch/script.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/models/models.h"

namespace gauntlet {

// How an output is judged (Note [Output quality]).
enum class OutputCompare { Scaled, TopK, Cosine, Skip };
const char* output_compare_name(OutputCompare c);

struct ModelFileInput {
  std::string name;
  std::vector<std::string> shape;  // size expressions (eval_size_expr)
  std::string dtype = "float";     // float (the case's dtype), int64, bool, or a fixed f32/f64/bf16/f16
  double lo = -1.0, hi = 1.0;      // float inputs: uniform range
  std::string bound;               // int64: values in [0, bound) (an expression); default 2 for bool
  std::string fill;                // int64: every value is this expression (lengths = seq)
  std::string where;               // "resnet18.yaml:12"
};

struct ModelFileOutput {
  std::string name;
  OutputCompare compare = OutputCompare::Scaled;
  std::optional<double> tolerance;  // scaled: fraction of max|golden|; cosine: 1 - min similarity
  std::int64_t dim = -1;            // topk: the class dimension (1 for a segmentation's [N, C, H, W])
  std::string where;
};

struct ModelFileSpec {
  std::string name;      // "resnet18"
  std::string hash;      // 8 hex digits of the XXH64 of the .pt's records, debug info left out
  std::string manifest;  // absolute path of the manifest ("" when the .pt came alone)
  std::string file;      // absolute path of the .pt
  std::string description, source, export_method, task, degenerate;
  std::vector<std::string> tags;
  std::vector<ModelFileInput> inputs;
  std::vector<std::pair<std::string, std::map<std::string, std::int64_t>>> configs;  // the first is the default
  std::vector<std::string> dtypes{"f32"};
  std::string golden = "f64";            // the golden's dtype on the CPU: f64, or f32
  std::vector<std::string> libraries;    // "torchvision", "torchaudio" or a path to a .so
  std::vector<ModelFileOutput> outputs;  // per flattened output, in order; missing ones are scaled
  std::int64_t file_bytes = 0;

  std::string key_name() const { return name + "." + hash; }  // the key's target
  const std::map<std::string, std::int64_t>* find_config(const std::string& name) const;
  std::vector<std::string> config_names() const;
  bool supports(const std::string& dtype) const;
  ModelFileOutput output(std::size_t k) const;  // the manifest's entry, or scaled "out<k>"
  // The batch size of a config: its size named batch (or b), else the first input's first dim.
  std::int64_t batch(const std::string& config) const;
};

// Reads a model: `path` is a manifest (.yaml, naming its .pt with `file:` or beside it with the
// same stem) or a .pt (its manifest is <stem>.yaml beside it). Every problem is a ModelError
// naming the file, line and field.
ModelFileSpec load_model_file_spec(const std::string& path);

// Every model under `path`: a manifest or .pt (one), or a folder (every *.yaml in it that is a
// manifest, sorted by name). A folder without manifests is an error.
std::vector<ModelFileSpec> load_model_files(const std::string& path);

// Note [Model file registry]: the model files of $GAUNTLET_MODEL_FILES, read once per process.
// add_model_files(path) reads `path` (throws ModelError), appends it to $GAUNTLET_MODEL_FILES
// (absolute) and returns its models.
std::vector<const ModelFileSpec*> add_model_files(const std::string& path);
const ModelFileSpec* find_model_file(const std::string& key_name);  // "resnet18.1a2b3c4d"
std::vector<const ModelFileSpec*> registered_model_files();
// Is `target` a model file's (a '.' in the name) rather than a zoo model's?
inline bool is_model_file_target(const std::string& target) { return target.find('.') != std::string::npos; }

// Loads the custom-op libraries the model names (dlopen, once per process); throws ModelError
// naming a library that cannot be found or loaded.
void load_model_libraries(const ModelFileSpec& spec);
// Where `lib` of the model's libraries is: a path (relative to the manifest's folder), or the
// op library of torchvision / torchaudio beside the torch this process runs (Note [Extension
// libraries] in model_file.cpp); "" when not found.
std::string model_library_path(const ModelFileSpec& spec, const std::string& lib);

// The inputs of forward() under `config`: floating inputs drawn in double from a splitmix stream
// per input name (Note [Model inputs]) and rounded once to `dtype`, integers in their bound.
// `batch` > 0 replaces the config's size named batch (or b): online inference runs batch 1.
std::vector<at::Tensor> make_model_file_inputs(const ModelFileSpec& spec, const std::string& config,
                                               at::ScalarType dtype, std::uint64_t seed, std::int64_t batch = 0);

// Loads the TorchScript module (on the CPU), refills its weightless tensors from `seed` (Note
// [Weightless model files]) rounded to `dtype`, and converts every floating tensor to `dtype`
// then to `target_dtype` (the golden: dtype then f64, so it sees what the device got), then moves
// every tensor to `device` slot by slot (Note [Moving modules]). Integer tensors keep their dtype.
// In eval mode. `weightless` (when given) gets the number of tensors refilled.
torch::jit::Module load_model_module(const ModelFileSpec& spec, at::ScalarType dtype, at::ScalarType target_dtype,
                                     const c10::Device& device, std::uint64_t seed, std::size_t* weightless = nullptr);

// Note [Moving modules]: jit::Module::to(device) fails for a PrivateUse1 device on libtorch 1.13
// (set_data refuses a tensor of another backend) and Module::to(kDouble) converts integer buffers
// too. This walks every attribute slot of the module tree instead (parameters, buffers, tensor
// lists such as an RNN's _flat_weights) and replaces each tensor by `convert(tensor)`, once per
// tensor: tensors shared by two slots stay shared.
void convert_module_tensors(torch::jit::Module& module, const std::function<at::Tensor(const at::Tensor&)>& convert);

// A forward() result (a tensor, or tuples, lists and dicts of them, nested) as its tensors in
// order (a dict's values in its order); other values (None, numbers, strings) are left out.
std::vector<at::Tensor> flatten_model_outputs(const c10::IValue& result);

// Note [Fixed devices and dtypes]: what forward() creates on a fixed device or in a fixed dtype,
// as a trace bakes them (torch.zeros(..., device="cpu") for an RNN's hidden state; a window made
// in float32): one line per distinct finding, "aten::zeros: device cpu". Empty when none.
std::vector<std::string> fixed_devices_and_dtypes(const torch::jit::Module& module);

// Note [Executed ops]: the ops a model runs, not the ops its graph holds (a scripted detector's
// graph holds every loss and interpolation mode; fasterrcnn has 102 ops in its graph and executes
// 61). While alive, records every dispatcher op this thread calls at the top level (not the ops an
// op calls in turn), by its name with overload ("aten::add.Tensor", "torchvision::nms"), and per
// op the signatures it was called with ("self=f32[1,64,56,56], other=f32[64]": signature_of in
// model_file.cpp). A model case stores them (Outcome::executed_ops) from its first device call.
class ExecutedOps {
 public:
  ExecutedOps();
  ~ExecutedOps();
  ExecutedOps(const ExecutedOps&) = delete;
  ExecutedOps& operator=(const ExecutedOps&) = delete;
  // op -> signature -> calls
  const std::map<std::string, std::map<std::string, std::int64_t>>& ops() const { return ops_; }
  // Every (op, signature) as an Outcome::executed_ops record (executed_op_text in outcome.h).
  std::vector<std::string> records() const;

 private:
  std::uint64_t handle_ = 0;
  std::map<std::string, std::map<std::string, std::int64_t>> ops_;
};

// A value as an executed-op record writes it ("[2,2]", "True", "f32[4]"), and the defaults of an
// op's schema ("aten::embedding" -> {"padding_idx": "-1", ...}) written the same way; empty when
// the dispatcher does not know the op.
std::string executed_value_text(const c10::IValue& v);
std::map<std::string, std::string> schema_defaults(const std::string& op_with_overload);

}  // namespace gauntlet
