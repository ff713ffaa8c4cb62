# Third-party dependencies, all from Debian packages (see README). Header-only libraries fall back
# to a plain header search so that a folder of unpacked .deb files (scripts/gpu.sh) also works.
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CURL REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenCL REQUIRED)
# TOML study files (kevo sweep; Debian: libtomlplusplus-dev, a shared library). Only the study-file
# parser compiles against it (CMakeLists.txt), so its compile flags touch no other file.
find_package(tomlplusplus 3 CONFIG REQUIRED)

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
    find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    target_include_directories(CLI11::CLI11 INTERFACE "${CLI11_INCLUDE_DIR}")
endif()

# CUDA headers only (types and enum values); the libraries are loaded at run time.
find_path(KEVO_CUDA_INCLUDE_DIR cuda.h
    HINTS ENV CUDA_HOME ENV CUDA_PATH
    PATHS /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include /usr/include
    PATH_SUFFIXES include)
find_path(KEVO_NVRTC_INCLUDE_DIR nvrtc.h HINTS "${KEVO_CUDA_INCLUDE_DIR}")
if(NOT KEVO_CUDA_INCLUDE_DIR OR NOT KEVO_NVRTC_INCLUDE_DIR)
    # The CUDA backend then builds without them and reports zero devices, saying why.
    message(WARNING "cuda.h / nvrtc.h not found (set CUDA_HOME): the CUDA backend will be unavailable")
    set(KEVO_CUDA_INCLUDE_DIR "")
endif()

add_library(kevo_deps INTERFACE)
add_library(kevo::deps ALIAS kevo_deps)
target_link_libraries(kevo_deps INTERFACE fmt::fmt nlohmann_json::nlohmann_json CURL::libcurl
    SQLite::SQLite3 OpenCL::OpenCL CLI11::CLI11 Threads::Threads ${CMAKE_DL_LIBS})
