// Counts calls into the CUDA runtime and NCCL made by this process (linked
// into a test program ahead of libcudart/libnccl; each wrapper forwards to
// the real function: dlsym(RTLD_NEXT), or, when the NCCL plugin loaded the
// libraries privately (RTLD_LOCAL), the symbol of the loaded library).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <atomic>

#include "gpu_call_counter.hpp"

namespace {
std::atomic<long> calls{0};

template <class F>
F next(const char* name) {
  static_assert(sizeof(F) == sizeof(void*));
  void* p = dlsym(RTLD_NEXT, name);
  for (const char* lib : {"libcudart.so.13", "libcudart.so.12", "libcudart.so", "libnccl.so.2", "libnccl.so"}) {
    if (p) break;
    if (void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD)) p = dlsym(h, name);
  }
  F f;
  __builtin_memcpy(&f, &p, sizeof f);
  return f;
}
}  // namespace

namespace gpu_call_counter {
long count() { return calls.load(); }
}  // namespace gpu_call_counter

#define FORWARD(ret, name, params, args)                        \
  extern "C" ret name params {                                  \
    ++calls;                                                    \
    static auto real = next<ret(*) params>(#name);              \
    return real args;                                           \
  }

FORWARD(cudaError_t, cudaGetDeviceCount, (int* n), (n))
FORWARD(cudaError_t, cudaSetDevice, (int d), (d))
FORWARD(cudaError_t, cudaGetDevice, (int* d), (d))
FORWARD(cudaError_t, cudaMalloc, (void** p, size_t n), (p, n))
FORWARD(cudaError_t, cudaStreamCreateWithFlags, (cudaStream_t* s, unsigned f), (s, f))
FORWARD(ncclResult_t, ncclGetUniqueId, (ncclUniqueId* id), (id))
FORWARD(ncclResult_t, ncclCommInitRankConfig, (ncclComm_t* c, int n, ncclUniqueId id, int r, ncclConfig_t* cfg),
        (c, n, id, r, cfg))
