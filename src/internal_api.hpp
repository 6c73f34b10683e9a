#pragma once
// What libgpuforecast.so exports beyond the public API, for the project's own programs only (the
// CLI in tools/, benchmarks linking gpuforecast::internal, the transformer library). Not
// installed, no stability promise: a user's program must not rely on it. The libraries are
// built with hidden visibility (gpuforecast/export.hpp), so an internal header whose functions
// those programs call opens its namespace as `namespace gpuforecast GPUFORECAST_INTERNAL_API {`;
// internal headers that only src/ uses stay hidden. Marked separately from GPUFORECAST_API so
// that a grep tells exactly which internals leave the library.
#if defined(__GNUC__) || defined(__clang__)
#define GPUFORECAST_INTERNAL_API __attribute__((visibility("default")))
#else
#define GPUFORECAST_INTERNAL_API
#endif
