#pragma once
// What the shared libraries export. Areas are compiled with hidden visibility, so only what a
// public header declares is visible to programs; internals in src/ and in detail/ headers that
// are not opened with this macro stay inside the library. Public headers open their namespace
// as `namespace gpuforecast GPUFORECAST_API {`: a public header is API by definition, so the
// namespace body is exported whole instead of marking each of several hundred declarations
// (GCC and Clang apply a namespace's visibility attribute to that body only, so src/ reopening
// the namespace without it keeps its helpers hidden). tests/cmake checks every public header.
#if defined(__GNUC__) || defined(__clang__)
#define GPUFORECAST_API __attribute__((visibility("default")))
#else
#define GPUFORECAST_API
#endif
