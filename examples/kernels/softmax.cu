// Row softmax, out[r][c] = exp(in[r][c] - max_r) / sum_c exp(in[r][c] - max_r)
// (gpuforecast example kernel). block_size_x threads share a row; a block holds block_size_y
// rows. Tunable: block_size_x, block_size_y, vector_width (float/float2/float4 accesses),
// use_fast_exp (__expf instead of expf), online (one pass with a running max and rescaled
// sum, instead of separate max and sum passes).
#if vector_width == 4
typedef float4 vec_t;
#elif vector_width == 2
typedef float2 vec_t;
#else
typedef float vec_t;
#endif

#if use_fast_exp
#define EXP(x) __expf(x)
#else
#define EXP(x) expf(x)
#endif

__device__ __forceinline__ void unpack(const vec_t v, float* o) {
#if vector_width == 4
  o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
#elif vector_width == 2
  o[0] = v.x; o[1] = v.y;
#else
  o[0] = v;
#endif
}

// s * exp(m - mm), where a thread that saw no element (m = -inf) contributes nothing.
__device__ __forceinline__ float rescale(float s, float m, float mm) { return m == -__int_as_float(0x7f800000) ? 0.0f : s * EXP(m - mm); }

// Reduces (m, s) pairs of the block_size_x threads of this row: max m, sum of s rescaled to it.
__device__ __forceinline__ void row_reduce(float& m, float& s, float (*sm)[block_size_x > 32 ? block_size_x / 32 : 1],
                                           float (*ss)[block_size_x > 32 ? block_size_x / 32 : 1]) {
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
    const float mm = fmaxf(m, m2);
    s = rescale(s, m, mm) + rescale(s2, m2, mm);
    m = mm;
  }
#if block_size_x > 32
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sm[threadIdx.y][warp] = m, ss[threadIdx.y][warp] = s;
  __syncthreads();
  m = sm[threadIdx.y][0];
  s = 0.0f;
  for (int w = 1; w < block_size_x / 32; ++w) m = fmaxf(m, sm[threadIdx.y][w]);
  for (int w = 0; w < block_size_x / 32; ++w) s += rescale(ss[threadIdx.y][w], sm[threadIdx.y][w], m);
  __syncthreads();
#endif
}

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
softmax(float* __restrict__ out, const float* __restrict__ in, int rows, int cols) {
  __shared__ float sm[block_size_y][block_size_x > 32 ? block_size_x / 32 : 1];
  __shared__ float ss[block_size_y][block_size_x > 32 ? block_size_x / 32 : 1];
  const int row = blockIdx.x * block_size_y + threadIdx.y;
  const bool active = row < rows;
  const float* x = in + (size_t)(active ? row : 0) * cols;
  float m = -__int_as_float(0x7f800000), s = 0.0f;
#if online
  for (int c = threadIdx.x * vector_width; active && c < cols; c += block_size_x * vector_width) {
    float v[vector_width];
    unpack(*reinterpret_cast<const vec_t*>(&x[c]), v);
#pragma unroll
    for (int q = 0; q < vector_width; ++q) {
      const float mm = fmaxf(m, v[q]);
      s = rescale(s, m, mm) + EXP(v[q] - mm);
      m = mm;
    }
  }
#else
  for (int c = threadIdx.x * vector_width; active && c < cols; c += block_size_x * vector_width) {
    float v[vector_width];
    unpack(*reinterpret_cast<const vec_t*>(&x[c]), v);
#pragma unroll
    for (int q = 0; q < vector_width; ++q) m = fmaxf(m, v[q]);
  }
  {
    float ignored = 0.0f;
    row_reduce(m, ignored, sm, ss);  // max only: s terms are zero
  }
  for (int c = threadIdx.x * vector_width; active && c < cols; c += block_size_x * vector_width) {
    float v[vector_width];
    unpack(*reinterpret_cast<const vec_t*>(&x[c]), v);
#pragma unroll
    for (int q = 0; q < vector_width; ++q) s += EXP(v[q] - m);
  }
#endif
  row_reduce(m, s, sm, ss);
  if (!active) return;
  const float inv = 1.0f / s;
  float* y = out + (size_t)row * cols;
  for (int c = threadIdx.x * vector_width; c < cols; c += block_size_x * vector_width) {
    float v[vector_width];
    unpack(*reinterpret_cast<const vec_t*>(&x[c]), v);
#pragma unroll
    for (int q = 0; q < vector_width; ++q) y[c + q] = EXP(v[q] - m) * inv;
  }
}
