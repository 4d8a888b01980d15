#include "gauntlet/python/interpreter.h"

// Python.h first, as CPython asks; torch's wrapper includes it.
#include <fmt/format.h>
#include <torch/csrc/autograd/python_variable.h>

#include <mutex>
#include <string>
#include <vector>

#include "gauntlet/base/error.h"

namespace gauntlet::python {

namespace {

std::once_flag g_once;
bool g_started = false;
std::string g_start_error;

// A new reference, or null with a Python exception set.
struct Ref {
  PyObject* p = nullptr;
  Ref() = default;
  explicit Ref(PyObject* o) : p(o) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& o) noexcept : p(o.p) { o.p = nullptr; }
  ~Ref() { Py_XDECREF(p); }
  explicit operator bool() const { return p != nullptr; }
};

// The pending Python exception as one line of text: "TypeError: message (at file.py:12 in f)".
std::string take_error() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  Ref t(type), v(value), trace(tb);
  std::string text = "unknown Python error";
  if (t.p) {
    Ref name(PyObject_GetAttrString(t.p, "__name__"));
    Ref message(v.p ? PyObject_Str(v.p) : nullptr);
    const char* n = name.p ? PyUnicode_AsUTF8(name.p) : nullptr;
    const char* m = message.p ? PyUnicode_AsUTF8(message.p) : nullptr;
    text = fmt::format("{}: {}", n ? n : "Exception", m ? m : "");
  }
  if (trace.p) {  // the innermost frame: where it was raised
    PyTracebackObject* last = reinterpret_cast<PyTracebackObject*>(trace.p);
    while (last->tb_next) last = last->tb_next;
    PyCodeObject* code = PyFrame_GetCode(last->tb_frame);
    Ref file(code ? Py_NewRef(code->co_filename) : nullptr), func(code ? Py_NewRef(code->co_name) : nullptr);
    Py_XDECREF(code);
    const char* f = file.p ? PyUnicode_AsUTF8(file.p) : nullptr;
    const char* fn = func.p ? PyUnicode_AsUTF8(func.p) : nullptr;
    text += fmt::format(" (at {}:{} in {})", f ? f : "?", last->tb_lineno, fn ? fn : "?");
  }
  PyErr_Clear();
  return text;
}

// Holds the GIL for its lifetime (any thread).
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

void start_once() {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // SIGINT and SIGTERM stay the worker's (Note [Stop signals])
  config.parse_argv = 0;
  config.buffered_stdio = 0;
  PyStatus status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) {
    g_start_error = fmt::format("cannot start the embedded Python: {}", status.err_msg ? status.err_msg : "?");
    return;
  }
  // The torch this build links, with its environment's packages (.pth files included), and ours.
  // sys.executable is the environment's python, not this program: what Python starts as a child
  // (inductor's compile workers, multiprocessing) must be a Python.
  const std::string setup = fmt::format(
      "import site, sys\n"
      "site.addsitedir({:?})\n"
      "sys.path.insert(0, {:?})\n"
      "if {:?}: sys.executable = {:?}\n"
      "import torch\n",
      GAUNTLET_TORCH_SITE, GAUNTLET_PYTHON_MODULES, GAUNTLET_PYTHON_EXE, GAUNTLET_PYTHON_EXE);
  Ref main(PyImport_AddModule("__main__") ? Py_NewRef(PyImport_AddModule("__main__")) : nullptr);
  Ref globals(main.p ? Py_NewRef(PyModule_GetDict(main.p)) : nullptr);
  Ref done(globals.p ? PyRun_String(setup.c_str(), Py_file_input, globals.p, globals.p) : nullptr);
  if (!done) {
    g_start_error =
        "the embedded Python cannot import torch from " + std::string(GAUNTLET_TORCH_SITE) + ": " + take_error();
    PyEval_SaveThread();
    return;
  }
  g_started = true;
  PyEval_SaveThread();  // the GIL is taken per call from now on
}

Ref import(const std::string& module) {
  Ref m(PyImport_ImportModule(module.c_str()));
  if (!m) throw Error(fmt::format("python: cannot import {}: {}", module, take_error()));
  return m;
}

