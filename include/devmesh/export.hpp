// Symbol visibility: the library is built with hidden visibility and exports
// exactly what carries DEVMESH_API.
#pragma once

// The C++ API needs C++20 (std::span, defaulted comparisons, ...). Every
// public C++ header includes this file first, so that an older standard
// stops here with one message instead of errors deep inside the headers.
// C, and C++ before C++20, can use the C API (devmesh/devmesh.h). GCC 10
// and Clang before 10 report 201709L/201707L for -std=c++2a, hence "> C++17".
// #error lets the compile go on, so every public header wraps its body in
// #if DEVMESH_CXX20: below C++20 the headers are then empty and the #error
// is their only message (tests/capi/expect_cxx17_refused.sh counts them).
#if defined(_MSVC_LANG) ? _MSVC_LANG <= 201703L : __cplusplus <= 201703L
#error "devmesh's C++ API needs C++20: compile with -std=c++20 (or use the C API, devmesh/devmesh.h)"
#define DEVMESH_CXX20 0
#else
#define DEVMESH_CXX20 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DEVMESH_API __attribute__((visibility("default")))
#else
#define DEVMESH_API
#endif
