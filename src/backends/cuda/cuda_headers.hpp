// Includes cuda.h and nvrtc.h when the build found them and says so in KEVO_HAVE_CUDA_HEADERS.
// They supply types and constants only: nothing links against libcuda or libnvrtc.
#pragma once

#if __has_include(<cuda.h>) && __has_include(<nvrtc.h>)
#define KEVO_HAVE_CUDA_HEADERS 1
#include <cuda.h>
#include <nvrtc.h>
#else
#define KEVO_HAVE_CUDA_HEADERS 0
#endif