Ref kwargs_from_json(const std::string& kwargs_json) {
  Ref json = import("json");
  Ref loads(PyObject_GetAttrString(json.p, "loads"));
  Ref text(PyUnicode_FromStringAndSize(kwargs_json.data(), static_cast<Py_ssize_t>(kwargs_json.size())));
  Ref kwargs(loads.p && text.p ? PyObject_CallOneArg(loads.p, text.p) : nullptr);
  if (!kwargs || !PyDict_Check(kwargs.p)) {
    if (PyErr_Occurred()) PyErr_Clear();
    throw Error(fmt::format("python: keyword arguments are not a JSON object: {}", kwargs_json));
  }
  return kwargs;
}

Ref call_raw(const std::string& module, const std::string& function, Ref args, const std::string& kwargs_json) {
  Ref m = import(module);
  Ref fn(PyObject_GetAttrString(m.p, function.c_str()));
  if (!fn) throw Error(fmt::format("python: {} has no {}: {}", module, function, take_error()));
  Ref kwargs = kwargs_from_json(kwargs_json);
  Ref result(PyObject_Call(fn.p, args.p, kwargs.p));
  if (!result) throw Error(fmt::format("python: {}.{} raised {}", module, function, take_error()));
  return result;
}

}  // namespace

void start() {
  std::call_once(g_once, start_once);
  if (!g_started) throw Error(g_start_error);
}

bool started() { return g_started; }

std::string modules_dir() { return GAUNTLET_PYTHON_MODULES; }

std::string torch_version() {
  start();
  Gil gil;
  Ref torch = import("torch");
  Ref version(PyObject_GetAttrString(torch.p, "__version__"));
  Ref text(version.p ? PyObject_Str(version.p) : nullptr);
  const char* v = text.p ? PyUnicode_AsUTF8(text.p) : nullptr;
  if (!v) throw Error("python: torch has no __version__: " + take_error());
  return v;
}

std::vector<at::Tensor> call(const std::string& module, const std::string& function,
                             const std::vector<at::Tensor>& args, const std::string& kwargs_json) {
  start();
  Gil gil;
  Ref tuple(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  if (!tuple) throw Error("python: " + take_error());
  for (std::size_t i = 0; i < args.size(); ++i) {
    PyObject* t = THPVariable_Wrap(args[i]);  // the same tensor, no copy
    if (!t) throw Error("python: cannot pass a tensor: " + take_error());
    PyTuple_SET_ITEM(tuple.p, static_cast<Py_ssize_t>(i), t);  // steals t
  }
  Ref result = call_raw(module, function, std::move(tuple), kwargs_json);
  std::vector<at::Tensor> out;
  auto take = [&](PyObject* o) {
    if (!THPVariable_Check(o))
      throw Error(fmt::format("python: {}.{} returned a {}, not tensors", module, function, Py_TYPE(o)->tp_name));
    out.push_back(THPVariable_Unpack(o));
  };
  if (PyTuple_Check(result.p) || PyList_Check(result.p)) {
    Ref seq(PySequence_Fast(result.p, "a sequence"));
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.p);
    for (Py_ssize_t i = 0; i < n; ++i) take(PySequence_Fast_GET_ITEM(seq.p, i));
  } else {
    take(result.p);
  }
  return out;
}

std::string call_json(const std::string& module, const std::string& function, const std::string& kwargs_json) {
  start();
  Gil gil;
  Ref none(PyTuple_New(0));
  Ref result = call_raw(module, function, std::move(none), kwargs_json);
  Ref json = import("json");
  Ref dumps(PyObject_GetAttrString(json.p, "dumps"));
  Ref text(dumps.p ? PyObject_CallOneArg(dumps.p, result.p) : nullptr);
  const char* s = text.p ? PyUnicode_AsUTF8(text.p) : nullptr;
  if (!s) throw Error(fmt::format("python: {}.{} returned what JSON cannot hold: {}", module, function, take_error()));
  return s;
}

}  // namespace gauntlet::python
