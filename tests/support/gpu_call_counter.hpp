// Counts the process's calls into CUDA and NCCL entry points (test only).
#pragma once
namespace gpu_call_counter {
long count();
}
