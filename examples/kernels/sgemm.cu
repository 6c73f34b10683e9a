// Tiled single-precision GEMM, C = A * B, row-major, M x K times K x N (gpuforecast example
// kernel). Tunable (Kernel Tuner convention: every parameter arrives as a #define):
//   block_size_x, block_size_y  threads per block
//   tile_size_x, tile_size_y    outputs per thread along N and M (work per thread)
//   tile_k                      K-slice staged in shared memory per iteration
//   vector_width                1, 2 or 4: float, float2 or float4 loads of B and stores of C
//   unroll_k                    1: fully unroll the inner K loop; 0: keep it rolled
//   use_shared                  1: stage A and B tiles in shared memory; 0: read global directly
#define BM (block_size_y * tile_size_y)
#define BN (block_size_x * tile_size_x)
#define NUM_THREADS (block_size_x * block_size_y)

#if vector_width == 4
typedef float4 vec_t;
#elif vector_width == 2
typedef float2 vec_t;
#else
typedef float vec_t;
#endif

__device__ __forceinline__ void unpack(const vec_t v, float* out) {
#if vector_width == 4
  out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
#elif vector_width == 2
  out[0] = v.x; out[1] = v.y;
#else
  out[0] = v;
#endif
}

__device__ __forceinline__ vec_t pack(const float* in) {
#if vector_width == 4
  return make_float4(in[0], in[1], in[2], in[3]);
#elif vector_width == 2
  return make_float2(in[0], in[1]);
#else
  return in[0];
#endif
}

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int M, int N, int K) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[tile_size_y][tile_size_x];
#pragma unroll
  for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
    for (int j = 0; j < tile_size_x; ++j) acc[i][j] = 0.0f;

#if use_shared
  const int tid = ty * block_size_x + tx;
  __shared__ float As[tile_k][BM];                 // A transposed: As[k][m]
  __shared__ __align__(16) float Bs[tile_k][BN];
  for (int k0 = 0; k0 < K; k0 += tile_k) {
    for (int i = tid; i < BM * tile_k; i += NUM_THREADS) {
      const int m = i / tile_k, k = i % tile_k;
      const int row = row0 + m;
      As[k][m] = row < M ? A[(size_t)row * K + k0 + k] : 0.0f;
    }
    for (int i = tid; i < tile_k * (BN / vector_width); i += NUM_THREADS) {
      const int k = i / (BN / vector_width), n = (i % (BN / vector_width)) * vector_width;
      float v[vector_width];
      if (col0 + n < N) {
        unpack(*reinterpret_cast<const vec_t*>(&B[(size_t)(k0 + k) * N + col0 + n]), v);
      } else {
#pragma unroll
        for (int q = 0; q < vector_width; ++q) v[q] = 0.0f;
      }
#pragma unroll
      for (int q = 0; q < vector_width; ++q) Bs[k][n + q] = v[q];
    }
    __syncthreads();
#if unroll_k
#pragma unroll
#else
#pragma unroll 1
#endif
    for (int k = 0; k < tile_k; ++k) {
      float a[tile_size_y], b[tile_size_x];
#pragma unroll
      for (int i = 0; i < tile_size_y; ++i) a[i] = As[k][ty + i * block_size_y];
#pragma unroll
      for (int j = 0; j < tile_size_x; j += vector_width)
        unpack(*reinterpret_cast<const vec_t*>(&Bs[k][tx * tile_size_x + j]), &b[j]);
#pragma unroll
      for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
        for (int j = 0; j < tile_size_x; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#else
  const int col = col0 + tx * tile_size_x;
#if unroll_k
#pragma unroll 8
#else
#pragma unroll 1
#endif
  for (int k = 0; k < K; ++k) {
    float a[tile_size_y], b[tile_size_x];
#pragma unroll
    for (int i = 0; i < tile_size_y; ++i) {
      const int row = row0 + ty + i * block_size_y;
      a[i] = row < M ? A[(size_t)row * K + k] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < tile_size_x; j += vector_width) {
      if (col + j < N) {
        unpack(*reinterpret_cast<const vec_t*>(&B[(size_t)k * N + col + j]), &b[j]);
      } else {
#pragma unroll
        for (int q = 0; q < vector_width; ++q) b[j + q] = 0.0f;
      }
    }
#pragma unroll
    for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
      for (int j = 0; j < tile_size_x; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
#endif

#pragma unroll
  for (int i = 0; i < tile_size_y; ++i) {
    const int row = row0 + ty + i * block_size_y;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < tile_size_x; j += vector_width) {
      const int c = col0 + tx * tile_size_x + j;
      if (c < N) *reinterpret_cast<vec_t*>(&C[(size_t)row * N + c]) = pack(&acc[i][j]);
    }
  }
}
