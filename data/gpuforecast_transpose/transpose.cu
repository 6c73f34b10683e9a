// Matrix transpose, out (width x height) = in (height x width)^T (gpuforecast example kernel).
// A block moves a tile_dim x tile_dim tile with block_size_y rows of threads (each thread
// handles tile_dim / block_size_y elements). Tunable: tile_dim (= block_size_x),
// block_size_y, use_shared (stage through shared memory so that both reads and writes are
// coalesced), pad_shared (one extra column against bank conflicts).
#define TILE block_size_x

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
transpose(float* __restrict__ out, const float* __restrict__ in, int width, int height) {
  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y0 = blockIdx.y * TILE + threadIdx.y;
#if use_shared
  __shared__ float tile[TILE][TILE + pad_shared];
#pragma unroll
  for (int j = 0; j < TILE; j += block_size_y)
    if (x < width && y0 + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y0 + j) * width + x];
  __syncthreads();
  const int tx = blockIdx.y * TILE + threadIdx.x;  // column in out
  const int ty0 = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += block_size_y)
    if (tx < height && ty0 + j < width) out[(size_t)(ty0 + j) * height + tx] = tile[threadIdx.x][threadIdx.y + j];
#else
#pragma unroll
  for (int j = 0; j < TILE; j += block_size_y)
    if (x < width && y0 + j < height) out[(size_t)x * height + y0 + j] = in[(size_t)(y0 + j) * width + x];
#endif
}
