// Note [Plugin ABI]: what a backend library may export so the harness can measure it.
//
// A backend library registers its PrivateUse1 kernels when loaded (static initialisers); that
// alone makes it runnable. Everything below is optional: the harness looks each symbol up with
// dlsym and does without the ones a library lacks (a vendor's library exports none of them and
// still runs; it just reports no memory, fallbacks or device time). The functions are plain C
// so that a library built with another compiler or another libtorch build can provide them, and
// the harness never links against a backend library (a test checks with ldd).
//
// Threading: the harness calls these between cases, never while a kernel runs.
#pragma once

#include <stdint.h>

#define GAUNTLET_PLUGIN_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

// Called once per item by the enumerating functions below.
typedef void (*gauntlet_op_count_fn)(void* ctx, const char* op, int64_t count);

// The ABI version the library was built against (GAUNTLET_PLUGIN_ABI_VERSION).
typedef int (*gauntlet_backend_abi_version_t)(void);
// Why loading failed (a bad configuration, named with its position), or null when it did not.
// A library that failed registers nothing; the harness reports this line and stops.
typedef const char* (*gauntlet_backend_load_error_t)(void);
// A short name used to pick tolerance and expectation profiles ("sim"), stable across releases.
typedef const char* (*gauntlet_backend_name_t)(void);
// The backend's release, recorded with every run ("sim-0.3.1").
typedef const char* (*gauntlet_backend_version_t)(void);
// The backend's configuration as a JSON object, recorded with every run.
typedef const char* (*gauntlet_backend_config_json_t)(void);
// Waits for every queued kernel to finish.
typedef void (*gauntlet_backend_synchronize_t)(void);
// Device memory in bytes: in use now, the peak since the last reset, and the capacity (-1: unknown).
typedef void (*gauntlet_backend_memory_t)(int64_t* current, int64_t* peak, int64_t* capacity);
typedef void (*gauntlet_backend_reset_peak_memory_t)(void);
// Reports each op that fell back to the CPU since the last call, with its count, then forgets them.
typedef void (*gauntlet_backend_take_fallbacks_t)(gauntlet_op_count_fn fn, void* ctx);
// Device time: simulated or measured by the device, in microseconds since the last reset.
typedef void (*gauntlet_backend_reset_device_time_t)(void);
typedef double (*gauntlet_backend_device_time_us_t)(void);
// Reports each op the library implements natively (count 0), e.g. "aten::add.Tensor".
typedef void (*gauntlet_backend_kernels_t)(gauntlet_op_count_fn fn, void* ctx);
// The dynamo backend the library's device compiles with (docs/compile-path.md), as a user names
// it in torch.compile(backend=...): "NAME" (registered by a package torch autoloads or by a
// torch_dynamo_backends entry point) or "NAME@MODULE", MODULE a Python module or a .py file, a
// relative path taken from the library's folder ("gauntlet_sim@gauntlet_sim.py"). --dynamo-backend
// ($GAUNTLET_DYNAMO_BACKEND) replaces it; a library with neither has no compile path.
typedef const char* (*gauntlet_backend_dynamo_backend_t)(void);

#ifdef __cplusplus
}
#endif

// Note [Plugin process groups]: collectives (docs/collectives.md) run on a backend's own c10d
// process group when its library exports
//   extern "C" void* gauntlet_backend_new_process_group(void* store, int rank, int world, int timeout_ms);
// `store` is a c10d::Store* the harness keeps alive for the group's lifetime; the function returns
// the object that runs the collectives, a c10d::Backend* (torch_compat.h:
// c10d::ProcessGroup in libtorch 1.13, c10d::Backend in 2.x), whose one reference passes to the
// caller (intrusive_ptr::release()), or
// null. `timeout_ms` bounds every wait on another rank. Unlike the C functions above, this one
// passes C++ objects: the library must be built against the same libtorch as the harness. A
// library without it has no collectives of its own (its cases are UNSUPPORTED); `cpu` uses Gloo.
typedef void* (*gauntlet_backend_new_process_group_t)(void* store, int rank, int world, int timeout_ms);
