# The libtorch parasol builds against: the one of the PyTorch installed in the Python environment
# the build runs for (Python_EXECUTABLE: the project's .venv under `make`, the active environment
# under `pip install .`), so that `parasol train`, the tests and the extension load the libtorch
# the user's Python loads. Defines the target `torch`, TORCH_PYTHON_LIBRARY, PARASOL_TORCH_LIB_DIR
# (for rpaths), PARASOL_TORCH_VERSION and PARASOL_TORCH_CUDA (the CUDA version torch was built
# for, empty for a CPU build).
#
# Torch's own CMake package (torch.utils.cmake_prefix_path) is used where it can be: for a CUDA
# build of torch (PyPI's default) it requires a CUDA toolkit. Without one, the same libraries are
# named here directly: parasol's engine reaches GPUs only through libtorch's device-generic
# streams and events, so it needs no CUDA headers, and CUDA tensors still work at run time
# through the wheel's own CUDA libraries.

# Any environment's Python, named by the user or found (an active virtual environment first).
set(Python_FIND_VIRTUALENV FIRST)
find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)

# pip's isolated build environments hide the target environment's packages behind PYTHONPATH and
# PYTHONNOUSERSITE; the interpreter is still the target's, so it is asked without them.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=PYTHONNOUSERSITE --unset=PYTHONHOME
          ${Python_EXECUTABLE} -c
          "import torch, torch.utils; print(torch.utils.cmake_prefix_path); print(torch.__version__); print(torch.version.cuda or ''); print(int(torch.compiled_with_cxx11_abi()))"
  RESULT_VARIABLE torch_query_result
  OUTPUT_VARIABLE torch_query
  ERROR_VARIABLE torch_query_error
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT torch_query_result EQUAL 0)
  message(FATAL_ERROR
    "parasol needs PyTorch 2 in the Python it builds for (${Python_EXECUTABLE}): 'import torch' "
    "failed:\n${torch_query_error}\nRun scripts/install-deps.sh (the project's .venv), or install "
    "torch into that environment, or name another Python with -DPython_EXECUTABLE=...")
endif()
string(REPLACE "\n" ";" torch_query "${torch_query}")
list(GET torch_query 0 torch_prefix)
# By its real path: an environment whose torch is a link to another's (pip_install_test's) then
# builds with the same include paths as that one, and ccache serves the objects they share.
file(REAL_PATH "${torch_prefix}" torch_prefix)
list(GET torch_query 1 PARASOL_TORCH_VERSION)
list(LENGTH torch_query n)
set(PARASOL_TORCH_CUDA "")
if(n EQUAL 4)
  list(GET torch_query 2 PARASOL_TORCH_CUDA)
  list(GET torch_query 3 torch_cxx11_abi)
else()
  list(GET torch_query 2 torch_cxx11_abi)
endif()
if(PARASOL_TORCH_VERSION VERSION_LESS 2.11)
  message(FATAL_ERROR "parasol needs PyTorch 2.11 or newer; ${Python_EXECUTABLE} has ${PARASOL_TORCH_VERSION}")
endif()
get_filename_component(torch_root "${torch_prefix}/../.." ABSOLUTE)
set(PARASOL_TORCH_LIB_DIR "${torch_root}/lib")

set(torch_config_usable TRUE)
if(PARASOL_TORCH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    set(torch_config_usable FALSE)
  endif()
endif()

if(torch_config_usable)
  # Otherwise torch's config compiles and runs a probe for the local GPUs, which a build machine
  # may not have; parasol compiles no CUDA kernels, so the list only has to be valid.
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
  endif()
  # There only: scikit-build-core also puts the environment's site-packages on the search path,
  # where torch may be found again through a link (pip_install_test's), by another path.
  find_package(Torch REQUIRED PATHS "${torch_prefix}" NO_DEFAULT_PATH)
  message(STATUS "parasol: torch ${PARASOL_TORCH_VERSION} (CUDA '${PARASOL_TORCH_CUDA}') from ${torch_root}")
else()
  message(STATUS "parasol: torch ${PARASOL_TORCH_VERSION} from ${torch_root}; no CUDA toolkit found, "
                 "so not through torch's CMake package (CUDA tensors still work through the wheel's libraries)")
  add_library(torch INTERFACE IMPORTED)
  foreach(lib torch torch_cpu c10)
    find_library(torch_${lib}_library ${lib} PATHS "${PARASOL_TORCH_LIB_DIR}" NO_DEFAULT_PATH REQUIRED)
    target_link_libraries(torch INTERFACE ${torch_${lib}_library})
  endforeach()
  target_include_directories(torch SYSTEM INTERFACE "${torch_root}/include"
                                                    "${torch_root}/include/torch/csrc/api/include")
  target_compile_definitions(torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${torch_cxx11_abi})
endif()
# torch/include carries fmt's headers (a newer fmt than Debian's), and a file that sees torch's
# include path sees them first: such files use that fmt header-only, since only Debian's libfmt
# is linked (fmt's versioned inline namespaces keep the two apart).
set_property(TARGET torch APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
# A CUDA wheel's libtorch_cuda.so finds its CUDA libraries (the nvidia-* wheels beside torch)
# through its own rpath at run time; the linker of an executable checks them too, and must look
# there rather than at a CUDA toolkit's (older) copies.
file(GLOB torch_cuda_lib_dirs LIST_DIRECTORIES true "${torch_root}/../nvidia/*/lib" "${torch_root}/../nvidia/*/*/lib")
if(torch_cuda_lib_dirs)
  string(REPLACE ";" ":" torch_cuda_lib_dirs "${torch_cuda_lib_dirs}")
  set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${torch_cuda_lib_dirs}")
endif()
find_library(TORCH_PYTHON_LIBRARY torch_python PATHS "${PARASOL_TORCH_LIB_DIR}" NO_DEFAULT_PATH REQUIRED)
