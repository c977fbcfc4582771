// Experiment (2026-11-21): why does the probe's FP32 FMA kernel reach only ~86% of the per-clock
// FFMA rate, and can a read kernel beat 89.4% of 3.35 TB/s? Variants timed with events, median of 30.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

// V1: the probe's kernel: CHAINS chains, a and b kernel parameters
template <int CHAINS, int U>
__global__ void fma_params(float *out, float a, float b, int iters) {
    float v[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) v[c] = 1.0f + c * 0.125f + threadIdx.x * 1e-7f;
#pragma unroll U
    for (int i = 0; i < iters; ++i)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) v[c] = __fmaf_rn(v[c], a, b);
    float r = 0; for (int c = 0; c < CHAINS; ++c) r += v[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}
// V2: the multiplier is another chain's value (no shared operand between consecutive FFMAs)
template <int CHAINS, int U>
__global__ void fma_cross(float *out, float a, float b, int iters) {
    float v[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) v[c] = 1.0f + c * 0.125f + threadIdx.x * 1e-7f;
    float w = a;
#pragma unroll U
    for (int i = 0; i < iters; ++i)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) v[c] = __fmaf_rn(v[c], w, v[(c + 1) % CHAINS] * 0.0f + b);
    float r = 0; for (int c = 0; c < CHAINS; ++c) r += v[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}
template <int U>
__global__ void rd(const uint4 *__restrict__ a, size_t n, unsigned *out, int mode) {
    unsigned s = 0; const size_t st = (size_t)gridDim.x * blockDim.x; size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * st < n; i += U * st) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = mode == 0 ? a[i + u * st] : mode == 1 ? __ldcs(a + i + u * st) : __ldg(a + i + u * st);
#pragma unroll
        for (int u = 0; u < U; ++u) s += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += st) { uint4 v = a[i]; s += v.x ^ v.w; }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <typename F> double med(F f, int reps = 30) {
    cudaEvent_t x, y; cudaEventCreate(&x); cudaEventCreate(&y); std::vector<float> t;
    for (int i = 0; i < 3; ++i) f(); cudaDeviceSynchronize();
    for (int r = 0; r < reps; ++r) { cudaEventRecord(x); f(); cudaEventRecord(y); cudaEventSynchronize(y); float ms; cudaEventElapsedTime(&ms, x, y); t.push_back(ms); }
    std::sort(t.begin(), t.end()); return t[t.size() / 2] * 1e-3;
}
int main() {
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); int sms = p.multiProcessorCount;
    float *o; CK(cudaMalloc(&o, 4ull * sms * 32 * 1024));
    const int iters = 4096;
    auto run = [&](const char *name, auto kern, int chains, int threads, int blocks_per_sm) {
        int blocks = sms * blocks_per_sm;
        double t = med([&] { kern<<<blocks, threads>>>(o, 0.999f, 0.001f, iters); });
        cudaError_t e = cudaGetLastError(); if (e != cudaSuccess) { printf("%s: %s\n", name, cudaGetErrorString(e)); return; }
        double tf = 2.0 * chains * iters * (double)threads * blocks / t / 1e12;
        printf("fp32 %-34s threads %4d blocks/SM %2d: %6.2f TFLOP/s\n", name, threads, blocks_per_sm, tf);
    };
    run("params 8 chains unroll 1", fma_params<8, 1>, 8, 512, 8);
    run("params 8 chains unroll 16", fma_params<8, 16>, 8, 512, 8);
    run("params 8 chains unroll 4", fma_params<8, 4>, 8, 512, 8);
    run("params 16 chains unroll 4", fma_params<16, 4>, 16, 512, 8);
    run("params 4 chains unroll 8", fma_params<4, 8>, 4, 512, 8);
    run("params 8 chains unroll 4, 256 thr", fma_params<8, 4>, 8, 256, 16);
    run("params 8 chains unroll 4, 1024 thr", fma_params<8, 4>, 8, 1024, 4);
    run("cross 8 chains unroll 4", fma_cross<8, 4>, 8, 512, 8);
    size_t bytes = 8ull * p.l2CacheSize; size_t n = bytes / 16; uint4 *a; CK(cudaMalloc(&a, bytes)); CK(cudaMemset(a, 1, bytes));
    unsigned *part; CK(cudaMalloc(&part, 4ull * sms * 64 * 1024));
    const char *modes[] = {"plain", "__ldcs", "__ldg"};
    for (int mode = 0; mode < 3; ++mode) for (int threads : {256, 512, 1024}) for (int per : {4, 8, 16}) {
        int g = sms * per * 256 / threads; if (g < sms) continue;
        double t4 = med([&] { rd<4><<<g, threads>>>(a, n, part, mode); });
        double t8 = med([&] { rd<8><<<g, threads>>>(a, n, part, mode); });
        printf("read %-6s threads %4d blocks %5d: unroll4 %.3f TB/s  unroll8 %.3f TB/s\n", modes[mode], threads, g, bytes / t4 / 1e12, bytes / t8 / 1e12);
    }
    return 0;
}
