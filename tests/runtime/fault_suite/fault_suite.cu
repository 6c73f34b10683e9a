// Kernels whose names tell the fake driver (tests/runtime/fake_driver.hpp) how to fail. On a
// real GPU they would not fail that way: this suite is for the fake only.
extern "C" __global__ void ok_kernel(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.0f * in[i];
}
extern "C" __global__ void crash_kernel(float* out, const float* in, int n) { out[0] = in[n]; }
extern "C" __global__ void hang_kernel(float* out, const float* in, int n) { while (n) out[0] += in[0]; }
extern "C" __global__ void wrong_kernel(float* out, const float* in, int n) { out[0] = 1; }
