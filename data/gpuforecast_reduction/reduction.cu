// Sum of n floats into one double (gpuforecast example kernel). Each thread sums
// elements_per_thread values (vector_width at a time, grid-strided per block), the block reduces
// with warp shuffles or a shared-memory tree, and one atomicAdd per block adds the partial sum
// in double so that every configuration gives the same answer to rounding.
// Tunable: block_size_x, elements_per_thread, vector_width, use_shuffle, loop_unroll.
#if vector_width == 4
typedef float4 vec_t;
#elif vector_width == 2
typedef float2 vec_t;
#else
typedef float vec_t;
#endif

__device__ __forceinline__ float hsum(const vec_t v) {
#if vector_width == 4
  return (v.x + v.y) + (v.z + v.w);
#elif vector_width == 2
  return v.x + v.y;
#else
  return v;
#endif
}

extern "C" __global__ void __launch_bounds__(block_size_x)
reduce_sum(double* __restrict__ total, const float* __restrict__ in, int n) {
  const size_t base = (size_t)blockIdx.x * block_size_x * elements_per_thread;
  float s = 0.0f;
#if loop_unroll
#pragma unroll
#else
#pragma unroll 1
#endif
  for (int e = 0; e < elements_per_thread; e += vector_width) {
    // Consecutive threads read consecutive vectors: coalesced.
    const size_t i = base + (size_t)e * block_size_x + (size_t)threadIdx.x * vector_width;
    if (i + vector_width <= (size_t)n) s += hsum(*reinterpret_cast<const vec_t*>(&in[i]));
    else
      for (int q = 0; q < vector_width; ++q)
        if (i + q < (size_t)n) s += in[i + q];
  }
#if use_shuffle
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  __shared__ float warp_sums[block_size_x / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < block_size_x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) atomicAdd(total, (double)s);
  }
#else
  __shared__ float sh[block_size_x];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int stride = block_size_x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) sh[threadIdx.x] += sh[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, (double)sh[0]);
#endif
}
