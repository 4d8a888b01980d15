# Note [Which torch]: Gauntlet builds against one PyTorch 2.x install, found here, and defines the
# target gauntlet::torch (TORCH_LIBRARIES) for every target that includes torch.
#
# Where from, first match wins:
#   -DGAUNTLET_TORCH=<dir>     a torch package directory (…/site-packages/torch), e.g. your own;
#   -DGAUNTLET_PYTHON=<python> the Python whose torch to use (its package is located, not imported);
#   $GAUNTLET_VENV/bin/python  the environment ci/setup.sh makes (default /opt/gauntlet/torch-2.14.1).
#
# Why not find_package(Torch): the PyPI wheel for x86-64 is a CUDA build whose CMake config stops
# without a CUDA toolkit ("Your installed Caffe2 version uses CUDA but I cannot find the CUDA
# libraries"). A CPU run needs libtorch_cpu and libc10 only; a `cuda` backend loads the CUDA
# libraries at run time. So the headers and those two libraries are taken by hand, with an rpath to
# torch/lib (where libtorch_cpu finds the CUDA runtime libraries it is linked against, through its
# own rpath into the environment's nvidia packages).
#
# torch ships its own fmt (12.x) headers in torch/include/fmt, which would shadow Debian's libfmt-dev
# (9.x) that every target links: a directory holding only Debian's fmt comes first on gauntlet::torch's
# include path, so the whole build uses one fmt (torch's c10d headers compile against it too).

set(GAUNTLET_TORCH "" CACHE PATH "torch package directory to build against (…/site-packages/torch)")
set(GAUNTLET_PYTHON "" CACHE FILEPATH "Python whose torch to build against (default: \$GAUNTLET_VENV/bin/python)")

set(_gauntlet_default_venv "/opt/gauntlet/torch-2.14.1")
if(NOT GAUNTLET_TORCH)
  set(_python "${GAUNTLET_PYTHON}")
  if(NOT _python)
    if(DEFINED ENV{GAUNTLET_VENV} AND NOT "$ENV{GAUNTLET_VENV}" STREQUAL "")
      set(_python "$ENV{GAUNTLET_VENV}/bin/python")
    else()
      set(_python "${_gauntlet_default_venv}/bin/python")
    endif()
  endif()
  if(NOT EXISTS "${_python}")
    message(FATAL_ERROR "no Python at ${_python} to find torch with: run ci/setup.sh (it makes that environment), "
                        "or name your own torch 2.x with -DGAUNTLET_TORCH=<site-packages/torch> or -DGAUNTLET_PYTHON=<python>")
  endif()
  execute_process(
    COMMAND "${_python}" -c "import importlib.util, os; s = importlib.util.find_spec('torch'); print(os.path.dirname(s.origin) if s else '')"
    OUTPUT_VARIABLE _torch_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _torch_dir)
    message(FATAL_ERROR "${_python} has no torch package: run ci/setup.sh, or name your torch with -DGAUNTLET_TORCH=<dir>")
  endif()
  set(GAUNTLET_TORCH "${_torch_dir}" CACHE PATH "torch package directory to build against (…/site-packages/torch)" FORCE)
  set(GAUNTLET_PYTHON "${_python}" CACHE FILEPATH "Python whose torch to build against" FORCE)
endif()

set(_api_include "${GAUNTLET_TORCH}/include/torch/csrc/api/include")
foreach(_need "${_api_include}/torch/version.h" "${GAUNTLET_TORCH}/lib/libtorch_cpu.so" "${GAUNTLET_TORCH}/lib/libc10.so")
  if(NOT EXISTS "${_need}")
    message(FATAL_ERROR "GAUNTLET_TORCH=${GAUNTLET_TORCH} is not a torch 2.x install with headers and libraries: ${_need} is missing")
  endif()
endforeach()

# The version, from torch/version.py (no import: configuring stays quick).
file(STRINGS "${GAUNTLET_TORCH}/version.py" _version_line REGEX "^__version__")
string(REGEX MATCH "'([^']+)'" _m "${_version_line}")
set(GAUNTLET_TORCH_VERSION "${CMAKE_MATCH_1}")
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _m "${GAUNTLET_TORCH_VERSION}")
set(GAUNTLET_TORCH_MAJOR "${CMAKE_MATCH_1}")
set(GAUNTLET_TORCH_MINOR "${CMAKE_MATCH_2}")
if(NOT GAUNTLET_TORCH_MAJOR EQUAL 2)
  message(FATAL_ERROR "GAUNTLET_TORCH=${GAUNTLET_TORCH} is torch '${GAUNTLET_TORCH_VERSION}': Gauntlet builds against torch 2.x")
endif()

# Every 2.x wheel of the last releases is built with the C++11 string ABI, as are Debian's libraries
# that Gauntlet links (yaml-cpp, fmt, Boost): a torch built with the old ABI cannot be mixed with them.
find_program(GAUNTLET_NM nm)
if(GAUNTLET_NM)
  execute_process(COMMAND "${GAUNTLET_NM}" -D --defined-only "${GAUNTLET_TORCH}/lib/libc10.so"
                  OUTPUT_VARIABLE _c10_symbols ERROR_QUIET)
  string(FIND "${_c10_symbols}" "__cxx11" _cxx11)
  if(_cxx11 EQUAL -1)
    message(FATAL_ERROR "${GAUNTLET_TORCH} was built with the pre-C++11 string ABI (_GLIBCXX_USE_CXX11_ABI=0): "
                        "Gauntlet links Debian's libraries built with the C++11 ABI; use a torch wheel built with it (manylinux_2_28)")
  endif()
endif()

# The site-packages directory beside torch: torchvision's and torchaudio's op libraries are looked for there.
get_filename_component(GAUNTLET_TORCH_SITE "${GAUNTLET_TORCH}" DIRECTORY)
# The environment's Python, for the tests that run a bundle's repro.py or export models.
if(NOT GAUNTLET_PYTHON)
  get_filename_component(_venv "${GAUNTLET_TORCH_SITE}/../../.." ABSOLUTE)
  if(EXISTS "${_venv}/bin/python")
    set(GAUNTLET_PYTHON "${_venv}/bin/python")
  endif()
endif()

# One fmt for the whole build (see the note above).
get_target_property(_fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
find_path(GAUNTLET_FMT_INCLUDE fmt/format.h HINTS ${_fmt_includes} /usr/include NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH)
set(_fmt_first "${CMAKE_BINARY_DIR}/fmt-first")
file(MAKE_DIRECTORY "${_fmt_first}")
file(CREATE_LINK "${GAUNTLET_FMT_INCLUDE}/fmt" "${_fmt_first}/fmt" SYMBOLIC)

add_library(gauntlet_torch_headers INTERFACE)
add_library(gauntlet::torch ALIAS gauntlet_torch_headers)
target_include_directories(gauntlet_torch_headers SYSTEM INTERFACE
  "${_fmt_first}" "${GAUNTLET_TORCH}/include" "${_api_include}")
target_link_libraries(gauntlet_torch_headers INTERFACE
  "${GAUNTLET_TORCH}/lib/libtorch_cpu.so" "${GAUNTLET_TORCH}/lib/libc10.so" Threads::Threads)
# Executables and plugins find libtorch where it was built against, wherever they are run from.
target_link_options(gauntlet_torch_headers INTERFACE "LINKER:-rpath,${GAUNTLET_TORCH}/lib")
target_compile_definitions(gauntlet_torch_headers INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
set(TORCH_LIBRARIES gauntlet::torch)
message(STATUS "torch ${GAUNTLET_TORCH_VERSION} at ${GAUNTLET_TORCH}")
