// Note [Embedded interpreter]: where PyTorch's world is Python (torch.compile, dynamo backends,
// model builders, a vendor's package), a worker runs it in CPython embedded in its own process:
// one interpreter per process, started on first use, never finalised (finalising after `import
// torch` crashes at shutdown: pybind11#1472, pytorch#23540; a process that started it leaves with
// _exit). It runs the environment's Python with the site-packages of the torch this build links
// (the process must hold one libtorch: pytorch#78028) and Gauntlet's own modules (harness/python/
// py/), whatever python3 is first on PATH. Tensors cross as the same tensors (THPVariable_Wrap and
// THPVariable_Unpack: no copy), so what Python returns is judged by the same C++ comparison as an
// eager result. Between calls the GIL is released: C++ code that runs Python on other threads (a
// compiled backward on autograd's threads) can take it. Orchestration, comparison and storage
// stay C++; this is the only door to Python.
#pragma once

#include <ATen/Tensor.h>

#include <string>
#include <vector>

namespace gauntlet::python {

// Starts the interpreter when it is not started yet and imports torch; throws gauntlet::Error
// naming what failed (with Python's exception text) when it cannot.
void start();
bool started();

// What Python's `import torch` says its version is ("2.14.1+cu130"): the torch this process holds.
std::string torch_version();

// Calls `module.function(*args, **kwargs)` (`module` from Gauntlet's modules or the environment;
// `kwargs_json` a JSON object whose values become Python values) with the GIL held, and returns the
// tensors it returned: one tensor, or a tuple or list of them. Throws gauntlet::Error with
// Python's exception type, message and innermost frame when the call raises.
std::vector<at::Tensor> call(const std::string& module, const std::string& function,
                             const std::vector<at::Tensor>& args, const std::string& kwargs_json = "{}");

// Calls `module.function()` and returns what it returned as JSON text (json.dumps of it).
std::string call_json(const std::string& module, const std::string& function, const std::string& kwargs_json = "{}");

// The folder of Gauntlet's own Python modules.
std::string modules_dir();

}  // namespace gauntlet::python
